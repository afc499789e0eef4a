//! The aggregation state shared by the non-OpenAI-chat formats, and the helpers they read JSON with.
//!
//! Events are parsed with `jiter` into a [`JsonValue`] (same depth and number limits as the
//! openai-chat path and the pure-Python twin); subtrees that must be re-serialised (Gemini `args`,
//! Ollama object arguments, Anthropic blocks and usage) are converted to `serde_json` values, whose
//! compact output matches the twin's `orjson.dumps`.

use jiter::{JsonObject, JsonValue};
use serde_json::{Map, Value};

/// One aggregated tool call of a non-OpenAI-chat format.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Call {
    /// Position among the message's tool calls (0-based).
    pub index: i64,
    /// Call id (`""` until known).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Concatenated argument fragments.
    pub arguments: String,
    /// Arguments that win over the fragments (a `done` event, whole arguments).
    pub final_args: Option<String>,
    /// Format-specific extra string fields (`item_id`, `thought_signature`).
    pub extra: Vec<(&'static str, Option<String>)>,
}

impl Call {
    /// The arguments to report.
    pub fn arguments(&self) -> &str {
        self.final_args.as_deref().unwrap_or(&self.arguments)
    }
}

/// One Anthropic content block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Block {
    /// The `content_block` of `content_block_start`.
    pub start: Map<String, Value>,
    /// Concatenated text / thinking / partial JSON.
    pub parts: String,
    /// Concatenated `signature_delta`s.
    pub signature: String,
    /// The tool call this block feeds, as a position in `Message::calls`.
    pub call: Option<usize>,
    /// An `input_json_delta` arrived.
    pub json: bool,
}

/// Aggregated message state.
#[derive(Debug, Default)]
pub struct Message {
    /// First non-empty response id.
    pub id: Option<String>,
    /// First non-empty model name.
    pub model: Option<String>,
    /// Concatenated text.
    pub text: String,
    /// Concatenated reasoning, `None` until some arrives.
    pub reasoning: Option<String>,
    /// Tool calls in order.
    pub calls: Vec<Call>,
    /// The provider's finish reason.
    pub finish_reason: Option<String>,
    /// The provider's usage object.
    pub usage: Option<Map<String, Value>>,
    /// The stream's own end marker was seen.
    pub done: bool,
    /// Anthropic content blocks.
    pub blocks: Vec<Block>,
}

impl Message {
    /// Fill `id` / `model` from the first non-empty values.
    pub fn set_id_model(&mut self, id: Option<&str>, model: Option<&str>) {
        if self.id.is_none() {
            self.id = id.filter(|s| !s.is_empty()).map(str::to_owned);
        }
        if self.model.is_none() {
            self.model = model.filter(|s| !s.is_empty()).map(str::to_owned);
        }
    }

    /// Append reasoning text.
    pub fn add_reasoning(&mut self, part: &str) {
        self.reasoning
            .get_or_insert_with(String::new)
            .push_str(part);
    }

    /// Start a call; returns its position.
    pub fn new_call(&mut self, id: &str, name: &str) -> usize {
        let slot = self.calls.len();
        self.calls.push(Call {
            index: i64::try_from(slot).unwrap_or(i64::MAX),
            id: id.to_owned(),
            name: name.to_owned(),
            ..Call::default()
        });
        slot
    }
}

/// `obj[key]` (last duplicate wins).
pub fn field<'a, 's>(obj: &'a JsonObject<'s>, key: &str) -> Option<&'a JsonValue<'s>> {
    crate::json::get(obj, key)
}

/// `obj[key]` if it is a string.
pub fn str_field<'a>(obj: &'a JsonObject<'_>, key: &str) -> Option<&'a str> {
    match field(obj, key) {
        Some(JsonValue::Str(s)) => Some(s),
        _ => None,
    }
}

/// `obj[key]` if it is an object.
pub fn obj_field<'a, 's>(obj: &'a JsonObject<'s>, key: &str) -> Option<&'a JsonObject<'s>> {
    match field(obj, key) {
        Some(JsonValue::Object(o)) => Some(o),
        _ => None,
    }
}

/// `obj[key]` if it is an array.
pub fn array_field<'a, 's>(obj: &'a JsonObject<'s>, key: &str) -> Option<&'a [JsonValue<'s>]> {
    match field(obj, key) {
        Some(JsonValue::Array(a)) => Some(a),
        _ => None,
    }
}

/// `obj[key]` if it is a non-negative integer.
pub fn index_field(obj: &JsonObject<'_>, key: &str) -> Option<i64> {
    match field(obj, key) {
        Some(JsonValue::Int(i)) if *i >= 0 => Some(*i),
        _ => None,
    }
}

/// `obj[key] is True`.
pub fn is_true(obj: &JsonObject<'_>, key: &str) -> bool {
    matches!(field(obj, key), Some(JsonValue::Bool(true)))
}

/// A `jiter` value as a `serde_json` value (big integers become floats, as they would in JSON
/// interchange; duplicate keys: last wins at the first key's position, like a Python dict).
pub fn to_serde(v: &JsonValue<'_>) -> Value {
    match v {
        JsonValue::Null => Value::Null,
        JsonValue::Bool(b) => Value::Bool(*b),
        JsonValue::Int(i) => Value::from(*i),
        JsonValue::BigInt(b) => b
            .to_string()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        JsonValue::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        JsonValue::Str(s) => Value::String(s.to_string()),
        JsonValue::Array(a) => Value::Array(a.iter().map(to_serde).collect()),
        JsonValue::Object(o) => Value::Object(to_map(o)),
    }
}

/// A `jiter` object as a `serde_json` map.
pub fn to_map(o: &JsonObject<'_>) -> Map<String, Value> {
    let mut m = Map::new();
    for (k, v) in o.iter() {
        m.insert(k.to_string(), to_serde(v));
    }
    m
}

/// Compact JSON text of a value.
pub fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The common finish reason for a format's native one (as `toolweave.chat.finish.normalize_finish_reason`).
pub fn normalize_finish_reason(
    format: &str,
    native: Option<&str>,
    has_tool_calls: bool,
) -> Option<String> {
    let native = native?;
    let mapped = match (format, native) {
        ("openai-chat", "function_call") => "tool_calls",
        ("anthropic", "end_turn" | "stop_sequence")
        | ("gemini", "STOP")
        | ("openai-responses", "completed") => "stop",
        ("anthropic", "max_tokens" | "model_context_window_exceeded")
        | ("gemini", "MAX_TOKENS")
        | ("openai-responses", "incomplete") => "length",
        ("anthropic", "tool_use") => "tool_calls",
        ("anthropic", "refusal")
        | (
            "gemini",
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY",
        ) => "content_filter",
        ("gemini", "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL")
        | ("openai-responses", "failed" | "cancelled") => "error",
        _ => native,
    };
    if mapped == "stop" && has_tool_calls {
        Some("tool_calls".to_owned())
    } else {
        Some(mapped.to_owned())
    }
}
