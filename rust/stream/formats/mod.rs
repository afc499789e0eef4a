//! Aggregators for `anthropic`, `openai-responses`, `gemini` and `ollama` events.
//!
//! The rules are those of the pure-Python twin, `toolweave._reference.stream.formats` (its package
//! docstring is the specification). Each `apply` folds one parsed event payload (a JSON object)
//! into a [`Message`] and returns `false` when the payload is a provider error.
//!
//! One file per format: `anthropic.rs`, `responses.rs` (`openai-responses`), `gemini.rs`,
//! `ollama.rs`; this module holds the per-format state and dispatches to them.

mod anthropic;
mod gemini;
mod ollama;
mod responses;

use std::collections::HashMap;

use jiter::JsonObject;
use serde_json::{Map, Value};

use super::anthropic_delta::{BlockDelta, Read};
use super::message::{compact, Message};
pub use anthropic::anthropic_blocks;
use anthropic::{anthropic, apply_block_delta};
use gemini::{gemini, GeminiState};
use ollama::ollama;
use responses::responses;

/// Per-format state.
#[derive(Debug)]
pub enum Format {
    /// Anthropic Messages API.
    Anthropic {
        /// Block position in `Message::blocks` by the stream's block index.
        by_index: HashMap<i64, usize>,
    },
    /// OpenAI Responses API.
    Responses {
        /// Call position by `output_index`.
        by_output: HashMap<i64, usize>,
    },
    /// Google Gemini `streamGenerateContent`.
    Gemini {
        /// Arguments of each call (parallel to `Message::calls`).
        args: Vec<Map<String, Value>>,
        /// The path whose string value continues, per call.
        paths: Vec<Option<String>>,
        /// The call a nameless `functionCall` continues.
        open: Option<usize>,
    },
    /// Ollama native `/api/chat`.
    Ollama,
}

impl Format {
    /// The state for a format name (`openai-chat` is handled elsewhere).
    pub fn new(name: &str) -> Option<Self> {
        Some(match name {
            "anthropic" => Format::Anthropic {
                by_index: HashMap::new(),
            },
            "openai-responses" => Format::Responses {
                by_output: HashMap::new(),
            },
            "gemini" => Format::Gemini {
                args: Vec::new(),
                paths: Vec::new(),
                open: None,
            },
            "ollama" => Format::Ollama,
            _ => return None,
        })
    }

    /// Fold one event payload in; `false` when it is a provider error.
    pub fn apply(&mut self, m: &mut Message, chunk: &JsonObject<'_>) -> bool {
        match self {
            Format::Anthropic { by_index } => anthropic(m, by_index, chunk),
            Format::Responses { by_output } => responses(m, by_output, chunk),
            Format::Gemini { args, paths, open } => {
                gemini(m, &mut GeminiState { args, paths, open }, chunk);
                true
            }
            Format::Ollama => {
                ollama(m, chunk);
                true
            }
        }
    }

    /// Fold an event in straight from its payload when a targeted pass can (Anthropic
    /// `content_block_delta`, see [`BlockDelta`]); `false` when the general path must parse it.
    pub fn apply_raw(&mut self, m: &mut Message, data: &[u8]) -> bool {
        let Format::Anthropic { by_index } = self else {
            return false;
        };
        match BlockDelta::read(data) {
            Read::Delta(d) => apply_block_delta(m, by_index, &d),
            Read::Ignored => {}
            Read::Other => return false,
        }
        true
    }

    /// Settle derived fields before a result is built (Gemini arguments and ids, Ollama ids).
    pub fn finalize(&self, m: &mut Message) {
        match self {
            Format::Gemini { args, .. } => {
                let id = m.id.clone();
                for (call, a) in m.calls.iter_mut().zip(args) {
                    call.final_args = Some(compact(&Value::Object(a.clone())));
                    if call.id.is_empty() {
                        call.id = match &id {
                            Some(r) => format!("{r}-call-{}", call.index),
                            None => format!("call-{}", call.index),
                        };
                    }
                }
            }
            Format::Ollama => {
                for call in &mut m.calls {
                    if call.id.is_empty() {
                        call.id = format!("call-{}", call.index);
                    }
                }
            }
            _ => {}
        }
    }
}
