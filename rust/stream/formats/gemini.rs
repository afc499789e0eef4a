//! `gemini` `streamGenerateContent` chunks: parts, function calls and streamed partial arguments.

use jiter::{JsonObject, JsonValue};
use serde_json::{Map, Value};

use super::super::message::{
    array_field, field, is_true, obj_field, str_field, to_map, to_serde, Message,
};

pub(super) struct GeminiState<'a> {
    pub(super) args: &'a mut Vec<Map<String, Value>>,
    pub(super) paths: &'a mut Vec<Option<String>>,
    pub(super) open: &'a mut Option<usize>,
}

pub(super) fn gemini(m: &mut Message, st: &mut GeminiState<'_>, chunk: &JsonObject<'_>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::message::compact;

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
}
