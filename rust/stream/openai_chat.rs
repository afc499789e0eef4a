//! Aggregator for OpenAI chat-completions chunks (`chat.completion.chunk`), also spoken by Groq,
//! DeepSeek, Mistral, xAI, Ollama's and llama.cpp's OpenAI-compatible endpoints.
//!
//! Each chunk is read with a targeted `jiter` pass: only the fields we aggregate are decoded, the
//! rest is validated and skipped. A chunk that differs from the last eligible parsed one only in
//! its text, reasoning or argument string is read through a [`Template`] instead (two byte
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

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use jiter::{Jiter, JiterResult, Peek};

use super::scan::{each_object, for_keys, not_null, opt_int, opt_string, opt_string_span};
use super::template::Template;

use super::sse::SseEvent;
use super::Outcome;
use crate::errors::{show, CoreError};

/// Characters of a bad payload quoted in a `StreamFormatError`.
const PAYLOAD_EXCERPT: usize = 60;

/// The reason of a `StreamFormatError` for a number with more than 4300 integer digits.
const NUMBER_IN_DATA_TOO_LARGE: &str =
    "data has a number too large (more than 4300 integer digits)";

/// One aggregated tool call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCall {
    /// The provider's `index` (or one assigned in order of appearance when it sent none).
    pub index: i64,
    /// Call id, `""` if never sent (see [`Self::reported_id`]).
    pub id: String,
    /// The id reported while the provider sent none ([`synthetic_call_id`]).
    pub synthetic_id: String,
    /// Call type, `function` unless the provider said otherwise.
    pub kind: String,
    /// Function name, `""` if never sent.
    pub name: String,
    /// The concatenated argument text.
    pub arguments: String,
}

impl ToolCall {
    /// The provider's id, or the synthesised one when it sent none.
    pub fn reported_id(&self) -> &str {
        if self.id.is_empty() {
            &self.synthetic_id
        } else {
            &self.id
        }
    }
}

/// Characters of a synthesised call id.
const ID_ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The id of a call whose provider sent none: 9 characters of `[0-9A-Za-z]` (Mistral accepts no
/// other tool call ids), the FNV-1a hash of the stream's `id` (as known when the call started,
/// `""` if none) and the call's index, so it is stable over the whole stream, differs between
/// the calls of one response and between responses with different ids, and the twin computes the
/// same one.
pub fn synthetic_call_id(stream_id: &str, index: i64) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let index = index.to_string();
    for b in stream_id.bytes().chain([0]).chain(index.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut id = [0u8; 9];
    for c in id.iter_mut().rev() {
        *c = ID_ALPHABET[(h % 62) as usize];
        h /= 62;
    }
    id.iter().map(|&c| char::from(c)).collect()
}

/// The aggregation state of one choice.
#[derive(Debug, Default)]
pub struct ChoiceState {
    /// Concatenated `delta.content`.
    pub text: String,
    /// Concatenated `delta.reasoning_content` / `delta.reasoning`; `None` until one is seen.
    pub reasoning: Option<String>,
    /// Tool calls in order of first appearance (see [`Self::calls`] for the reported order).
    pub tool_calls: Vec<ToolCall>,
    /// Last non-null `finish_reason`.
    pub finish_reason: Option<String>,
    /// Slot in `tool_calls` of the call each index goes to: a call's own index (so the keys are
    /// the indices in use), or the index a provider sent with a call that got another one.
    by_index: HashMap<i64, usize>,
    /// The calls started in increasing order of index (the usual case: no sorting to report them).
    unsorted: bool,
    /// First slot in `tool_calls` whose call has this id.
    by_id: HashMap<String, usize>,
    /// Largest index in use.
    max_index: Option<i64>,
    /// No index below this is free (used once `max_index` is `i64::MAX`).
    lowest_free: i64,
}

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

#[derive(Debug, Clone, Default)]
struct Fragment {
    index: Option<i64>,
    id: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
    /// Span of the `arguments` string in the payload.
    arguments_at: Option<Range<usize>>,
}

#[derive(Default)]
struct Choice {
    content: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    finish_reason: Option<String>,
    tool_calls: Vec<Fragment>,
    /// Spans of `content`, `reasoning_content` and `reasoning` in the payload.
    spans: [Option<Range<usize>>; 3],
}

/// The string a [`Template`] varies in a one-choice chunk, with the rest of that choice.
#[derive(Debug, Clone)]
enum Slot {
    Content,
    ReasoningContent,
    Reasoning,
    /// The arguments of the choice's only tool-call fragment (its other fields as here).
    Arguments(Fragment),
}

/// A template with what its chunks do: fill `slot` of choice `choice`.
#[derive(Debug, Clone)]
struct Shape {
    template: Template,
    choice: i64,
    slot: Slot,
}

impl Shape {
    /// The shape of a parsed chunk whose only effect besides one string is already done (`id`
    /// and `model` are first-wins): one choice, no finish reason, no usage, and exactly one of
    /// content, reasoning, or the arguments of a single tool-call fragment.
    fn of(chunk: &Chunk, data: &[u8]) -> Option<Self> {
        if chunk.error || chunk.usage.is_some() {
            return None;
        }
        let [(choice, c)] = &chunk.choices[..] else {
            return None;
        };
        if c.finish_reason.is_some() {
            return None;
        }
        let strings = [&c.content, &c.reasoning_content, &c.reasoning];
        let set = strings.iter().filter(|s| s.is_some()).count() + c.tool_calls.len();
        if set != 1 {
            return None;
        }
        let (span, slot) = match (&c.tool_calls[..], &c.spans) {
            ([f], _) => (
                f.arguments_at.clone()?,
                Slot::Arguments(Fragment {
                    arguments: None,
                    arguments_at: None,
                    ..f.clone()
                }),
            ),
            (_, [Some(s), _, _]) => (s.clone(), Slot::Content),
            (_, [_, Some(s), _]) => (s.clone(), Slot::ReasoningContent),
            (_, [_, _, Some(s)]) => (s.clone(), Slot::Reasoning),
            _ => return None,
        };
        Some(Self {
            template: Template::new(data, span),
            choice: *choice,
            slot,
        })
    }

    /// The chunk of a payload whose string is `value`.
    fn chunk(&self, value: String) -> Chunk {
        let mut c = Choice::default();
        match &self.slot {
            Slot::Content => c.content = Some(value),
            Slot::ReasoningContent => c.reasoning_content = Some(value),
            Slot::Reasoning => c.reasoning = Some(value),
            Slot::Arguments(f) => c.tool_calls.push(Fragment {
                arguments: Some(value),
                ..f.clone()
            }),
        }
        Chunk {
            choices: vec![(self.choice, c)],
            ..Chunk::default()
        }
    }
}

#[derive(Default)]
struct Chunk {
    id: Option<String>,
    model: Option<String>,
    usage: Option<Range<usize>>,
    error: bool,
    choices: Vec<(i64, Choice)>,
}

fn split<T, U>(v: Option<(T, U)>) -> (Option<T>, Option<U>) {
    v.map_or((None, None), |(t, u)| (Some(t), Some(u)))
}

fn parse_fragment(j: &mut Jiter<'_>) -> JiterResult<Fragment> {
    let mut f = Fragment::default();
    for_keys!(j, key => {
        match key {
            "index" => f.index = opt_int(j)?.filter(|i| *i >= 0),
            "id" => f.id = opt_string(j)?,
            "type" => f.kind = opt_string(j)?,
            "function" => {
                f.name = None;
                f.arguments = None;
                f.arguments_at = None;
                let peek = j.peek()?;
                if peek == Peek::Object {
                    for_keys!(j, fk => {
                        match fk {
                            "name" => f.name = opt_string(j)?,
                            "arguments" => {
                                (f.arguments, f.arguments_at) = split(opt_string_span(j)?);
                            }
                            _ => j.next_skip()?,
                        }
                    });
                } else {
                    j.known_skip(peek)?;
                }
            }
            _ => j.next_skip()?,
        }
    });
    Ok(f)
}

fn parse_delta(j: &mut Jiter<'_>, c: &mut Choice) -> JiterResult<()> {
    *c = Choice {
        finish_reason: c.finish_reason.take(),
        ..Choice::default()
    };
    let peek = j.peek()?;
    if peek != Peek::Object {
        return j.known_skip(peek);
    }
    for_keys!(j, key => {
        match key {
            "content" => (c.content, c.spans[0]) = split(opt_string_span(j)?),
            "reasoning_content" => {
                (c.reasoning_content, c.spans[1]) = split(opt_string_span(j)?);
            }
            "reasoning" => (c.reasoning, c.spans[2]) = split(opt_string_span(j)?),
            "tool_calls" => {
                c.tool_calls.clear();
                each_object(j, |j| {
                    c.tool_calls.push(parse_fragment(j)?);
                    Ok(())
                })?;
            }
            _ => j.next_skip()?,
        }
    });
    Ok(())
}

fn parse_choice(j: &mut Jiter<'_>) -> JiterResult<Option<(i64, Choice)>> {
    let mut c = Choice::default();
    let mut index = Some(0);
    for_keys!(j, key => {
        match key {
            "index" => index = opt_int(j)?.filter(|i| *i >= 0),
            "delta" => parse_delta(j, &mut c)?,
            "finish_reason" => c.finish_reason = opt_string(j)?,
            _ => j.next_skip()?,
        }
    });
    Ok(index.map(|i| (i, c)))
}

/// Parse one chunk; `want_id_model` is false once both are known (their values are then skipped).
fn parse_chunk(data: &[u8], want_id_model: bool) -> JiterResult<Option<Chunk>> {
    let mut j = Jiter::new(data);
    let mut c = Chunk::default();
    let peek = j.peek()?;
    if peek != Peek::Object {
        j.known_skip(peek)?;
        j.finish()?;
        return Ok(None);
    }
    for_keys!(j, key => {
        match key {
            "id" if want_id_model => c.id = opt_string(&mut j)?,
            "model" if want_id_model => c.model = opt_string(&mut j)?,
            "usage" => {
                let p = j.peek()?;
                let start = j.current_index();
                j.known_skip(p)?;
                c.usage = (p == Peek::Object).then(|| start..j.current_index());
            }
            "error" => c.error = not_null(&mut j)?,
            "choices" => {
                c.choices.clear();
                each_object(&mut j, |j| {
                    if let Some(choice) = parse_choice(j)? {
                        c.choices.push(choice);
                    }
                    Ok(())
                })?;
            }
            _ => j.next_skip()?,
        }
    });
    j.finish()?;
    Ok(Some(c))
}

/// First 60 characters of `data`, decoded lossily.
fn payload_excerpt(data: &[u8]) -> String {
    String::from_utf8_lossy(data)
        .chars()
        .take(PAYLOAD_EXCERPT)
        .collect()
}

/// The message of a provider error payload: `error.message`, a string `error`, a top-level
/// `message`, or else the raw text.
fn provider_message(data: &[u8]) -> String {
    let raw = || String::from_utf8_lossy(data).into_owned();
    let Ok(value) = jiter::JsonValue::parse(data, false) else {
        return raw();
    };
    let jiter::JsonValue::Object(obj) = &value else {
        return raw();
    };
    match crate::json::get(obj, "error") {
        Some(jiter::JsonValue::Object(err)) => match crate::json::get(err, "message") {
            Some(jiter::JsonValue::Str(m)) => return m.to_string(),
            _ => return raw(),
        },
        Some(jiter::JsonValue::Str(m)) => return m.to_string(),
        _ => {}
    }
    match crate::json::get(obj, "message") {
        Some(jiter::JsonValue::Str(m)) => m.to_string(),
        _ => raw(),
    }
}

/// `data` without leading and trailing ASCII whitespace.
pub(crate) fn trim_ascii(data: &[u8]) -> &[u8] {
    let start = data
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(data.len());
    let end = data
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &data[start..end]
}

/// A `StreamFormatError` outcome for event number `event`.
pub(crate) fn bad_payload(event: usize, data: &[u8], what: &str) -> Outcome {
    let excerpt = payload_excerpt(data);
    let message = format!("event {event}: {what}: '{}'", show(&excerpt));
    Outcome::Failed(CoreError::StreamFormat {
        message,
        event,
        excerpt,
    })
}

/// The reason of a `StreamFormatError` for data nested deeper than `max_depth`.
pub(crate) fn too_deep(max_depth: usize) -> String {
    format!("data nests deeper than {max_depth} levels")
}

/// Why a payload is not valid JSON (a too-large number and too deep nesting have their own
/// reasons; a lower `max_depth` was already checked by the caller).
pub(crate) fn invalid_json_reason(data: &[u8]) -> String {
    match crate::json::locate_error(data) {
        Some((_, crate::json::NUMBER_TOO_LARGE)) => NUMBER_IN_DATA_TOO_LARGE.to_string(),
        Some((_, crate::json::TOO_DEEP)) => too_deep(crate::json::MAX_DEPTH),
        _ => "data is not valid JSON".to_string(),
    }
}

/// The provider error of an event; the first one is also kept in `first`.
pub(crate) fn provider_error(first: &mut Option<CoreError>, ev: &SseEvent) -> CoreError {
    let event = if ev.event.is_empty() {
        "message".to_string()
    } else {
        String::from_utf8_lossy(ev.event).into_owned()
    };
    let err = CoreError::Provider {
        message: provider_message(ev.data),
        event,
        data: ev.data.to_vec(),
    };
    if first.is_none() {
        *first = Some(err.clone());
    }
    err
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

impl ChoiceState {
    /// The tool calls in order of index (the slots of `tool_calls`).
    pub fn order(&self) -> Vec<usize> {
        let mut slots: Vec<usize> = (0..self.tool_calls.len()).collect();
        if self.unsorted {
            slots.sort_by_key(|&s| self.tool_calls[s].index);
        }
        slots
    }

    /// The tool call at position `i` in order of index.
    pub fn call_at(&self, i: usize) -> Option<(usize, &ToolCall)> {
        let slot = if self.unsorted {
            *self.order().get(i)?
        } else {
            i
        };
        self.tool_calls.get(slot).map(|c| (slot, c))
    }

    fn apply_choice(&mut self, choice: Choice, stream_id: &str) {
        {
            if let Some(t) = choice.content {
                self.text.push_str(&t);
            }
            for r in [choice.reasoning_content, choice.reasoning]
                .into_iter()
                .flatten()
            {
                self.reasoning.get_or_insert_with(String::new).push_str(&r);
            }
            for frag in choice.tool_calls {
                self.merge(frag, stream_id);
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
    }

    fn merge(&mut self, frag: Fragment, stream_id: &str) {
        let id = frag.id.filter(|s| !s.is_empty());
        let known = |s: &Self| id.as_ref().and_then(|id| s.by_id.get(id).copied());
        let slot = match frag.index {
            Some(i) => match self.by_index.get(&i) {
                Some(&slot) if self.other_call(slot, id.as_deref()) => {
                    let slot = match known(self) {
                        Some(slot) => slot,
                        None => self.push_unindexed(stream_id),
                    };
                    self.by_index.insert(i, slot);
                    slot
                }
                Some(&slot) => slot,
                None => self.push_call(i, stream_id),
            },
            None => match (&id, known(self)) {
                (Some(_), Some(slot)) => slot,
                (Some(_), None) => self.push_unindexed(stream_id),
                (None, _) if !self.tool_calls.is_empty() => self.tool_calls.len() - 1,
                (None, _) => self.push_unindexed(stream_id),
            },
        };
        let call = &mut self.tool_calls[slot];
        if call.id.is_empty() {
            if let Some(id) = id {
                let first = self.by_id.entry(id.clone()).or_insert(slot);
                *first = (*first).min(slot);
                call.id = id;
            }
        }
        if call.kind.is_empty() {
            if let Some(k) = frag.kind.filter(|s| !s.is_empty()) {
                call.kind = k;
            }
        }
        if call.name.is_empty() {
            if let Some(n) = frag.name.filter(|s| !s.is_empty()) {
                call.name = n;
            }
        }
        if let Some(a) = frag.arguments {
            call.arguments.push_str(&a);
        }
    }

    /// A fragment with `id` is not part of the call in `slot`: both have an id, and they differ.
    fn other_call(&self, slot: usize, id: Option<&str>) -> bool {
        let held = &self.tool_calls[slot].id;
        id.is_some_and(|id| !held.is_empty() && held != id)
    }

    /// The index for a call started without its own: the largest so far plus one, else the
    /// smallest free one.
    fn next_index(&mut self) -> i64 {
        match self.max_index {
            None => 0,
            Some(m) if m < i64::MAX => m + 1,
            Some(_) => {
                while self.by_index.contains_key(&self.lowest_free) {
                    self.lowest_free += 1;
                }
                self.lowest_free
            }
        }
    }

    /// Start a call that came without an index of its own.
    fn push_unindexed(&mut self, stream_id: &str) -> usize {
        let index = self.next_index();
        self.push_call(index, stream_id)
    }

    /// Start a call with the unused index `index`.
    fn push_call(&mut self, index: i64, stream_id: &str) -> usize {
        let slot = self.tool_calls.len();
        self.by_index.insert(index, slot);
        self.unsorted |= self.max_index.is_some_and(|m| index < m);
        self.max_index = Some(self.max_index.map_or(index, |m| m.max(index)));
        self.tool_calls.push(ToolCall {
            index,
            synthetic_id: synthetic_call_id(stream_id, index),
            ..ToolCall::default()
        });
        slot
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
