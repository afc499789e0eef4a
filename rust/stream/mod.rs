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

use std::ops::Range;

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

/// Bounds on what a stream may make the aggregator hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest event (its data, or a pending line) in bytes.
    pub max_event_bytes: usize,
    /// Largest total number of bytes fed.
    pub max_total_bytes: usize,
    /// Decode invalid UTF-8 in event data with U+FFFD instead of rejecting the event.
    pub replace_invalid_utf8: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_event_bytes: 16 << 20,
            max_total_bytes: 256 << 20,
            replace_invalid_utf8: false,
        }
    }
}

fn too_large(what: &str, size: usize, limit: &str, max: usize) -> Outcome {
    Outcome::Failed(CoreError::StreamFormat {
        message: format!("{what} of {size} bytes is larger than {limit} ({max})"),
        event: 0,
        excerpt: String::new(),
    })
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
    limits: Limits,
    total: usize,
    /// Record the text and reasoning each chunk added (for `feed_deltas`).
    pub record_deltas: bool,
    /// `(text, reasoning)` byte ranges added by each chunk that added either, while recording.
    pub deltas: Vec<(Range<usize>, Range<usize>)>,
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
            limits: Limits::default(),
            total: 0,
            record_deltas: false,
            deltas: Vec::new(),
        })
    }

    /// The format name.
    pub fn format(&self) -> &'static str {
        self.format
    }

    /// Decode `data` and aggregate every completed event. Returns the events with their outcomes.
    pub fn feed(&mut self, data: &[u8]) -> Vec<(SseEvent, Outcome)> {
        let max_total = self.limits.max_total_bytes;
        self.total = self.total.saturating_add(data.len());
        if self.total > max_total {
            let outcome = too_large("stream", self.total, "max_total_bytes", max_total);
            return vec![(SseEvent::default(), outcome)];
        }
        let mut events = Vec::new();
        self.decoder.feed(data, &mut events);
        let mut out = self.process(events);
        let pending = self.decoder.buffered();
        if pending > self.limits.max_event_bytes {
            self.decoder.discard_event();
            let outcome = too_large(
                "event",
                pending,
                "max_event_bytes",
                self.limits.max_event_bytes,
            );
            out.push((SseEvent::default(), outcome));
        }
        out
    }

    /// Set the limits (before feeding).
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
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
            .map(|mut ev| {
                if ev.data.len() > self.limits.max_event_bytes {
                    let outcome = too_large(
                        "event",
                        ev.data.len(),
                        "max_event_bytes",
                        self.limits.max_event_bytes,
                    );
                    ev.data.clear();
                    return (ev, outcome);
                }
                if self.limits.replace_invalid_utf8 && std::str::from_utf8(&ev.data).is_err() {
                    ev.data = String::from_utf8_lossy(&ev.data).into_owned().into_bytes();
                }
                let before = self.record_deltas.then(|| self.lens());
                let outcome = match &mut self.inner {
                    Inner::OpenAiChat(a) => a.process_event(&ev),
                    Inner::Generic(g) => g.process_event(&ev),
                };
                if let (Some((t0, r0)), Outcome::Chunk) = (before, &outcome) {
                    let (t1, r1) = self.lens();
                    if t1 > t0 || r1 > r0 {
                        self.deltas.push((t0..t1, r0..r1));
                    }
                }
                (ev, outcome)
            })
            .collect()
    }

    /// Lengths of the aggregated text and reasoning (choice 0).
    pub fn lens(&self) -> (usize, usize) {
        let (text, reasoning) = self.text_and_reasoning();
        (text.len(), reasoning.len())
    }

    /// The aggregated text and reasoning (choice 0; reasoning `""` when none).
    pub fn text_and_reasoning(&self) -> (&str, &str) {
        match &self.inner {
            Inner::OpenAiChat(a) => (&a.main.text, a.main.reasoning.as_deref().unwrap_or("")),
            Inner::Generic(g) => (
                &g.message.text,
                g.message.reasoning.as_deref().unwrap_or(""),
            ),
        }
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
