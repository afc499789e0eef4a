//! Aggregator for OpenAI chat-completions chunks (`chat.completion.chunk`), also spoken by Groq,
//! DeepSeek, Mistral, xAI, Ollama's and llama.cpp's OpenAI-compatible endpoints.
//!
//! Each chunk is read with a targeted `jiter` pass: only the fields we aggregate are decoded, the
//! rest is validated and skipped. A chunk that differs from the last eligible parsed one only in
//! its text, reasoning or argument string is read through a [`Template`](crate::stream::template::Template) instead (two byte
//! comparisons and one string decode; same result). Only choice index 0 is aggregated (a choice without `index`
//! counts as 0). Within one chunk a repeated key behaves like a Python dict: the last one wins.
//!
//! Tool-call fragments merge by `index` (0 is a real index). Only a JSON integer in
//! `0..=2**63-1` is an index; anything else (negative, larger, a float, a string, `null`) counts as
//! no index. A fragment whose non-empty `id` differs from the id of the call its index holds is
//! another call (Ollama's `/v1` sends every parallel call at index 0, each with its own id): the
//! call with that id if one is known, else a new call; the index then goes to that call. A
//! fragment without an index merges by `id` when that id is known, starts a new call when its id
//! is new, and continues the most recently started call when it has no id. A call started without
//! its own index gets the largest index so far plus one (0 for the first call), or, when that
//! would overflow, the smallest non-negative index not in use; so indices stay unique.
//! `id`, `type` and `name` come from the first fragment with a non-empty value; `arguments` are
//! concatenated. Calls are reported in order of index. A call that never got an id gets a
//! synthesised one ([`synthetic_call_id`]). Lookups by index and id are hashed: merging is linear
//! in the number of fragments.
//!
//! The tool-call merging rules are [`ChoiceState`]'s (`choice.rs`); the chunk reading is
//! `chunk.rs`.

mod choice;
mod chunk;

use std::collections::BTreeMap;

pub use choice::{synthetic_call_id, ChoiceState, ToolCall};
use chunk::{parse_chunk, Chunk, Shape};

use super::event::{invalid_json_reason, payload_excerpt, provider_error, too_deep, trim_ascii};
use super::sse::SseEvent;
use super::Outcome;
use crate::errors::{show, CoreError};

/// The aggregation state of one OpenAI chat-completions stream.
#[derive(Debug, Default)]
pub struct OpenAiChatAggregator {
    /// First non-empty top-level `id`.
    pub id: Option<String>,
    /// First non-empty top-level `model`.
    pub model: Option<String>,
    /// Choice 0 (or a choice without `index`).
    pub main: ChoiceState,
    /// Choices with another index (`n > 1`), kept apart.
    pub others: BTreeMap<i64, ChoiceState>,
    /// JSON text of the last non-null top-level `usage` object.
    pub usage: Option<Vec<u8>>,
    /// `data: [DONE]` was seen.
    pub done: bool,
    /// Number of data events aggregated as chunks.
    pub chunks: usize,
    /// Number of events dispatched so far (used to number events in errors).
    pub events: usize,
    /// The first provider error seen.
    pub error: Option<CoreError>,
    /// The last fully parsed chunk that can serve as a [`Template`].
    shape: Option<Shape>,
}

impl OpenAiChatAggregator {
    /// An empty aggregation.
    pub fn new() -> Self {
        Self::default()
    }

    /// Aggregate one dispatched SSE event; values in its data may nest `max_depth` levels deep.
    pub fn process_event(&mut self, ev: &SseEvent, max_depth: usize) -> Outcome {
        self.events += 1;
        if ev.event == b"error" {
            return Outcome::Failed(self.provider_error(ev));
        }
        let data = trim_ascii(ev.data);
        if data.is_empty() {
            return Outcome::Skipped;
        }
        if data == b"[DONE]" {
            self.done = true;
            return Outcome::Skipped;
        }
        let bad = |what: &str| {
            let excerpt = payload_excerpt(ev.data);
            let message = format!("event {}: {what}: '{}'", self.events, show(&excerpt));
            Outcome::Failed(CoreError::StreamFormat {
                message,
                event: self.events,
                excerpt,
            })
        };
        if std::str::from_utf8(ev.data).is_err() {
            return bad("data is not valid UTF-8");
        }
        // A template match has the structure of a chunk that passed the depth check.
        if let Some(shape) = &self.shape {
            if let Some(value) = shape.template.read(ev.data) {
                let chunk = shape.chunk(value.into_owned());
                self.apply(chunk, ev.data);
                return Outcome::Chunk;
            }
        }
        // Also at the default limit: jiter's skipping allows one level more than its parser.
        if crate::json::deeper_than(ev.data, max_depth).is_some() {
            return bad(&too_deep(max_depth));
        }
        match parse_chunk(ev.data, self.id.is_none() || self.model.is_none()) {
            Ok(Some(chunk)) if chunk.error => Outcome::Failed(self.provider_error(ev)),
            Ok(Some(chunk)) => {
                if let Some(shape) = Shape::of(&chunk, ev.data) {
                    self.shape = Some(shape);
                }
                self.apply(chunk, ev.data);
                Outcome::Chunk
            }
            Ok(None) => bad("data is not a JSON object"),
            Err(_) => bad(&invalid_json_reason(ev.data)),
        }
    }

    fn provider_error(&mut self, ev: &SseEvent) -> CoreError {
        provider_error(&mut self.error, ev)
    }

    fn apply(&mut self, chunk: Chunk, data: &[u8]) {
        self.chunks += 1;
        if self.id.is_none() {
            self.id = chunk.id.filter(|s| !s.is_empty());
        }
        if self.model.is_none() {
            self.model = chunk.model.filter(|s| !s.is_empty());
        }
        if let Some(r) = chunk.usage {
            self.usage = Some(data[r].to_vec());
        }
        let stream_id = self.id.as_deref().unwrap_or_default();
        for (index, choice) in chunk.choices {
            if index == 0 {
                self.main.apply_choice(choice, stream_id);
            } else {
                self.others
                    .entry(index)
                    .or_default()
                    .apply_choice(choice, stream_id);
            }
        }
    }

    /// The call type to report: the provider's, or `function`.
    pub fn call_kind(call: &ToolCall) -> &str {
        if call.kind.is_empty() {
            "function"
        } else {
            &call.kind
        }
    }

    /// No `[DONE]` and no finish reason seen.
    pub fn truncated(&self) -> bool {
        !self.done && self.main.finish_reason.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::super::StreamAggregator;
    use super::*;

    fn run(stream: &[u8]) -> (StreamAggregator, Vec<Outcome>) {
        let mut agg = StreamAggregator::new("openai-chat").unwrap();
        let outcomes = agg.outcomes(stream);
        (agg, outcomes)
    }

    #[test]
    fn aggregates_text_tools_usage() {
        let stream = concat!(
            "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\",\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"r\",\"tool_calls\":[{\"index\":0,\"id\":\"\",\"function\":{\"name\":\"\",\"arguments\":\":1}\"}},{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"g\"}}]},\"finish_reason\":\"tool_calls\"},{\"index\":1,\"delta\":{\"content\":\"ignored\"}}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3}}\n\n",
            "data: [DONE]\n\n",
        );
        let (agg, outcomes) = run(stream.as_bytes());
        assert_eq!(
            outcomes,
            vec![
                Outcome::Chunk,
                Outcome::Chunk,
                Outcome::Chunk,
                Outcome::Skipped
            ]
        );
        let s = agg.state();
        let m = &s.main;
        assert_eq!(s.id.as_deref(), Some("c1"));
        assert_eq!(m.text, "Hi");
        assert_eq!(m.reasoning.as_deref(), Some("r"));
        assert_eq!(m.tool_calls.len(), 2);
        assert_eq!(m.tool_calls[0].arguments, "{\"x\":1}");
        assert_eq!(m.tool_calls[0].name, "f");
        assert_eq!(m.tool_calls[1].name, "g");
        assert_eq!(m.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(s.usage.as_deref(), Some(&b"{\"prompt_tokens\":3}"[..]));
        assert!(!s.truncated());
        assert_eq!(s.chunks, 3);
    }

    #[test]
    fn fragments_without_index() {
        let stream = concat!(
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":null,\"id\":\"X\",\"function\":{\"name\":\"w\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"\",\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"Y\",\"function\":{\"name\":\"v\"}}]}}]}\n\n",
        );
        let (agg, _) = run(stream.as_bytes());
        let calls = &agg.state().main.tool_calls;
        assert_eq!(calls.len(), 2);
        assert_eq!((calls[0].index, calls[0].arguments.as_str()), (0, "{}"));
        assert_eq!((calls[1].index, calls[1].id.as_str()), (1, "Y"));
        assert!(agg.state().truncated());
    }

    #[test]
    fn errors() {
        let (agg, outcomes) = run(b"data: {\"a\": tru}\n\ndata: [1]\n\nevent: error\ndata: {\"error\":{\"message\":\"boom\"}}\n\ndata: {\"error\":\"x\"}");
        assert!(matches!(
            &outcomes[0],
            Outcome::Failed(CoreError::StreamFormat { event: 1, .. })
        ));
        assert!(matches!(
            &outcomes[1],
            Outcome::Failed(CoreError::StreamFormat { event: 2, .. })
        ));
        assert!(
            matches!(&outcomes[2], Outcome::Failed(CoreError::Provider { message, .. }) if message == "boom")
        );
        assert!(
            matches!(&outcomes[3], Outcome::Failed(CoreError::Provider { message, .. }) if message == "x")
        );
        assert!(
            matches!(&agg.state().error, Some(CoreError::Provider { message, .. }) if message == "boom")
        );
        assert_eq!(agg.state().chunks, 0);
    }

    #[test]
    fn invalid_utf8_payload() {
        let (_, outcomes) = run(b"data: {\"a\": \"\xff\"}\n\n");
        assert!(matches!(
            &outcomes[0],
            Outcome::Failed(CoreError::StreamFormat { .. })
        ));
    }

    #[test]
    fn unknown_format() {
        assert!(matches!(
            StreamAggregator::new("bedrock"),
            Err(CoreError::UnknownFormat(_))
        ));
    }

    fn calls(fragments: &str) -> Vec<(i64, String, String)> {
        let body =
            format!("data: {{\"choices\":[{{\"delta\":{{\"tool_calls\":[{fragments}]}}}}]}}\n\n");
        let (agg, outcomes) = run(body.as_bytes());
        assert_eq!(outcomes, vec![Outcome::Chunk]);
        agg.state()
            .main
            .tool_calls
            .iter()
            .map(|c| (c.index, c.id.clone(), c.arguments.clone()))
            .collect()
    }

    fn call(index: i64, id: &str, arguments: &str) -> (i64, String, String) {
        (index, id.to_string(), arguments.to_string())
    }

    #[test]
    fn only_non_negative_i64_is_an_index() {
        for index in ["-1", "9223372036854775808", "1.0", "\"1\"", "null"] {
            let got = calls(&format!(
                "{{\"index\":{index},\"id\":\"a\",\"function\":{{\"arguments\":\"1\"}}}},\
                 {{\"index\":{index},\"id\":\"b\"}},{{\"index\":{index},\"id\":\"a\",\"function\":{{\"arguments\":\"2\"}}}}"
            ));
            assert_eq!(got, vec![call(0, "a", "12"), call(1, "b", "")], "{index}");
        }
    }

    #[test]
    fn unindexed_call_after_max_index_gets_a_free_index() {
        let got = calls(
            "{\"index\":9223372036854775807,\"id\":\"a\"},{\"index\":1,\"id\":\"b\"},\
             {\"id\":\"c\"},{\"id\":\"d\"},{\"index\":0,\"function\":{\"arguments\":\"x\"}}",
        );
        assert_eq!(
            got,
            vec![
                call(i64::MAX, "a", ""),
                call(1, "b", ""),
                call(0, "c", "x"),
                call(2, "d", ""),
            ]
        );
    }

    #[test]
    fn many_new_ids_merge_in_linear_time() {
        // 4x the calls must cost well under 16x the time (quadratic); a ratio of best-of-3 runs, not a
        // wall-clock bound, so a loaded machine slows both sides alike
        let best = |n: usize| {
            let frags: Vec<String> = (0..n).map(|i| format!("{{\"id\":\"c{i}\"}}")).collect();
            let text = frags.join(",");
            (0..3)
                .map(|_| {
                    let start = std::time::Instant::now();
                    let got = calls(&text);
                    let elapsed = start.elapsed();
                    assert_eq!(got.len(), n);
                    assert_eq!(got[n - 1], call(n as i64 - 1, &format!("c{}", n - 1), ""));
                    elapsed
                })
                .min()
                .unwrap_or_default()
        };
        let (small, large) = (best(25_000), best(100_000));
        assert!(
            large < small * 10,
            "{large:?} for 100k ids vs {small:?} for 25k: not linear"
        );
    }

    #[test]
    fn huge_number_is_a_stream_format_error() {
        let body = format!("data: {{\"x\":{}}}\n\n", "9".repeat(4301));
        let (_, outcomes) = run(body.as_bytes());
        assert!(matches!(
            &outcomes[0],
            Outcome::Failed(CoreError::StreamFormat { message, .. })
                if message.starts_with("event 1: data has a number too large (more than 4300 integer digits)")
        ));
    }
}
