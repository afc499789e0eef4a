//! The `gemini` dialect: the OpenAPI 3.0 subset of Gemini function declarations (see the table in
//! [`super`]).

use serde_json::{Map, Value};

use super::{add_notes, is_null_schema, normalise};
use crate::errors::CoreError;
use crate::schema::{too_deep, MAX_DEPTH};

const GEMINI_KEPT: [&str; 22] = [
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "title",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
    "default",
    "propertyOrdering",
    "example",
];

const GEMINI_FORMATS: [&str; 6] = ["date-time", "enum", "int32", "int64", "float", "double"];

/// Most nodes a Gemini rewrite may produce (inlining can multiply a schema's size).
pub const MAX_NODES: usize = 100_000;

/// `schema` rewritten for Gemini; `null` for a schema that declares no parameter.
pub(super) fn to_gemini(schema: &Value) -> Result<Value, CoreError> {
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut gem = Gemini {
        defs,
        stack: Vec::new(),
        nodes: 0,
    };
    let out = gem.node(schema, 0)?;
    Ok(if without_parameters(&out) {
        Value::Null
    } else {
        out
    })
}

/// A Gemini parameters schema that declares no parameter: an object (or untyped) node with no or
/// empty `properties` and no `anyOf`.
fn without_parameters(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    let object = map.get("type").is_none_or(|t| t == "object");
    let no_properties = map
        .get("properties")
        .is_none_or(|p| p.as_object().is_some_and(Map::is_empty));
    object && no_properties && !map.contains_key("anyOf")
}

struct Gemini {
    defs: Map<String, Value>,
    stack: Vec<String>,
    nodes: usize,
}

impl Gemini {
    fn node(&mut self, value: &Value, depth: usize) -> Result<Value, CoreError> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(CoreError::Schema(format!(
                "gemini dialect: inlining $defs would produce more than {MAX_NODES} schema nodes"
            )));
        }
        let Value::Object(src) = value else {
            return Ok(value.clone());
        };
        let mut map = src.clone();
        map.shift_remove("$schema");
        map.shift_remove("$defs");
        if let Some(Value::String(r)) = map.get("$ref").cloned() {
            return self.inline(&r, map, depth);
        }
        normalise(&mut map);
        let mut notes: Vec<(String, Value)> = Vec::new();
        let mut nullable = matches!(map.shift_remove("nullable"), Some(Value::Bool(true)));
        if let Some(Value::Array(branches)) = map.shift_remove("anyOf") {
            let (nulls, rest): (Vec<Value>, Vec<Value>) =
                branches.into_iter().partition(is_null_schema);
            nullable |= !nulls.is_empty();
            if rest.len() == 1 {
                let merged = self.node(&rest[0], depth + 1)?;
                if let Value::Object(inner) = merged {
                    for (k, v) in inner {
                        if k == "nullable" {
                            nullable |= v == Value::Bool(true);
                        } else {
                            map.entry(k).or_insert(v);
                        }
                    }
                }
            } else if !rest.is_empty() {
                let out = rest
                    .iter()
                    .map(|b| self.node(b, depth + 1))
                    .collect::<Result<Vec<_>, _>>()?;
                map.insert("anyOf".into(), Value::Array(out));
            }
        }
        match map.get("type").cloned() {
            Some(Value::String(t)) if t == "null" => {
                map.shift_remove("type");
                nullable = true;
            }
            Some(Value::Array(ts)) => {
                let total = ts.len();
                let kept: Vec<Value> = ts.into_iter().filter(|t| t != "null").collect();
                nullable |= kept.len() < total;
                if kept.len() == 1 {
                    map.insert("type".into(), kept[0].clone());
                } else {
                    map.shift_remove("type");
                    if kept.len() > 1 {
                        let branches = kept
                            .into_iter()
                            .map(|t| {
                                let mut m = Map::new();
                                m.insert("type".into(), t);
                                Value::Object(m)
                            })
                            .collect();
                        map.insert("anyOf".into(), Value::Array(branches));
                    }
                }
            }
            _ => {}
        }
        if let Some(c) = map.shift_remove("const") {
            if let Value::String(_) = c {
                map.insert("enum".into(), Value::Array(vec![c]));
                map.entry("type").or_insert(Value::String("string".into()));
            } else {
                notes.push(("const".into(), c));
            }
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            let non_null: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
            nullable |= non_null.len() < values.len();
            if non_null.iter().all(Value::is_string) && !non_null.is_empty() {
                map.insert("enum".into(), Value::Array(non_null));
                map.entry("type").or_insert(Value::String("string".into()));
            } else if let Some(e) = map.shift_remove("enum") {
                notes.push(("enum".into(), e));
            }
        }
        if map.get("default") == Some(&Value::Null) {
            map.shift_remove("default");
        }
        if matches!(map.get("additionalProperties"), Some(Value::Bool(_))) {
            map.shift_remove("additionalProperties");
        }
        if let Some(Value::String(f)) = map.get("format") {
            if !GEMINI_FORMATS.contains(&f.as_str()) {
                if let Some(f) = map.shift_remove("format") {
                    notes.push(("format".into(), f));
                }
            }
        }
        if matches!(map.get("items"), Some(v) if !v.is_object()) {
            if let Some(items) = map.shift_remove("items") {
                notes.push(("items".into(), items));
            }
        }
        // Schema-valued keywords that move into the description get their `$ref`s inlined first.
        if let Some(ap) = map.get("additionalProperties").cloned() {
            map.insert("additionalProperties".into(), self.node(&ap, depth + 1)?);
        }
        if let Some(Value::Array(prefix)) = map.get("prefixItems").cloned() {
            let out = prefix
                .iter()
                .map(|b| self.node(b, depth + 1))
                .collect::<Result<Vec<_>, _>>()?;
            map.insert("prefixItems".into(), Value::Array(out));
        }
        let unsupported: Vec<String> = map
            .keys()
            .filter(|k| !GEMINI_KEPT.contains(&k.as_str()))
            .cloned()
            .collect();
        for k in unsupported {
            if let Some(v) = map.shift_remove(&k) {
                notes.push((k, v));
            }
        }
        if let Some(items) = map.get("items").cloned() {
            map.insert("items".into(), self.node(&items, depth + 1)?);
        }
        if let Some(Value::Object(props)) = map.get("properties").cloned() {
            let mut out = Map::new();
            for (k, v) in &props {
                out.insert(k.clone(), self.node(v, depth + 1)?);
            }
            map.insert("properties".into(), Value::Object(out));
        }
        add_notes(&mut map, &notes);
        if nullable {
            map.insert("nullable".into(), Value::Bool(true));
        }
        Ok(Value::Object(map))
    }

    fn inline(
        &mut self,
        reference: &str,
        mut siblings: Map<String, Value>,
        depth: usize,
    ) -> Result<Value, CoreError> {
        siblings.shift_remove("$ref");
        let name = reference.strip_prefix("#/$defs/").unwrap_or("");
        let target = self.defs.get(name).cloned();
        let Some(Value::Object(target)) = target else {
            let mut out = siblings;
            add_notes(
                &mut out,
                &[("$ref".into(), Value::String(reference.into()))],
            );
            return self.node(&Value::Object(out), depth + 1);
        };
        if self.stack.iter().any(|n| n == name) {
            let mut out = Map::new();
            out.insert("type".into(), Value::String("object".into()));
            if let Some(d) = siblings.get("description") {
                out.insert("description".into(), d.clone());
            }
            add_notes(
                &mut out,
                &[("recursive".into(), Value::String(name.into()))],
            );
            return Ok(Value::Object(out));
        }
        let mut merged = target;
        for (k, v) in siblings {
            merged.insert(k, v);
        }
        self.stack.push(name.to_string());
        let out = self.node(&Value::Object(merged), depth + 1);
        self.stack.pop();
        out
    }
}
