//! The aggregated result of a stream, in one shape for every format (Python:
//! `StreamAggregator.result()`, a dict with these keys; twin: `toolweave._reference.stream`).

use std::borrow::Cow;

use serde_json::Value;

use super::formats::anthropic_blocks;
use super::message::normalize_finish_reason;
use super::openai_chat::{ChoiceState, OpenAiChatAggregator};
use super::{Inner, StreamAggregator};

/// One aggregated tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult<'a> {
    /// The provider's index of the call (openai-chat), or its position.
    pub index: i64,
    /// The call id (a synthetic one when the provider sent none, see `synthetic_call_id`).
    pub id: &'a str,
    /// The call type (`function` unless the provider said otherwise).
    pub kind: &'a str,
    /// The tool name.
    pub name: &'a str,
    /// The argument text (whole arguments win over the fragments).
    pub arguments: &'a str,
    /// Format-specific extra string fields (`item_id`, `thought_signature`).
    pub extra: &'a [(&'static str, Option<String>)],
}

/// Another choice than the first (openai-chat with `n` > 1).
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceResult<'a> {
    /// The choice's index.
    pub index: i64,
    /// Its text.
    pub text: &'a str,
    /// Its reasoning, `None` when none arrived.
    pub reasoning: Option<&'a str>,
    /// Its tool calls in order of index.
    pub tool_calls: Vec<CallResult<'a>>,
    /// Its finish reason.
    pub finish_reason: Option<&'a str>,
}

/// The aggregated result (choice 0 for openai-chat, the others in `choices`).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamResult<'a> {
    /// The format name.
    pub format: &'static str,
    /// The first non-empty response id.
    pub id: Option<&'a str>,
    /// The first non-empty model name.
    pub model: Option<&'a str>,
    /// The text.
    pub text: &'a str,
    /// The reasoning, `None` when none arrived.
    pub reasoning: Option<&'a str>,
    /// The tool calls in order.
    pub tool_calls: Vec<CallResult<'a>>,
    /// The provider's finish reason.
    pub finish_reason: Option<&'a str>,
    /// The finish reason in Spring AI's vocabulary ([`normalize_finish_reason`]).
    pub normalized_finish_reason: Option<String>,
    /// The provider's usage object as compact JSON text, `None` when none arrived.
    pub usage: Option<Cow<'a, [u8]>>,
    /// No end marker and no finish reason seen.
    pub truncated: bool,
    /// Number of chunks aggregated.
    pub chunks: usize,
    /// Anthropic content blocks (empty for other formats).
    pub blocks: Vec<Value>,
    /// The choices after the first (openai-chat only).
    pub choices: Vec<ChoiceResult<'a>>,
}

fn openai_calls(m: &ChoiceState) -> Vec<CallResult<'_>> {
    m.order()
        .into_iter()
        .map(|slot| {
            let c = &m.tool_calls[slot];
            CallResult {
                index: c.index,
                id: c.reported_id(),
                kind: OpenAiChatAggregator::call_kind(c),
                name: &c.name,
                arguments: &c.arguments,
                extra: &[],
            }
        })
        .collect()
}

impl StreamAggregator {
    /// The aggregated result so far (settles derived fields first: Gemini arguments and ids,
    /// Ollama ids).
    pub fn result(&mut self) -> StreamResult<'_> {
        let format = self.format();
        match self.inner_mut() {
            Inner::OpenAiChat(s) => {
                let m = &s.main;
                StreamResult {
                    format,
                    id: s.id.as_deref(),
                    model: s.model.as_deref(),
                    text: &m.text,
                    reasoning: m.reasoning.as_deref(),
                    tool_calls: openai_calls(m),
                    finish_reason: m.finish_reason.as_deref(),
                    normalized_finish_reason: normalize_finish_reason(
                        format,
                        m.finish_reason.as_deref(),
                        !m.tool_calls.is_empty(),
                    ),
                    usage: s.usage.as_deref().map(Cow::Borrowed),
                    truncated: s.truncated(),
                    chunks: s.chunks,
                    blocks: Vec::new(),
                    choices: s
                        .others
                        .iter()
                        .map(|(index, c)| ChoiceResult {
                            index: *index,
                            text: &c.text,
                            reasoning: c.reasoning.as_deref(),
                            tool_calls: openai_calls(c),
                            finish_reason: c.finish_reason.as_deref(),
                        })
                        .collect(),
                }
            }
            Inner::Generic(g) => {
                g.format.finalize(&mut g.message);
                let m = &g.message;
                StreamResult {
                    format,
                    id: m.id.as_deref(),
                    model: m.model.as_deref(),
                    text: &m.text,
                    reasoning: m.reasoning.as_deref(),
                    tool_calls: m
                        .calls
                        .iter()
                        .map(|c| CallResult {
                            index: c.index,
                            id: &c.id,
                            kind: "function",
                            name: &c.name,
                            arguments: c.arguments(),
                            extra: &c.extra,
                        })
                        .collect(),
                    finish_reason: m.finish_reason.as_deref(),
                    normalized_finish_reason: normalize_finish_reason(
                        format,
                        m.finish_reason.as_deref(),
                        !m.calls.is_empty(),
                    ),
                    usage: m
                        .usage
                        .as_ref()
                        .map(|u| Cow::Owned(serde_json::to_vec(u).unwrap_or_default())),
                    truncated: g.truncated(),
                    chunks: g.chunks,
                    blocks: if format == "anthropic" {
                        anthropic_blocks(m)
                    } else {
                        Vec::new()
                    },
                    choices: Vec::new(),
                }
            }
        }
    }

    /// The argument text of tool call `i` (in result order) so far, whether it came whole (a
    /// `done` event, Gemini or Ollama objects: nothing more will be added), and its slot (the
    /// place of its partial parser), or `None` when there is no such call.
    pub fn call_arguments(&mut self, i: usize) -> Option<(&str, bool, usize)> {
        match self.inner_mut() {
            Inner::OpenAiChat(s) => s
                .main
                .call_at(i)
                .map(|(slot, c)| (c.arguments.as_str(), false, slot)),
            Inner::Generic(g) => {
                g.format.finalize(&mut g.message);
                g.message
                    .calls
                    .get(i)
                    .map(|c| (c.arguments(), c.final_args.is_some(), i))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(format: &str, data: &[u8]) -> StreamAggregator {
        let mut agg = StreamAggregator::new(format).unwrap();
        agg.feed(data, &mut |_, _| {});
        agg.finish(&mut |_, _| {});
        agg
    }

    #[test]
    fn openai_chat_result_with_choices_and_calls() {
        let data = concat!(
            "data: {\"id\":\"r1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\",",
            "\"tool_calls\":[{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}},",
            "{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}}]}},",
            "{\"index\":1,\"delta\":{\"content\":\"Yo\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\": 1}\"}}]},",
            "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":3}}\n\n",
            "data: [DONE]\n\n"
        );
        let mut agg = fed("openai-chat", data.as_bytes());
        let r = agg.result();
        assert_eq!(
            (r.format, r.id, r.model, r.text),
            ("openai-chat", Some("r1"), Some("m"), "Hi")
        );
        let calls: Vec<_> = r
            .tool_calls
            .iter()
            .map(|c| (c.index, c.id, c.kind, c.name, c.arguments))
            .collect();
        assert_eq!(
            calls,
            [
                (0, "a", "function", "f", "{\"x\": 1}"),
                (1, "b", "function", "g", "{}")
            ]
        );
        assert_eq!(
            (r.finish_reason, r.normalized_finish_reason.as_deref()),
            (Some("tool_calls"), Some("tool_calls"))
        );
        assert_eq!(r.usage.as_deref(), Some(&b"{\"prompt_tokens\":3}"[..]));
        assert_eq!((r.truncated, r.chunks, r.blocks.len()), (false, 2, 0));
        assert_eq!(r.choices.len(), 1);
        assert_eq!(
            (
                r.choices[0].index,
                r.choices[0].text,
                r.choices[0].finish_reason
            ),
            (1, "Yo", Some("stop"))
        );
        assert_eq!(agg.call_arguments(0), Some(("{\"x\": 1}", false, 1)));
        assert_eq!(agg.call_arguments(2), None);
    }

    #[test]
    fn anthropic_result_has_blocks_and_whole_usage() {
        let data = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg\",\"model\":\"c\",",
            "\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,",
            "\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"w\",\"input\":{}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,",
            "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"c\\\": 1}\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},",
            "\"usage\":{\"output_tokens\":9}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
        );
        let mut agg = fed("anthropic", data.as_bytes());
        let r = agg.result();
        assert_eq!(
            (r.id, r.model, r.truncated),
            (Some("msg"), Some("c"), false)
        );
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(
            (
                r.tool_calls[0].id,
                r.tool_calls[0].name,
                r.tool_calls[0].arguments
            ),
            ("t1", "w", "{\"c\": 1}")
        );
        assert_eq!(r.normalized_finish_reason.as_deref(), Some("tool_calls"));
        let usage: Value = serde_json::from_slice(r.usage.as_deref().unwrap()).unwrap();
        assert_eq!(usage["output_tokens"], 9);
        assert_eq!(r.blocks.len(), 1);
        assert_eq!(r.blocks[0]["type"], "tool_use");
        assert!(r.choices.is_empty());
    }

    #[test]
    fn gemini_whole_arguments_are_reported_whole() {
        let data = concat!(
            "data: {\"responseId\":\"g1\",\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":",
            "{\"name\":\"w\",\"args\":{\"c\":\"P\"}}}]},\"finishReason\":\"STOP\"}]}\n\n"
        );
        let mut agg = fed("gemini", data.as_bytes());
        let (args, whole, slot) = agg.call_arguments(0).unwrap();
        assert_eq!((args, whole, slot), ("{\"c\":\"P\"}", true, 0));
        let r = agg.result();
        assert_eq!(r.tool_calls[0].name, "w");
        assert!(!r.truncated);
    }
}
