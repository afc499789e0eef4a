//! Instance validation against a JSON Schema, with the `jsonschema` crate (default features off:
//! no `$ref` is ever fetched over the network or from files).

use serde_json::Value;

use super::SchemaError;

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

/// A compiled schema.
pub struct Validator {
    inner: jsonschema::Validator,
}

impl Validator {
    /// Compile `schema` (the dialect comes from its `$schema`, else 2020-12).
    ///
    /// # Errors
    /// [`SchemaError`] when `schema` is not a valid JSON Schema or references something that is
    /// not inside it.
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        jsonschema::validator_for(schema)
            .map(|inner| Validator { inner })
            .map_err(|e| SchemaError(format!("invalid JSON Schema: {e}")))
    }

    /// Whether `instance` is valid (faster than [`Validator::issues`]).
    #[must_use]
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.inner.is_valid(instance)
    }

    /// Every failure, in the crate's order.
    #[must_use]
    pub fn issues(&self, instance: &Value) -> Vec<Issue> {
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
        let v = Validator::new(&json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}, "b": {}},
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
    fn bad_schema_is_an_error() {
        assert!(Validator::new(&json!({"type": 3})).is_err());
    }
}
