//! Aggregators for `anthropic`, `openai-responses`, `gemini` and `ollama` events.
//!
//! The rules are those of the pure-Python twin, `toolweave._reference.formats` (its module
//! docstring is the specification). Each `apply` folds one parsed event payload (a JSON object)
//! into a [`Message`] and returns `false` when the payload is a provider error.

use std::collections::HashMap;

use jiter::{JsonObject, JsonValue};
use serde_json::{Map, Value};

use super::anthropic_delta::{BlockDelta, DeltaKind, Read};
use super::message::{
    array_field, compact, field, index_field, is_true, obj_field, str_field, to_map, to_serde,
    Block, Message,
};

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

// --- anthropic ---------------------------------------------------------------------------------------

fn anthropic(m: &mut Message, by_index: &mut HashMap<i64, usize>, chunk: &JsonObject<'_>) -> bool {
    match str_field(chunk, "type") {
        Some("error") => return false,
        Some("message_start") => {
            if let Some(msg) = obj_field(chunk, "message") {
                m.set_id_model(str_field(msg, "id"), str_field(msg, "model"));
                if let Some(u) = obj_field(msg, "usage") {
                    m.usage = Some(to_map(u));
                }
            }
        }
        Some("content_block_start") => anthropic_start(m, by_index, chunk),
        Some("content_block_delta") => {
            if let Some(d) = BlockDelta::from_object(chunk) {
                apply_block_delta(m, by_index, &d);
            }
        }
        Some("message_delta") => {
            if let Some(reason) =
                obj_field(chunk, "delta").and_then(|d| str_field(d, "stop_reason"))
            {
                m.finish_reason = Some(reason.to_owned());
            }
            if let Some(u) = obj_field(chunk, "usage") {
                let usage = m.usage.get_or_insert_with(Map::new);
                for (k, v) in u.iter() {
                    if !matches!(v, JsonValue::Null) {
                        usage.insert(k.to_string(), to_serde(v));
                    }
                }
            }
        }
        Some("message_stop") => m.done = true,
        _ => {}
    }
    true
}

fn anthropic_start(m: &mut Message, by_index: &mut HashMap<i64, usize>, chunk: &JsonObject<'_>) {
    let (Some(index), Some(block)) = (
        index_field(chunk, "index"),
        obj_field(chunk, "content_block"),
    ) else {
        return;
    };
    let mut rec = Block {
        start: to_map(block),
        ..Block::default()
    };
    match str_field(block, "type") {
        Some("tool_use") => {
            let slot = m.new_call(
                str_field(block, "id").unwrap_or(""),
                str_field(block, "name").unwrap_or(""),
            );
            if let Some(input) = obj_field(block, "input").filter(|o| !o.is_empty()) {
                m.calls[slot].final_args = Some(compact(&Value::Object(to_map(input))));
            }
            rec.call = Some(slot);
        }
        Some("text") => {
            if let Some(t) = str_field(block, "text").filter(|t| !t.is_empty()) {
                m.text.push_str(t);
            }
        }
        Some("thinking") => {
            if let Some(t) = str_field(block, "thinking").filter(|t| !t.is_empty()) {
                m.add_reasoning(t);
            }
        }
        _ => {}
    }
    by_index.insert(index, m.blocks.len());
    m.blocks.push(rec);
}

fn apply_block_delta(m: &mut Message, by_index: &HashMap<i64, usize>, d: &BlockDelta<'_>) {
    let Some(&pos) = by_index.get(&d.index) else {
        return;
    };
    let rec = &mut m.blocks[pos];
    let t = d.value.as_ref();
    match d.kind {
        DeltaKind::Text => {
            m.text.push_str(t);
            rec.parts.push_str(t);
        }
        DeltaKind::Thinking => {
            rec.parts.push_str(t);
            m.reasoning.get_or_insert_with(String::new).push_str(t);
        }
        DeltaKind::Signature => rec.signature.push_str(t),
        DeltaKind::InputJson => {
            rec.parts.push_str(t);
            if let Some(slot) = rec.call {
                let call = &mut m.calls[slot];
                if !rec.json {
                    call.final_args = None;
                }
                call.arguments.push_str(t);
            }
            rec.json = true;
        }
    }
}

/// The content blocks as JSON objects (see the twin's `Anthropic.blocks`).
pub fn anthropic_blocks(m: &Message) -> Vec<Value> {
    m.blocks
        .iter()
        .map(|rec| {
            let mut b = rec.start.clone();
            let kind = b
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let prefixed = |b: &Map<String, Value>, key: &str, tail: &str| {
                let head = b.get(key).and_then(Value::as_str).unwrap_or("");
                Value::String(format!("{head}{tail}"))
            };
            if kind == "text" {
                let v = prefixed(&b, "text", &rec.parts);
                b.insert("text".into(), v);
            } else if kind == "thinking" {
                let v = prefixed(&b, "thinking", &rec.parts);
                b.insert("thinking".into(), v);
                let s = prefixed(&b, "signature", &rec.signature);
                b.insert("signature".into(), s);
            } else if rec.json
                || matches!(
                    kind.as_str(),
                    "tool_use" | "server_tool_use" | "mcp_tool_use"
                )
            {
                b.insert("input_raw".into(), Value::String(rec.parts.clone()));
            }
            Value::Object(b)
        })
        .collect()
}

// --- openai-responses ------------------------------------------------------------------------------

fn responses(m: &mut Message, by_output: &mut HashMap<i64, usize>, chunk: &JsonObject<'_>) -> bool {
    let Some(kind) = str_field(chunk, "type") else {
        return true;
    };
    match kind {
        "error" => return false,
        "response.created"
        | "response.in_progress"
        | "response.completed"
        | "response.incomplete"
        | "response.failed" => {
            if let Some(r) = obj_field(chunk, "response") {
                m.set_id_model(str_field(r, "id"), str_field(r, "model"));
                if kind != "response.created" && kind != "response.in_progress" {
                    m.done = true;
                    m.finish_reason = Some(
                        str_field(r, "status")
                            .filter(|s| !s.is_empty())
                            .unwrap_or_else(|| kind.trim_start_matches("response."))
                            .to_owned(),
                    );
                    if let Some(u) = obj_field(r, "usage") {
                        m.usage = Some(to_map(u));
                    }
                }
            }
        }
        "response.output_item.added" | "response.output_item.done" => {
            if let Some(item) =
                obj_field(chunk, "item").filter(|i| str_field(i, "type") == Some("function_call"))
            {
                responses_item(
                    m,
                    by_output,
                    index_field(chunk, "output_index"),
                    item,
                    kind.ends_with("done"),
                );
            }
        }
        "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
            let key = if kind.ends_with("delta") {
                "delta"
            } else {
                "arguments"
            };
            let slot = index_field(chunk, "output_index").and_then(|i| by_output.get(&i));
            if let (Some(&slot), Some(t)) = (slot, str_field(chunk, key)) {
                if key == "delta" {
                    m.calls[slot].arguments.push_str(t);
                } else {
                    m.calls[slot].final_args = Some(t.to_owned());
                }
            }
        }
        "response.output_text.delta" => {
            if let Some(t) = str_field(chunk, "delta") {
                m.text.push_str(t);
            }
        }
        "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
            if let Some(t) = str_field(chunk, "delta") {
                m.add_reasoning(t);
            }
        }
        _ => {}
    }
    true
}

fn responses_item(
    m: &mut Message,
    by_output: &mut HashMap<i64, usize>,
    output_index: Option<i64>,
    item: &JsonObject<'_>,
    done: bool,
) {
    let call_id = str_field(item, "call_id").unwrap_or("");
    let name = str_field(item, "name").unwrap_or("");
    let slot = match output_index.and_then(|i| by_output.get(&i)) {
        Some(&slot) => slot,
        None => {
            let slot = m.new_call(call_id, name);
            m.calls[slot].extra.push((
                "item_id",
                Some(str_field(item, "id").unwrap_or("").to_owned()),
            ));
            if let Some(i) = output_index {
                by_output.insert(i, slot);
            }
            slot
        }
    };
    let call = &mut m.calls[slot];
    if call.id.is_empty() {
        call_id.clone_into(&mut call.id);
    }
    if call.name.is_empty() {
        name.clone_into(&mut call.name);
    }
    if done {
        if let Some(a) = str_field(item, "arguments") {
            call.final_args = Some(a.to_owned());
        }
    }
}

// --- gemini ------------------------------------------------------------------------------------------

struct GeminiState<'a> {
    args: &'a mut Vec<Map<String, Value>>,
    paths: &'a mut Vec<Option<String>>,
    open: &'a mut Option<usize>,
}

fn gemini(m: &mut Message, st: &mut GeminiState<'_>, chunk: &JsonObject<'_>) {
    m.set_id_model(
        str_field(chunk, "responseId"),
        str_field(chunk, "modelVersion"),
    );
    if let Some(u) = obj_field(chunk, "usageMetadata") {
        m.usage = Some(to_map(u));
    }
    for cand in array_field(chunk, "candidates").unwrap_or(&[]) {
        let JsonValue::Object(cand) = cand else {
            continue;
        };
        if !matches!(field(cand, "index"), None | Some(JsonValue::Int(0))) {
            continue;
        }
        if let Some(parts) = obj_field(cand, "content").and_then(|c| array_field(c, "parts")) {
            for part in parts {
                if let JsonValue::Object(part) = part {
                    gemini_part(m, st, part);
                }
            }
        }
        if let Some(r) = str_field(cand, "finishReason") {
            m.finish_reason = Some(r.to_owned());
        }
    }
}

fn gemini_part(m: &mut Message, st: &mut GeminiState<'_>, part: &JsonObject<'_>) {
    if let Some(t) = str_field(part, "text") {
        if is_true(part, "thought") {
            m.add_reasoning(t);
        } else {
            m.text.push_str(t);
        }
    }
    let Some(fc) = obj_field(part, "functionCall") else {
        return;
    };
    if let Some(name) = str_field(fc, "name").filter(|n| !n.is_empty()) {
        let slot = m.new_call(str_field(fc, "id").unwrap_or(""), name);
        let sig = str_field(part, "thoughtSignature").map(str::to_owned);
        m.calls[slot].extra.push(("thought_signature", sig));
        st.args
            .push(obj_field(fc, "args").map(to_map).unwrap_or_default());
        st.paths.push(None);
        *st.open = Some(slot);
    }
    let Some(slot) = *st.open else {
        return;
    };
    for pa in array_field(fc, "partialArgs").unwrap_or(&[]) {
        if let JsonValue::Object(pa) = pa {
            gemini_partial(&mut st.args[slot], &mut st.paths[slot], pa);
        }
    }
    if !is_true(fc, "willContinue") {
        *st.open = None;
    }
}

const VALUE_KEYS: [&str; 6] = [
    "stringValue",
    "numberValue",
    "boolValue",
    "nullValue",
    "structValue",
    "listValue",
];

fn gemini_partial(args: &mut Map<String, Value>, cont: &mut Option<String>, pa: &JsonObject<'_>) {
    let Some(path) = str_field(pa, "jsonPath") else {
        return;
    };
    let Some((key, v)) = VALUE_KEYS
        .iter()
        .find_map(|k| field(pa, k).map(|v| (*k, v)))
    else {
        return;
    };
    let value = if key == "nullValue" {
        Value::Null
    } else {
        to_serde(v)
    };
    let append = cont.as_deref() == Some(path);
    let is_str = value.is_string();
    set_path(args, path, value, append);
    *cont = (is_true(pa, "willContinue") && is_str).then(|| path.to_owned());
}

enum Key {
    Name(String),
    Index(usize),
}

/// `$.a.b[0]['c']` -> keys; `None` when the path does not parse.
fn parse_path(path: &str) -> Option<Vec<Key>> {
    let mut rest = path.strip_prefix('$')?;
    let mut keys = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("['") {
            let end = r.find('\'')?;
            let after = r[end + 1..].strip_prefix(']')?;
            keys.push(Key::Name(r[..end].to_owned()));
            rest = after;
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let digits = &r[..end];
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            keys.push(Key::Index(digits.parse().unwrap_or(usize::MAX)));
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            keys.push(Key::Name(r[..end].to_owned()));
            rest = &r[end..];
        } else {
            return None;
        }
    }
    Some(keys)
}

fn put(slot: &mut Value, value: Value, append: bool) {
    match (slot, value) {
        (Value::String(old), Value::String(new)) if append => old.push_str(&new),
        (slot, value) => *slot = value,
    }
}

fn child<'a>(node: &'a mut Value, key: &Key) -> Option<&'a mut Value> {
    match (node, key) {
        (Value::Array(a), Key::Index(k)) if *k <= a.len() => {
            if *k == a.len() {
                a.push(Value::Null);
            }
            Some(&mut a[*k])
        }
        (Value::Object(o), Key::Name(k)) => Some(o.entry(k.clone()).or_insert(Value::Null)),
        _ => None,
    }
}

/// Set `value` at `path` (see the twin's `_set_path`: an index past the end is ignored).
fn set_path(root: &mut Map<String, Value>, path: &str, value: Value, append: bool) {
    let Some(keys) = parse_path(path) else { return };
    let Some(Key::Name(first)) = keys.first() else {
        return;
    };
    let mut slot = root.entry(first.clone()).or_insert(Value::Null);
    for key in &keys[1..] {
        if !slot.is_object() && !slot.is_array() {
            *slot = match key {
                Key::Index(_) => Value::Array(Vec::new()),
                Key::Name(_) => Value::Object(Map::new()),
            };
        }
        let Some(next) = child(slot, key) else { return };
        slot = next;
    }
    put(slot, value, append);
}

// --- ollama ------------------------------------------------------------------------------------------

const OLLAMA_USAGE: [&str; 6] = [
    "prompt_eval_count",
    "eval_count",
    "total_duration",
    "load_duration",
    "prompt_eval_duration",
    "eval_duration",
];

fn ollama(m: &mut Message, chunk: &JsonObject<'_>) {
    m.set_id_model(None, str_field(chunk, "model"));
    if let Some(msg) = obj_field(chunk, "message") {
        if let Some(t) = str_field(msg, "content") {
            m.text.push_str(t);
        }
        if let Some(t) = str_field(msg, "thinking") {
            m.add_reasoning(t);
        }
        for tc in array_field(msg, "tool_calls").unwrap_or(&[]) {
            let JsonValue::Object(tc) = tc else { continue };
            let Some(f) = obj_field(tc, "function") else {
                continue;
            };
            let slot = m.new_call(
                str_field(tc, "id").unwrap_or(""),
                str_field(f, "name").unwrap_or(""),
            );
            let args = match field(f, "arguments") {
                Some(JsonValue::Str(s)) => s.to_string(),
                None | Some(JsonValue::Null) => "{}".to_owned(),
                Some(v) => compact(&to_serde(v)),
            };
            m.calls[slot].final_args = Some(args);
        }
    }
    if is_true(chunk, "done") {
        m.done = true;
        m.finish_reason = Some(
            str_field(chunk, "done_reason")
                .filter(|s| !s.is_empty())
                .unwrap_or("stop")
                .to_owned(),
        );
        let mut usage = Map::new();
        for k in OLLAMA_USAGE {
            if let Some(v) = field(chunk, k) {
                usage.insert(k.to_owned(), to_serde(v));
            }
        }
        if !usage.is_empty() {
            m.usage = Some(usage);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Inner, StreamAggregator};
    use super::*;

    #[test]
    fn set_path_nested_and_bounded() {
        let mut root = Map::new();
        set_path(&mut root, "$.a.b[0]", Value::from("x"), false);
        set_path(&mut root, "$.a.b[0]", Value::from("y"), true);
        set_path(&mut root, "$.a.b[99999999999]", Value::from(1), false);
        set_path(&mut root, "$['k']", Value::Null, false);
        set_path(&mut root, "nope", Value::Null, false);
        assert_eq!(
            compact(&Value::Object(root)),
            r#"{"a":{"b":["xy"]},"k":null}"#
        );
    }

    #[test]
    fn ollama_ndjson() {
        let mut agg = StreamAggregator::new("ollama").unwrap();
        let n = agg.outcomes(b"{\"model\":\"m\",\"message\":{\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"a\":1}}}]}}\n{\"done\":true}").len();
        assert_eq!(n, 2);
        let Inner::Generic(g) = agg.inner() else {
            panic!()
        };
        assert_eq!(g.message.calls[0].arguments(), r#"{"a":1}"#);
        assert_eq!(g.message.finish_reason.as_deref(), Some("stop"));
    }
}
