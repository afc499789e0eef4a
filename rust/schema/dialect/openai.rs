//! The `openai-strict` dialect: OpenAI structured outputs / `strict: true` function calling (see
//! the table in [`super`]).

use serde_json::Value;

use super::{add_notes, is_null_schema, normalise, null_schema};
use crate::errors::CoreError;
use crate::schema::{too_deep, MAX_DEPTH};

const OPENAI_KEPT: [&str; 21] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "const",
    "$ref",
    "$defs",
    "description",
    "title",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// `schema` rewritten for OpenAI strict mode.
pub(super) fn to_openai_strict(schema: &Value) -> Result<Value, CoreError> {
    let mut out = schema.clone();
    strict(&mut out, 0)?;
    Ok(out)
}

fn strict(node: &mut Value, depth: usize) -> Result<(), CoreError> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    let Value::Object(map) = node else {
        return Ok(());
    };
    normalise(map);
    map.shift_remove("$schema");
    if map.get("default") == Some(&Value::Null) {
        map.shift_remove("default");
    }
    let unsupported: Vec<String> = map
        .keys()
        .filter(|k| !OPENAI_KEPT.contains(&k.as_str()))
        .cloned()
        .collect();
    let notes: Vec<(String, Value)> = unsupported
        .into_iter()
        .filter_map(|k| map.shift_remove(&k).map(|v| (k, v)))
        .collect();
    add_notes(map, &notes);
    for key in ["items", "additionalProperties"] {
        if let Some(child) = map.get_mut(key) {
            strict(child, depth + 1)?;
        }
    }
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            for child in children.values_mut() {
                strict(child, depth + 1)?;
            }
        }
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        for child in branches {
            strict(child, depth + 1)?;
        }
    }
    let is_object = map.contains_key("properties")
        || match map.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
            _ => false,
        };
    if !is_object {
        return Ok(());
    }
    if !matches!(map.get("additionalProperties"), Some(Value::Object(_))) {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(Value::Object(props)) = map.get("properties") {
        let old: Vec<Value> = match map.get("required") {
            Some(Value::Array(r)) => r.clone(),
            _ => Vec::new(),
        };
        let names: Vec<String> = props.keys().cloned().collect();
        if let Some(Value::Object(props)) = map.get_mut("properties") {
            for name in &names {
                if !old.iter().any(|r| r.as_str() == Some(name)) {
                    if let Some(p) = props.get_mut(name) {
                        make_nullable(p);
                    }
                }
            }
        }
        map.insert(
            "required".into(),
            Value::Array(names.into_iter().map(Value::String).collect()),
        );
    }
    Ok(())
}

/// Make a (strict-processed) property schema admit `null`.
fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        let admits_null = branches.iter().any(|b| {
            is_null_schema(b)
                || matches!(b.get("type"), Some(Value::Array(ts)) if ts.iter().any(|t| t == "null"))
        });
        if !admits_null {
            branches.push(null_schema());
        }
        return;
    }
    if map.contains_key("$ref") || (map.contains_key("const") && !map.contains_key("type")) {
        let description = map.shift_remove("description");
        let inner = Value::Object(std::mem::take(map));
        map.insert("anyOf".into(), Value::Array(vec![inner, null_schema()]));
        if let Some(d) = description {
            map.insert("description".into(), d);
        }
        return;
    }
    match map.get_mut("type") {
        Some(kind @ Value::String(_)) if kind != "null" => {
            let t = std::mem::take(kind);
            *kind = Value::Array(vec![t, Value::String("null".into())]);
        }
        Some(Value::Array(ts)) if !ts.iter().any(|t| t == "null") => {
            ts.push(Value::String("null".into()));
        }
        _ => {}
    }
    // An untyped schema without `enum` already admits null.
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    }
}
