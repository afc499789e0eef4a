//! Stream aggregation: an SSE decoder plus per-format aggregators.

pub mod anthropic_delta;
pub mod event;
pub mod formats;
pub mod generic;
pub mod message;
pub mod openai_chat;
pub mod result;
pub mod scan;
pub mod sse;
pub mod template;

pub use generic::GenericAggregator;
pub use message::{normalize_finish_reason, Message};
pub use openai_chat::{OpenAiChatAggregator, ToolCall};
pub use result::{CallResult, ChoiceResult, StreamResult};
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

/// The error for a format name that is not one of [`SUPPORTED_FORMATS`].
#[must_use]
pub fn unknown_format(name: &str) -> CoreError {
    CoreError::UnknownFormat(format!(
        "unknown stream format {}; supported: {}",
        quote_format(name),
        SUPPORTED_FORMATS.join(", ")
    ))
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
    /// Deepest nesting of a value in an event's data (at most [`crate::json::MAX_DEPTH`]).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_event_bytes: 16 << 20,
            max_total_bytes: 256 << 20,
            replace_invalid_utf8: false,
            max_depth: crate::json::MAX_DEPTH,
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

/// The aggregation state of one stream, by format (one per stream: the variants' sizes do not
/// matter).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Inner {
    /// `openai-chat` (targeted jiter pass per chunk).
    OpenAiChat(OpenAiChatAggregator),
    /// Every other format.
    Generic(GenericAggregator),
}

impl Inner {
    /// The aggregated text and reasoning (choice 0; reasoning `""` when none).
    pub fn text_and_reasoning(&self) -> (&str, &str) {
        match self {
            Inner::OpenAiChat(a) => (&a.main.text, a.main.reasoning.as_deref().unwrap_or("")),
            Inner::Generic(g) => (
                &g.message.text,
                g.message.reasoning.as_deref().unwrap_or(""),
            ),
        }
    }

    /// Byte lengths of [`Inner::text_and_reasoning`].
    pub fn lens(&self) -> (usize, usize) {
        let (text, reasoning) = self.text_and_reasoning();
        (text.len(), reasoning.len())
    }
}

/// Check one event against the limits, aggregate it and hand it to `sink` with its outcome (its
/// data repaired when invalid UTF-8 is replaced); with `deltas`, record the text and reasoning
/// byte ranges it added.
fn process(
    inner: &mut Inner,
    limits: &Limits,
    deltas: Option<&mut Vec<(Range<usize>, Range<usize>)>>,
    ev: SseEvent<'_>,
    sink: &mut impl FnMut(SseEvent<'_>, Outcome),
) {
    if ev.data.len() > limits.max_event_bytes {
        let outcome = too_large(
            "event",
            ev.data.len(),
            "max_event_bytes",
            limits.max_event_bytes,
        );
        return sink(SseEvent::default(), outcome);
    }
    let repaired;
    let ev = if limits.replace_invalid_utf8 && std::str::from_utf8(ev.data).is_err() {
        repaired = String::from_utf8_lossy(ev.data).into_owned();
        SseEvent {
            event: ev.event,
            data: repaired.as_bytes(),
        }
    } else {
        ev
    };
    let before = deltas.is_some().then(|| inner.lens());
    let outcome = match inner {
        Inner::OpenAiChat(a) => a.process_event(&ev, limits.max_depth),
        Inner::Generic(g) => g.process_event(&ev, limits.max_depth),
    };
    if let (Some(deltas), Some((t0, r0)), Outcome::Chunk) = (deltas, before, &outcome) {
        let (t1, r1) = inner.lens();
        if t1 > t0 || r1 > r0 {
            deltas.push((t0..t1, r0..r1));
        }
    }
    sink(ev, outcome);
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
            .ok_or_else(|| unknown_format(format))?;
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

    /// Decode `data` and aggregate every completed event, calling `sink` with each event and its
    /// outcome, in order (a limit breach is reported with an empty event).
    pub fn feed(&mut self, data: &[u8], sink: &mut impl FnMut(SseEvent<'_>, Outcome)) {
        let max_total = self.limits.max_total_bytes;
        self.total = self.total.saturating_add(data.len());
        if self.total > max_total {
            sink(
                SseEvent::default(),
                too_large("stream", self.total, "max_total_bytes", max_total),
            );
            return;
        }
        let (inner, limits, deltas) = (&mut self.inner, &self.limits, &mut self.deltas);
        let mut record = self.record_deltas.then_some(deltas);
        self.decoder.feed(data, &mut |ev| {
            process(inner, limits, record.as_deref_mut(), ev, sink);
        });
        let pending = self.decoder.buffered();
        if pending > self.limits.max_event_bytes {
            self.decoder.discard_event();
            let outcome = too_large(
                "event",
                pending,
                "max_event_bytes",
                self.limits.max_event_bytes,
            );
            sink(SseEvent::default(), outcome);
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Set the limits (before feeding).
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Flush the last event if the stream did not end with a blank line. Idempotent. Reports
    /// like [`StreamAggregator::feed`].
    pub fn finish(&mut self, sink: &mut impl FnMut(SseEvent<'_>, Outcome)) {
        let (inner, limits, deltas) = (&mut self.inner, &self.limits, &mut self.deltas);
        let mut record = self.record_deltas.then_some(deltas);
        self.decoder.finish(&mut |ev| {
            process(inner, limits, record.as_deref_mut(), ev, sink);
        });
    }

    /// The aggregated text and reasoning (choice 0; reasoning `""` when none).
    pub fn text_and_reasoning(&self) -> (&str, &str) {
        self.inner.text_and_reasoning()
    }

    /// The aggregated state so far.
    pub fn inner(&self) -> &Inner {
        &self.inner
    }

    /// The aggregated state so far, mutable (to settle derived fields before reading a result).
    pub fn inner_mut(&mut self) -> &mut Inner {
        &mut self.inner
    }

    /// Feed `data`, then finish, collecting the outcomes (tests).
    #[cfg(test)]
    pub fn outcomes(&mut self, data: &[u8]) -> Vec<Outcome> {
        let mut out = Vec::new();
        self.feed(data, &mut |_, o| out.push(o));
        self.finish(&mut |_, o| out.push(o));
        out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_format_names_supported() {
        assert_eq!(
            unknown_format("x").to_string(),
            "unknown stream format \"x\"; supported: openai-chat, openai-responses, anthropic, gemini, ollama"
        );
    }
}
