//! Stream aggregation: an SSE decoder plus per-format aggregators.

pub mod openai_chat;
pub mod sse;

pub use openai_chat::{OpenAiChatAggregator, ToolCall};
pub use sse::{SseDecoder, SseEvent};

use crate::errors::CoreError;

/// Format names accepted by [`StreamAggregator::new`].
pub const SUPPORTED_FORMATS: &[&str] = &["openai-chat"];

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

/// Raw bytes in, aggregated message out.
#[derive(Debug)]
pub struct StreamAggregator {
    decoder: SseDecoder,
    inner: OpenAiChatAggregator,
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
        Ok(Self {
            decoder: SseDecoder::new(),
            inner: OpenAiChatAggregator::new(),
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
                let outcome = self.inner.process_event(&ev);
                (ev, outcome)
            })
            .collect()
    }

    /// The aggregated state so far.
    pub fn state(&self) -> &OpenAiChatAggregator {
        &self.inner
    }
}
