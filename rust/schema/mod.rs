//! JSON Schema post-processing and validation (DESIGN section 3 and 7).
//!
//! Pure Rust over [`serde_json::Value`]; `rust/py/schema.rs` is the binding. Every function has a
//! pure-Python twin in `toolweave._reference.schema` with the same results.
//!
//! * [`hoist_defs_to_root`]: Spring AI's `JsonSchemaGenerator` hoisting of each parameter's `$defs`.
//! * [`forbid_additional_properties`]: `additionalProperties: false` on every object node with
//!   `properties` and no `additionalProperties` of its own.
//! * [`upper_case_type_values`]: `"type": "string"` -> `"STRING"` (Spring `UPPER_CASE_TYPE_VALUES`).
//! * [`dialect::to_dialect`]: provider dialects (OpenAI strict, Gemini, Anthropic).
//! * [`validate::Validator`]: instance validation with the `jsonschema` crate, errors with JSON pointers.

pub mod dialect;
pub mod validate;

use crate::errors::CoreError;
use serde_json::{Map, Value};

/// Keywords whose values are data, not schemas: never rewritten by the tree walks.
pub(crate) const LITERAL_KEYWORDS: [&str; 4] = ["enum", "const", "default", "examples"];

/// Deepest nesting the walks accept; deeper input is refused rather than overflowing the stack.
pub const MAX_DEPTH: usize = 256;

pub(crate) fn too_deep() -> CoreError {
    CoreError::Schema(format!("schema nested deeper than {MAX_DEPTH} levels"))
}

/// Move `schema["$defs"]` into `root_defs` and return the schema without it.
///
/// Per definition name: absent from `root_defs` -> inserted; present and identical -> reused;
/// present and different -> inserted as `<Name>_2`, `<Name>_3`, ... (the first suffix used by
/// neither `root_defs`, the moved definitions nor an earlier rename), and every `#/$defs/<Name>`
/// reference is rewritten, in the moved schema and in the definitions this call inserts only;
/// references with a path tail (`#/$defs/<Name>/properties/y`) keep it.
///
/// # Errors
/// [`CoreError`] when the schema nests deeper than [`MAX_DEPTH`].
pub fn hoist_defs_to_root(
    mut schema: Value,
    root_defs: &mut Map<String, Value>,
) -> Result<Value, CoreError> {
    let local = match schema.as_object_mut().and_then(|o| o.shift_remove("$defs")) {
        Some(Value::Object(local)) => local,
        Some(other) => {
            // A `$defs` that is not an object is not ours to interpret: leave it in place.
            if let Some(o) = schema.as_object_mut() {
                o.insert("$defs".into(), other);
            }
            return Ok(schema);
        }
        None => return Ok(schema),
    };
    let mut renames: Vec<(String, String)> = Vec::new();
    for (name, definition) in &local {
        match root_defs.get(name) {
            Some(existing) if existing != definition => {
                let mut suffix = 2usize;
                loop {
                    let candidate = format!("{name}_{suffix}");
                    let used = root_defs.contains_key(&candidate)
                        || local.contains_key(&candidate)
                        || renames.iter().any(|(_, new)| *new == candidate);
                    if !used {
                        renames.push((name.clone(), candidate));
                        break;
                    }
                    suffix += 1;
                }
            }
            _ => {}
        }
    }
    if !renames.is_empty() {
        rewrite_refs(&mut schema, &renames, 0)?;
    }
    for (name, mut definition) in local {
        if !renames.is_empty() {
            rewrite_refs(&mut definition, &renames, 0)?;
        }
        let target = renames
            .iter()
            .find(|(old, _)| *old == name)
            .map_or(name, |(_, new)| new.clone());
        root_defs.entry(target).or_insert(definition);
    }
    Ok(schema)
}

fn rewrite_refs(
    node: &mut Value,
    renames: &[(String, String)],
    depth: usize,
) -> Result<(), CoreError> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    match node {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref") {
                // `#/$defs/<Name>` or `#/$defs/<Name>/<tail>`: the tail (a path into the definition) is kept
                let renamed = r.strip_prefix("#/$defs/").and_then(|rest| {
                    let (name, tail) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
                    renames
                        .iter()
                        .find(|(old, _)| old == name)
                        .map(|(_, new)| format!("#/$defs/{new}{tail}"))
                });
                if let Some(renamed) = renamed {
                    *r = renamed;
                }
            }
            for value in map.values_mut() {
                rewrite_refs(value, renames, depth + 1)?;
            }
        }
        Value::Array(items) => {
            for item in items {
                rewrite_refs(item, renames, depth + 1)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Add `additionalProperties: false` to every object node that has `properties` and no
/// `additionalProperties` of its own (so a map schema keeps its value schema), as Spring AI's
/// `JsonSchemaGenerator` does unless `ALLOW_ADDITIONAL_PROPERTIES_BY_DEFAULT` is set.
///
/// Literal values (`enum`, `const`, `default`, `examples`) are not walked.
///
/// # Errors
/// [`CoreError`] when the schema nests deeper than [`MAX_DEPTH`].
pub fn forbid_additional_properties(node: &mut Value) -> Result<(), CoreError> {
    forbid(node, 0)
}

fn forbid(node: &mut Value, depth: usize) -> Result<(), CoreError> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    match node {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (key, value) in map.iter_mut() {
                if !LITERAL_KEYWORDS.contains(&key.as_str()) {
                    forbid(value, depth + 1)?;
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                forbid(item, depth + 1)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Upper-case every string value of a `type` keyword (also inside `type` arrays), as Spring AI's
/// `SchemaOption.UPPER_CASE_TYPE_VALUES` does for Vertex AI / Gemini's OpenAPI form.
///
/// A property *named* `type` is a schema (an object), so it is walked, not upper-cased. Literal
/// values (`enum`, `const`, `default`, `examples`) are not walked.
///
/// # Errors
/// [`CoreError`] when the schema nests deeper than [`MAX_DEPTH`].
pub fn upper_case_type_values(node: &mut Value) -> Result<(), CoreError> {
    upper(node, 0)
}

fn upper(node: &mut Value, depth: usize) -> Result<(), CoreError> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    match node {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "type" {
                    match value {
                        Value::String(s) => *s = s.to_uppercase(),
                        Value::Array(items) => {
                            for item in items.iter_mut() {
                                if let Value::String(s) = item {
                                    *s = s.to_uppercase();
                                }
                            }
                        }
                        other => upper(other, depth + 1)?,
                    }
                } else if !LITERAL_KEYWORDS.contains(&key.as_str()) {
                    upper(value, depth + 1)?;
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                upper(item, depth + 1)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hoist_rewrites_refs_with_a_path_tail() {
        let mut root = Map::new();
        root.insert("A".into(), json!({"properties": {"y": {"type": "string"}}}));
        let s = json!({"properties": {"i": {"$ref": "#/$defs/A/properties/y"}, "o": {"$ref": "#/$defs/AB/properties/z"}},
                       "$defs": {"A": {"properties": {"y": {"type": "integer"}, "s": {"$ref": "#/$defs/A/properties/y"}}},
                                 "AB": {"properties": {"z": {}}}}});
        let out = hoist_defs_to_root(s, &mut root).unwrap();
        assert_eq!(
            out["properties"]["i"],
            json!({"$ref": "#/$defs/A_2/properties/y"})
        );
        assert_eq!(
            out["properties"]["o"],
            json!({"$ref": "#/$defs/AB/properties/z"})
        );
        assert_eq!(
            root["A_2"]["properties"]["s"],
            json!({"$ref": "#/$defs/A_2/properties/y"})
        );
    }

    #[test]
    fn hoist_reuses_identical_and_renames_different() {
        let mut root = Map::new();
        let a = json!({"items": {"$ref": "#/$defs/Item"}, "$defs": {"Item": {"properties": {"a": {}}}}});
        let b = json!({"items": {"$ref": "#/$defs/Item"}, "$defs": {"Item": {"properties": {"b": {}}}}});
        let a2 = a.clone();
        assert_eq!(
            hoist_defs_to_root(a, &mut root).unwrap(),
            json!({"items": {"$ref": "#/$defs/Item"}})
        );
        assert_eq!(
            hoist_defs_to_root(a2, &mut root).unwrap(),
            json!({"items": {"$ref": "#/$defs/Item"}})
        );
        assert_eq!(root.len(), 1);
        let out = hoist_defs_to_root(b, &mut root).unwrap();
        assert_eq!(out, json!({"items": {"$ref": "#/$defs/Item_2"}}));
        assert_eq!(root["Item_2"], json!({"properties": {"b": {}}}));
    }

    #[test]
    fn hoist_skips_used_suffixes_and_rewrites_inside_moved_defs() {
        let mut root = Map::new();
        root.insert("Node".into(), json!({"type": "string"}));
        root.insert("Node_2".into(), json!({"type": "integer"}));
        let s = json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"properties": {"next": {"$ref": "#/$defs/Node"}}}}});
        let out = hoist_defs_to_root(s, &mut root).unwrap();
        assert_eq!(out, json!({"$ref": "#/$defs/Node_3"}));
        assert_eq!(
            root["Node_3"],
            json!({"properties": {"next": {"$ref": "#/$defs/Node_3"}}})
        );
        assert_eq!(root["Node"], json!({"type": "string"}));
    }

    #[test]
    fn forbid_keeps_map_value_schema_and_literals() {
        let mut s = json!({"properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}},
                           "d": {"default": {"properties": {}}}}});
        forbid_additional_properties(&mut s).unwrap();
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(
            s["properties"]["m"]["additionalProperties"],
            json!({"type": "integer"})
        );
        assert_eq!(s["properties"]["d"]["default"], json!({"properties": {}}));
    }

    #[test]
    fn upper_case_types_not_property_names() {
        let mut s = json!({"type": "object", "properties": {"type": {"type": ["string", "null"]}},
                           "enum": [{"type": "x"}]});
        upper_case_type_values(&mut s).unwrap();
        assert_eq!(s["type"], json!("OBJECT"));
        assert_eq!(s["properties"]["type"]["type"], json!(["STRING", "NULL"]));
        assert_eq!(s["enum"], json!([{"type": "x"}]));
    }

    #[test]
    fn too_deep_is_an_error() {
        let mut s = json!({});
        for _ in 0..300 {
            s = json!({ "items": s });
        }
        assert!(forbid_additional_properties(&mut s).is_err());
    }
}
