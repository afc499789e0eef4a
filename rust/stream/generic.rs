//! Event handling for the non-OpenAI-chat formats: validation, provider errors, dispatch.

use jiter::JsonValue;

use super::event::{bad_payload, invalid_json_reason, provider_error, too_deep, trim_ascii};
use super::formats::Format;
use super::message::Message;
use super::sse::SseEvent;
use super::Outcome;
use crate::errors::CoreError;

/// Aggregation state of one `anthropic` / `openai-responses` / `gemini` / `ollama` stream.
#[derive(Debug)]
pub struct GenericAggregator {
    /// The aggregated message.
    pub message: Message,
    /// Per-format state.
    pub format: Format,
    /// Number of events aggregated as chunks.
    pub chunks: usize,
    /// Number of events dispatched so far.
    pub events: usize,
    /// The first provider error seen.
    pub error: Option<CoreError>,
}

impl GenericAggregator {
    /// A new aggregator for `format` (`None` for unknown names and `openai-chat`).
    pub fn new(format: &str) -> Option<Self> {
        Some(Self {
            message: Message::default(),
            format: Format::new(format)?,
            chunks: 0,
            events: 0,
            error: None,
        })
    }

    /// Aggregate one dispatched event; values in its data may nest `max_depth` levels deep.
    pub fn process_event(&mut self, ev: &SseEvent, max_depth: usize) -> Outcome {
        self.events += 1;
        if ev.event == b"error" {
            return Outcome::Failed(provider_error(&mut self.error, ev));
        }
        let data = trim_ascii(ev.data);
        if data.is_empty() || data == b"[DONE]" {
            return Outcome::Skipped;
        }
        if std::str::from_utf8(ev.data).is_err() {
            return bad_payload(self.events, ev.data, "data is not valid UTF-8");
        }
        if crate::json::deeper_than(ev.data, max_depth).is_some() {
            return bad_payload(self.events, ev.data, &too_deep(max_depth));
        }
        if self.format.apply_raw(&mut self.message, ev.data) {
            self.chunks += 1;
            return Outcome::Chunk;
        }
        let value = match JsonValue::parse(ev.data, false) {
            Ok(v) => v,
            Err(_) => return bad_payload(self.events, ev.data, &invalid_json_reason(ev.data)),
        };
        let JsonValue::Object(obj) = &value else {
            return bad_payload(self.events, ev.data, "data is not a JSON object");
        };
        let is_error = !matches!(crate::json::get(obj, "error"), None | Some(JsonValue::Null));
        if is_error || !self.format.apply(&mut self.message, obj) {
            return Outcome::Failed(provider_error(&mut self.error, ev));
        }
        self.chunks += 1;
        Outcome::Chunk
    }

    /// No end marker and no finish reason seen.
    pub fn truncated(&self) -> bool {
        !self.message.done && self.message.finish_reason.is_none()
    }
}
