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

use serde_json::{Map, Value};

use super::{too_deep, MAX_DEPTH};
use crate::errors::CoreError;

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

/// Rewrite `schema` for `dialect`; the input is not modified.
///
/// # Errors
/// [`CoreError`] when the schema nests deeper than [`super::MAX_DEPTH`] or (Gemini) inlining
/// would produce more than [`MAX_NODES`] nodes.
pub fn to_dialect(schema: &Value, dialect: Dialect) -> Result<Value, CoreError> {
    match dialect {
        Dialect::Anthropic => Ok(schema.clone()),
        Dialect::OpenAiStrict => {
            let mut out = schema.clone();
            strict(&mut out, 0)?;
            Ok(out)
        }
        Dialect::Gemini => {
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
    }
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

/// Append `notes` to the description of `map`, as `desc (k: v; k2: v2)` or `k: v; k2: v2`.
fn add_notes(map: &mut Map<String, Value>, notes: &[(String, Value)]) {
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
fn normalise(map: &mut Map<String, Value>) {
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

fn is_null_schema(v: &Value) -> bool {
    v.get("type") == Some(&Value::String("null".into()))
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

fn null_schema() -> Value {
    let mut m = Map::new();
    m.insert("type".into(), Value::String("null".into()));
    Value::Object(m)
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
