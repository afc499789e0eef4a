//! Provider dialects: rewrite a 2020-12 input schema into what one provider accepts.
//!
//! Beyond Spring AI (DESIGN section 3). Keywords a provider rejects are not dropped silently:
//! they move into the node's `description` as `key: <compact JSON>` (joined by `; `, in brackets
//! after an existing description), so the model still reads the constraint.
//!
//! | dialect | what changes |
//! |---|---|
//! | `openai-strict` | every object node: `required` = all its properties, a property that was not required becomes nullable (`type: [T, "null"]`, `null` added to `enum`, a null branch added to `anyOf`, a `$ref` wrapped in `anyOf` with null); `additionalProperties: false` unless it has a schema value (maps: unsupported by OpenAI strict, left as is); `oneOf` -> `anyOf`; a one-element `allOf` is merged; `default: null` and `$schema` removed; kept keywords: `type properties required additionalProperties items anyOf enum const $ref $defs description title pattern format minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minItems maxItems`; every other keyword (a non-null `default`, `minLength`, `uniqueItems`, `discriminator`, `prefixItems` ...) moves into the description. Applies inside `properties`, `items`, `anyOf` branches, `$defs` and map value schemas. |
//! | `gemini` | the OpenAPI 3.0 subset of Gemini function declarations: every `$ref` inlined from `$defs` (a recursive reference becomes `{"type": "object"}` with a note), `$defs` and `$schema` removed; null handled the Gemini way (`anyOf` null branch or `"null"` in `type` -> `nullable: true`, a single remaining branch merged into the node); `oneOf` -> `anyOf`; a one-element `allOf` merged; a string `const` -> `enum: [c]`; boolean `additionalProperties` removed; `format` kept only for `date-time`, `enum`, `int32`, `int64`, `float`, `double`; kept keywords: `type format description nullable enum properties required items minItems maxItems minimum maximum anyOf title minLength maxLength pattern minProperties maxProperties default propertyOrdering example`; a non-string `enum`/`const`, tuples (`prefixItems`) and every other keyword move into the description. Type names stay lower-case (apply `upper_case_type_values` for the proto form). A schema that takes no parameters (an object with no or empty `properties` and no `anyOf`) gives `null`: send the declaration without `parameters` (Gemini documents `parameters` as optional, "for function with no parameters, this can be left unset", and rejects an `OBJECT` with empty `properties`). |
//! | `anthropic` | nothing: Anthropic takes plain JSON Schema 2020-12 (a deep copy is returned). |
//!
//! One file per rewriting dialect: `openai.rs` (`openai-strict`), `gemini.rs`; this module holds
//! the dialect names and the helpers both use.

mod gemini;
mod openai;

use serde_json::{Map, Value};

use crate::errors::CoreError;
pub use gemini::MAX_NODES;

/// The provider dialects of [`to_dialect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// OpenAI structured outputs / `strict: true` function calling.
    OpenAiStrict,
    /// Gemini function declarations (OpenAPI 3.0 subset).
    Gemini,
    /// Anthropic tool `input_schema` (plain 2020-12).
    Anthropic,
}

/// Dialect names accepted by [`Dialect::parse`].
pub const DIALECTS: [&str; 3] = ["openai-strict", "gemini", "anthropic"];

impl Dialect {
    /// `"openai-strict" | "gemini" | "anthropic"` -> [`Dialect`].
    ///
    /// # Errors
    /// [`CoreError`] naming the supported dialects.
    pub fn parse(name: &str) -> Result<Self, CoreError> {
        match name {
            "openai-strict" => Ok(Dialect::OpenAiStrict),
            "gemini" => Ok(Dialect::Gemini),
            "anthropic" => Ok(Dialect::Anthropic),
            _ => Err(CoreError::Schema(format!(
                "unknown schema dialect {name:?}; supported: {}",
                DIALECTS.join(", ")
            ))),
        }
    }
}

/// Rewrite `schema` for `dialect`; the input is not modified.
///
/// # Errors
/// [`CoreError`] when the schema nests deeper than [`super::MAX_DEPTH`] or (Gemini) inlining
/// would produce more than [`gemini::MAX_NODES`] nodes.
pub fn to_dialect(schema: &Value, dialect: Dialect) -> Result<Value, CoreError> {
    match dialect {
        Dialect::Anthropic => Ok(schema.clone()),
        Dialect::OpenAiStrict => openai::to_openai_strict(schema),
        Dialect::Gemini => gemini::to_gemini(schema),
    }
}

/// Append `notes` to the description of `map`, as `desc (k: v; k2: v2)` or `k: v; k2: v2`.
pub(super) fn add_notes(map: &mut Map<String, Value>, notes: &[(String, Value)]) {
    if notes.is_empty() {
        return;
    }
    let text = notes
        .iter()
        .map(|(k, v)| format!("{k}: {}", serde_json::to_string(v).unwrap_or_default()))
        .collect::<Vec<_>>()
        .join("; ");
    let description = match map.get("description") {
        Some(Value::String(d)) if !d.is_empty() => format!("{d} ({text})"),
        _ => text,
    };
    map.insert("description".into(), Value::String(description));
}

/// `oneOf` -> `anyOf` (when there is no `anyOf`), one-element `allOf` merged into the node.
pub(super) fn normalise(map: &mut Map<String, Value>) {
    if !map.contains_key("anyOf") {
        if let Some(one) = map.shift_remove("oneOf") {
            map.insert("anyOf".into(), one);
        }
    }
    let single =
        matches!(map.get("allOf"), Some(Value::Array(a)) if a.len() == 1 && a[0].is_object());
    if single {
        if let Some(Value::Array(mut all)) = map.shift_remove("allOf") {
            if let Some(Value::Object(inner)) = all.pop() {
                for (k, v) in inner {
                    map.entry(k).or_insert(v);
                }
            }
        }
    }
}

pub(super) fn is_null_schema(v: &Value) -> bool {
    v.get("type") == Some(&Value::String("null".into()))
}

pub(super) fn null_schema() -> Value {
    let mut m = Map::new();
    m.insert("type".into(), Value::String("null".into()));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_strict_requires_all_and_nulls_optional() {
        let s = json!({"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer", "default": 3}},
                       "required": ["q"]});
        let out = to_dialect(&s, Dialect::OpenAiStrict).unwrap();
        assert_eq!(out["required"], json!(["q", "n"]));
        assert_eq!(
            out["properties"]["n"],
            json!({"type": ["integer", "null"], "description": "default: 3"})
        );
        assert_eq!(out["additionalProperties"], json!(false));
    }

    #[test]
    fn openai_strict_one_of_to_any_of_inside_defs() {
        let s = json!({"type": "object", "properties": {"v": {"oneOf": [{"$ref": "#/$defs/A"}], "discriminator": {"propertyName": "k"}}},
                       "required": ["v"], "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}}}}});
        let out = to_dialect(&s, Dialect::OpenAiStrict).unwrap();
        assert_eq!(
            out["properties"]["v"]["anyOf"],
            json!([{"$ref": "#/$defs/A"}])
        );
        assert_eq!(
            out["properties"]["v"]["description"],
            json!("discriminator: {\"propertyName\":\"k\"}")
        );
        assert_eq!(out["$defs"]["A"]["required"], json!(["x"]));
        assert_eq!(
            out["$defs"]["A"]["properties"]["x"]["type"],
            json!(["integer", "null"])
        );
    }

    #[test]
    fn gemini_inlines_and_nullable() {
        let s = json!({"$schema": "x", "type": "object", "properties": {
            "a": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}], "description": "an A"},
            "n": {"$ref": "#/$defs/Node"}},
            "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}}, "additionalProperties": false},
                      "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}});
        let out = to_dialect(&s, Dialect::Gemini).unwrap();
        assert_eq!(
            out["properties"]["a"],
            json!({"description": "an A", "type": "object",
            "properties": {"x": {"type": "integer"}}, "nullable": true})
        );
        assert_eq!(
            out["properties"]["n"]["properties"]["next"],
            json!({"type": "object", "description": "recursive: \"Node\""})
        );
        assert!(out.get("$defs").is_none() && out.get("$schema").is_none());
    }

    #[test]
    fn gemini_schema_without_parameters_is_null() {
        for s in [
            json!({"type": "object", "properties": {}, "required": []}),
            json!({"type": "object", "additionalProperties": false}),
            json!({}),
        ] {
            assert_eq!(to_dialect(&s, Dialect::Gemini).unwrap(), Value::Null, "{s}");
        }
        for s in [
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            json!({"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]}),
            json!({"type": "string"}),
        ] {
            assert_ne!(to_dialect(&s, Dialect::Gemini).unwrap(), Value::Null, "{s}");
        }
    }

    #[test]
    fn unknown_dialect() {
        assert!(Dialect::parse("x")
            .unwrap_err()
            .to_string()
            .contains("openai-strict"));
    }
}
