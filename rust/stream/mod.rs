//! Stream aggregation: an SSE decoder plus per-format aggregators.

pub mod formats;
pub mod generic;
pub mod message;
pub mod openai_chat;
pub mod sse;

pub use generic::GenericAggregator;
pub use message::{normalize_finish_reason, Message};
pub use openai_chat::{OpenAiChatAggregator, ToolCall};
pub use sse::{SseDecoder, SseEvent};

use crate::errors::CoreError;

/// Format names accepted by [`StreamAggregator::new`].
pub const SUPPORTED_FORMATS: &[&str] = &[
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "ollama",
];

/// Quote a format name for messages: double quotes, with `\\` and `"` escaped (the pure-Python
/// twin's `_quote` does the same).
pub fn quote_format(name: &str) -> String {
    format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
}

/// What one dispatched event turned into.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A JSON chunk that was aggregated; its payload is the event's data.
    Chunk,
    /// `[DONE]`, or an event with empty data.
    Skipped,
    /// The event was rejected.
    Failed(CoreError),
}

/// The aggregation state of one stream, by format.
#[derive(Debug)]
pub enum Inner {
    /// `openai-chat` (targeted jiter pass per chunk).
    OpenAiChat(OpenAiChatAggregator),
    /// Every other format.
    Generic(GenericAggregator),
}

/// Raw bytes in, aggregated message out.
#[derive(Debug)]
pub struct StreamAggregator {
    decoder: SseDecoder,
    inner: Inner,
    format: &'static str,
}

impl StreamAggregator {
    /// A new aggregator; `format` must be one of [`SUPPORTED_FORMATS`].
    pub fn new(format: &str) -> Result<Self, CoreError> {
        let format = SUPPORTED_FORMATS
            .iter()
            .copied()
            .find(|f| *f == format)
            .ok_or_else(|| CoreError::UnknownFormat(format.to_string()))?;
        let inner = match GenericAggregator::new(format) {
            Some(g) => Inner::Generic(g),
            None => Inner::OpenAiChat(OpenAiChatAggregator::new()),
        };
        let decoder = if format == "ollama" {
            SseDecoder::ndjson()
        } else {
            SseDecoder::new()
        };
        Ok(Self {
            decoder,
            inner,
            format,
        })
    }

    /// The format name.
    pub fn format(&self) -> &'static str {
        self.format
    }

    /// Decode `data` and aggregate every completed event. Returns the events with their outcomes.
    pub fn feed(&mut self, data: &[u8]) -> Vec<(SseEvent, Outcome)> {
        let mut events = Vec::new();
        self.decoder.feed(data, &mut events);
        self.process(events)
    }

    /// Flush the last event if the stream did not end with a blank line. Idempotent.
    pub fn finish(&mut self) -> Vec<(SseEvent, Outcome)> {
        let mut events = Vec::new();
        self.decoder.finish(&mut events);
        self.process(events)
    }

    fn process(&mut self, events: Vec<SseEvent>) -> Vec<(SseEvent, Outcome)> {
        events
            .into_iter()
            .map(|ev| {
                let outcome = match &mut self.inner {
                    Inner::OpenAiChat(a) => a.process_event(&ev),
                    Inner::Generic(g) => g.process_event(&ev),
                };
                (ev, outcome)
            })
            .collect()
    }

    /// The aggregated state so far.
    pub fn inner(&self) -> &Inner {
        &self.inner
    }

    /// The aggregated state so far, mutable (to settle derived fields before reading a result).
    pub fn inner_mut(&mut self) -> &mut Inner {
        &mut self.inner
    }

    /// The openai-chat state (tests).
    #[cfg(test)]
    pub fn state(&self) -> &OpenAiChatAggregator {
        match &self.inner {
            Inner::OpenAiChat(a) => a,
            Inner::Generic(_) => panic!("not an openai-chat aggregator"),
        }
    }

    /// Number of chunks aggregated.
    pub fn chunks(&self) -> usize {
        match &self.inner {
            Inner::OpenAiChat(a) => a.chunks,
            Inner::Generic(g) => g.chunks,
        }
    }

    /// The first provider error seen.
    pub fn error(&self) -> Option<&CoreError> {
        match &self.inner {
            Inner::OpenAiChat(a) => a.error.as_ref(),
            Inner::Generic(g) => g.error.as_ref(),
        }
    }
}
