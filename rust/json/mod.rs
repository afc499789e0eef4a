//! Strict parsing of tool-call arguments.
//!
//! Values are parsed in one pass by [`onepass`] (the binding's fast path: Python objects straight
//! from the text, numbers decoded by jiter; the pure builder uses jiter's own parser). When that
//! fails, [`locate_error`] walks the text with a small strict-JSON scanner of our own ([`scan`]) to
//! report a stable, parser-independent position and reason ([`error`]). The pure-Python twin
//! (`toolweave._reference.json`) implements the same scanner, so both implementations raise
//! identical errors. [`modes`] holds the order in which
//! the partial and lenient modes try their readings, for any builder of values (jiter's
//! [`JsonValue`] here, Python objects in the binding).
//!
//! Rules (RFC 8259, no extensions):
//! - empty or JSON-whitespace-only text (space, tab, LF, CR) means "no arguments": `{}`;
//! - the value must be an object; other JSON values are rejected after a successful parse;
//! - a value nested deeper than [`MAX_DEPTH`] levels is rejected (the top-level value is depth 0);
//!   callers may set a lower limit (`max_depth`), checked by [`deeper_than`] after a parse;
//! - `\u` escapes must not leave a lone surrogate; raw control characters are not allowed in strings;
//! - a number whose integer part has more than [`MAX_INT_DIGITS`] digits is rejected ("number too
//!   large"), floats included: converting such text to an `int` takes quadratic time (the reason
//!   for CPython's own 4300-digit limit), and jiter refuses it too;
//! - duplicate keys: the last value wins; integers stay exact; overflowing floats are infinite.

mod error;
pub mod incremental;
pub mod modes;
pub mod onepass;
pub mod partial;
mod scan;

use jiter::{JsonObject, JsonValue};

pub use error::{
    depth_reason, error_for, error_within, invalid_utf8, lone_surrogate, make_error, not_an_object,
    EXCERPT_RADIUS,
};
pub use modes::Mode;
pub use scan::{
    deeper_than, locate_error, locate_error_within, MAX_INT_DIGITS, NUMBER_TOO_LARGE, TOO_DEEP,
};

use crate::errors::CoreError;

/// Deepest nesting level a value may have (same as jiter's recursion limit): the default and the
/// largest value of every `max_depth` option.
pub const MAX_DEPTH: usize = 200;

/// True when `text` holds only JSON whitespace (or nothing).
pub fn is_blank(text: &[u8]) -> bool {
    text.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// Parse `text` as a strict JSON object.
///
/// # Errors
/// [`CoreError::InvalidArguments`] (position, reason) when it is not UTF-8, not JSON or not an object.
pub fn parse_arguments(text: &[u8]) -> Result<JsonObject<'static>, CoreError> {
    parse_arguments_mode(text, Mode::Strict, MAX_DEPTH)
}

/// Parse `text` in `mode` (see [`modes`]) as an object nested at most `max_depth` (1 ..= 200) levels deep.
///
/// # Errors
/// [`CoreError::InvalidArguments`] when no reading of the mode gives an object: the strict error of the text.
pub fn parse_arguments_mode(
    text: &[u8],
    mode: Mode,
    max_depth: usize,
) -> Result<JsonObject<'static>, CoreError> {
    match std::str::from_utf8(text) {
        Ok(t) => modes::parse(&modes::Values, t, mode, max_depth),
        Err(e) => Err(invalid_utf8(text, e.valid_up_to())),
    }
}

/// The value of `key` in `obj`; with duplicate keys the last one wins (like Python's `json`).
pub fn get<'a, 's>(obj: &'a JsonObject<'s>, key: &str) -> Option<&'a JsonValue<'s>> {
    obj.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// The JSON type of `v` as errors name it (`object`, `array`, `string`, `number`, `boolean`, `null`).
pub fn kind_name(v: &JsonValue<'_>) -> &'static str {
    match v {
        JsonValue::Null => "null",
        JsonValue::Bool(_) => "boolean",
        JsonValue::Int(_) | JsonValue::BigInt(_) | JsonValue::Float(_) => "number",
        JsonValue::Str(_) => "string",
        JsonValue::Array(_) => "array",
        JsonValue::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> (usize, String, String) {
        match parse_arguments(text.as_bytes()) {
            Err(CoreError::InvalidArguments {
                position,
                reason,
                message,
                ..
            }) => (position, reason, message),
            other => panic!("expected an error for {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn parses_objects() {
        let obj = parse_arguments(br#"{"a": 1, "b": [true, null], "c": {"d": "\u00e9"}}"#).unwrap();
        assert_eq!(obj.len(), 3);
        assert!(parse_arguments(b"").unwrap().is_empty());
        assert!(parse_arguments(b" \n\t\r ").unwrap().is_empty());
        let big = parse_arguments(br#"{"n": 123456789012345678901234567890}"#).unwrap();
        assert!(matches!(get(&big, "n"), Some(JsonValue::BigInt(_))));
    }

    #[test]
    fn duplicate_keys_last_wins() {
        let obj = parse_arguments(br#"{"a": 1, "a": 2}"#).unwrap();
        assert_eq!(get(&obj, "a"), Some(&JsonValue::Int(2)));
    }

    #[test]
    fn error_positions() {
        let (pos, reason, msg) = err(r#"{"a": tru"#);
        assert_eq!((pos, reason.as_str()), (6, "expected a value"));
        assert_eq!(msg, "invalid tool arguments at line 1 column 7 (char 6): expected a value near '{\"a\": tru'");
        assert_eq!(err(r#"{"a": 1,}"#).0, 8);
        assert_eq!(err(r#"{"a" 1}"#).1, "expected ':'");
        assert_eq!(err(r#"{"a": 1 "b": 2}"#).1, "expected ',' or '}'");
        assert_eq!(err(r#"{"a": [1 2]}"#).1, "expected ',' or ']'");
        assert_eq!(err(r#"{"a": "x"#).1, "unterminated string");
        assert_eq!(err(r#"{"a": "x"#).0, 6);
        assert_eq!(
            err("{\"a\": \"\u{1}\"}").1,
            "invalid control character in string"
        );
        assert_eq!(err(r#"{"a": "\x"}"#).1, "invalid escape");
        assert_eq!(err(r#"{"a": "\ud800"}"#).1, "invalid surrogate escape");
        assert_eq!(err(r#"{"a": "\udc00"}"#).1, "invalid surrogate escape");
        assert_eq!(err(r#"{"a": 01}"#).1, "expected ',' or '}'");
        assert_eq!(err(r#"{"a": 1.}"#).1, "invalid number");
        assert_eq!(err(r#"{"a": -}"#).1, "invalid number");
        assert_eq!(err(r#"{"a": NaN}"#).1, "expected a value");
        assert_eq!(
            err(r#"{} x"#),
            (3, "extra data after the JSON value".into(), err("{} x").2)
        );
        assert_eq!(err("[1, 2]").1, "expected a JSON object, got array");
        assert_eq!(err("  \"s\"").0, 2);
        assert_eq!(err("\u{feff}{}").1, "expected a value");
        assert_eq!(err("{").1, "expected a string key or '}'");
        assert_eq!(err("[").1, "expected a value or ']'");
    }

    #[test]
    fn positions_count_characters_and_lines() {
        let (pos, _, msg) = err("{\"é\":\n  x}");
        assert_eq!(pos, 8);
        assert!(
            msg.starts_with("invalid tool arguments at line 2 column 3 (char 8)"),
            "{msg}"
        );
    }

    #[test]
    fn invalid_utf8_position() {
        match parse_arguments(b"{\"a\xc3\xa9\": \"\xff\"}") {
            Err(CoreError::InvalidArguments {
                position, reason, ..
            }) => {
                assert_eq!((position, reason.as_str()), (8, "invalid UTF-8"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn integer_digit_limit() {
        let ok = format!("{{\"a\": -{}}}", "9".repeat(MAX_INT_DIGITS));
        assert!(parse_arguments(ok.as_bytes()).is_ok());
        for bad in [
            format!("{{\"a\": {}}}", "9".repeat(MAX_INT_DIGITS + 1)),
            format!("{{\"a\": -{}.5}}", "9".repeat(5000)),
        ] {
            let (pos, reason, _) = err(&bad);
            assert_eq!((pos, reason.as_str()), (6, NUMBER_TOO_LARGE));
        }
    }
}
