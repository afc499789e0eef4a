//! Instance validation against a JSON Schema, with the `jsonschema` crate (default features off:
//! no `$ref` is ever fetched over the network or from files).

use jsonschema::json::{Json, SerdeJson};
use serde_json::Value;

use crate::errors::CoreError;

/// One reason an instance fails its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// JSON pointer (RFC 6901) of the failing value in the instance; `""` is the whole instance.
    pub pointer: String,
    /// The schema keyword that failed (`type`, `required`, `additionalProperties`, ...).
    pub keyword: String,
    /// Human-readable reason, from the `jsonschema` crate.
    pub message: String,
}

/// The error of `validate_json(..., int64=True)` for an integer outside the signed 64-bit range.
pub const BEYOND_INT64: &str = "integer out of the signed 64-bit range (int64=True)";

/// Whether `value` holds an integer above `i64::MAX` (`serde_json` keeps those up to `u64::MAX`;
/// larger ones and those below `i64::MIN` are floats, refused as lossy before this check).
#[must_use]
pub fn beyond_int64(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) if n.is_u64() && n.as_i64().is_none() => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    false
}

/// A compiled schema, validating instances in the JSON representation `F` (`serde_json::Value` by
/// default; the binding also validates the Python objects it parsed, `rust/py/schema/objects.rs`).
pub struct Validator<F: Json = SerdeJson> {
    inner: jsonschema::Validator<F>,
}

impl<F: Json> Validator<F> {
    /// Compile `schema` (the dialect comes from its `$schema`, else 2020-12).
    ///
    /// # Errors
    /// [`CoreError`] when `schema` is not a valid JSON Schema or references something that is
    /// not inside it.
    pub fn new(schema: &Value) -> Result<Self, CoreError> {
        jsonschema::options_for::<F>()
            .build(schema)
            .map(|inner| Validator { inner })
            .map_err(|e| CoreError::Schema(format!("invalid JSON Schema: {e}")))
    }

    /// Whether `instance` is valid (faster than [`Validator::issues`]).
    #[must_use]
    pub fn is_valid(&self, instance: F::Node<'_>) -> bool {
        self.inner.is_valid(instance)
    }

    /// Every failure, in the crate's order.
    #[must_use]
    pub fn issues<'i>(&'i self, instance: F::Node<'i>) -> Vec<Issue> {
        self.inner
            .iter_errors(instance)
            .map(|e| Issue {
                pointer: e.instance_path().to_string(),
                keyword: e.kind().keyword().to_string(),
                message: e.to_string(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn issues_have_pointers() {
        let v: Validator = Validator::new(&json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}, "b": {}},
                                       "required": ["b"], "additionalProperties": false}))
        .unwrap();
        let mut issues = v.issues(&json!({"a": [1, "x"], "c": 1}));
        issues.sort_by(|a, b| a.pointer.cmp(&b.pointer));
        let got: Vec<(&str, &str)> = issues
            .iter()
            .map(|i| (i.pointer.as_str(), i.keyword.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("", "additionalProperties"),
                ("", "required"),
                ("/a/1", "type")
            ]
        );
        assert!(v.is_valid(&json!({"b": 1})));
    }

    #[test]
    fn integers_beyond_int64_are_found_at_any_depth() {
        assert!(!beyond_int64(
            &json!({"a": [1, -9_223_372_036_854_775_808_i64, 9_223_372_036_854_775_807_i64, 1.5e300]})
        ));
        assert!(beyond_int64(
            &json!({"a": [{"b": 9_223_372_036_854_775_808_u64}]})
        ));
        assert!(beyond_int64(&json!(18_446_744_073_709_551_615_u64)));
    }

    #[test]
    fn bad_schema_is_an_error() {
        assert!(Validator::<SerdeJson>::new(&json!({"type": 3})).is_err());
    }
}
