//! Strict parsing of tool-call arguments.
//!
//! Values are parsed with `jiter` (the fast path). When that fails, [`locate_error`] walks the text
//! with a small strict-JSON scanner of our own to report a stable, parser-independent position and
//! reason. The pure-Python twin (`toolweave._reference.json`) implements the same scanner, so both
//! implementations raise identical errors.
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

pub mod incremental;
pub mod partial;

use jiter::{JsonObject, JsonValue};

use crate::errors::{show, CoreError};

/// Deepest nesting level a value may have (same as jiter's recursion limit): the default and the
/// largest value of every `max_depth` option.
pub const MAX_DEPTH: usize = 200;

/// The scanner's reason for a value nested too deep; [`depth_reason`] words it with the limit.
pub const TOO_DEEP: &str = "nesting too deep";

/// The reason reported for nesting deeper than `max_depth` levels.
pub fn depth_reason(max_depth: usize) -> String {
    format!("nesting deeper than {max_depth} levels")
}

/// Whether `text` has a value nested deeper than `max_depth` (the top-level value is depth 0)
/// before any syntax error, with the position of the first such value. One `memchr` count for
/// texts with at most `max_depth` brackets (nearly all); a full scan otherwise.
pub fn deeper_than(text: &[u8], max_depth: usize) -> Option<usize> {
    if brackets(text) <= max_depth {
        return None;
    }
    match locate_error_within(text, max_depth) {
        Some((pos, TOO_DEEP)) => Some(pos),
        _ => None,
    }
}

fn brackets(text: &[u8]) -> usize {
    memchr::memchr2_iter(b'[', b'{', text).count()
}

/// Most digits the integer part of a number may have (CPython's default `int` conversion limit).
pub const MAX_INT_DIGITS: usize = 4300;

/// The reason reported for a number with more than [`MAX_INT_DIGITS`] integer digits.
pub const NUMBER_TOO_LARGE: &str = "number too large (more than 4300 integer digits)";

/// Characters shown either side of an error position.
pub const EXCERPT_RADIUS: usize = 20;

/// True when `text` holds only JSON whitespace (or nothing).
pub fn is_blank(text: &[u8]) -> bool {
    text.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// Parse `text` as a strict JSON object.
pub fn parse_arguments(text: &[u8]) -> Result<JsonObject<'static>, CoreError> {
    let text = match std::str::from_utf8(text) {
        Ok(t) => t,
        Err(e) => return Err(invalid_utf8(text, e.valid_up_to())),
    };
    if is_blank(text.as_bytes()) {
        return Ok(JsonObject::default());
    }
    match JsonValue::parse_owned(text.as_bytes(), false, jiter::PartialMode::Off) {
        Ok(JsonValue::Object(obj)) => Ok(obj),
        Ok(other) => Err(not_an_object(text, kind_name(&other))),
        Err(e) => Err(error_for(text, e.index)),
    }
}

/// The value of `key` in `obj`; with duplicate keys the last one wins (like Python's `json`).
pub fn get<'a, 's>(obj: &'a JsonObject<'s>, key: &str) -> Option<&'a JsonValue<'s>> {
    obj.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn kind_name(v: &JsonValue<'_>) -> &'static str {
    match v {
        JsonValue::Null => "null",
        JsonValue::Bool(_) => "boolean",
        JsonValue::Int(_) | JsonValue::BigInt(_) | JsonValue::Float(_) => "number",
        JsonValue::Str(_) => "string",
        JsonValue::Array(_) => "array",
        JsonValue::Object(_) => "object",
    }
}

/// The error for a valid JSON value that is not an object (`kind`: array, string, number, boolean, null).
pub fn not_an_object(text: &str, kind: &str) -> CoreError {
    let start = text.len() - text.trim_start_matches([' ', '\t', '\n', '\r']).len();
    make_error(text, start, &format!("expected a JSON object, got {kind}"))
}

/// The canonical error for text that a parser rejected. `fallback_byte` is the parser's own
/// position, used only if our scanner finds nothing wrong (which would be a bug).
pub fn error_for(text: &str, fallback_byte: usize) -> CoreError {
    error_within(text, fallback_byte, MAX_DEPTH)
}

/// [`error_for`] with nesting limited to `max_depth` (at most [`MAX_DEPTH`]).
pub fn error_within(text: &str, fallback_byte: usize, max_depth: usize) -> CoreError {
    match locate_error_within(text.as_bytes(), max_depth) {
        Some((pos, TOO_DEEP)) => make_error(text, pos, &depth_reason(max_depth)),
        Some((pos, reason)) => make_error(text, pos, reason),
        None => make_error(
            text,
            floor_char_boundary(text, fallback_byte),
            "invalid JSON",
        ),
    }
}

/// The error for bytes that are not UTF-8: positioned at the first bad byte.
pub fn invalid_utf8(data: &[u8], valid_up_to: usize) -> CoreError {
    let lossy = String::from_utf8_lossy(data);
    // The valid prefix decodes to itself, so its byte length is the same in `lossy`.
    make_error(&lossy, valid_up_to, "invalid UTF-8")
}

/// The error for a Python `str` holding a lone surrogate; `text` is the string decoded lossily
/// (each surrogate became U+FFFD characters) and `byte_pos` the first surrogate's position.
pub fn lone_surrogate(text: &str, byte_pos: usize) -> CoreError {
    make_error(
        text,
        floor_char_boundary(text, byte_pos),
        "invalid character (lone surrogate)",
    )
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Build [`CoreError::InvalidArguments`] for byte offset `byte_pos` of `text`.
pub fn make_error(text: &str, byte_pos: usize, reason: &str) -> CoreError {
    let before = &text[..byte_pos];
    let position = before.chars().count();
    let line = 1 + before.bytes().filter(|&b| b == b'\n').count();
    let column = match before.rfind('\n') {
        Some(nl) => before[nl + 1..].chars().count() + 1,
        None => position + 1,
    };
    let start = before
        .char_indices()
        .rev()
        .nth(EXCERPT_RADIUS - 1)
        .map_or(0, |(i, _)| i);
    let after = &text[byte_pos..];
    let end = byte_pos
        + after
            .char_indices()
            .nth(EXCERPT_RADIUS)
            .map_or(after.len(), |(i, _)| i);
    let excerpt = text[start..end].to_string();
    let message = format!(
        "invalid tool arguments at line {line} column {column} (char {position}): {reason} near '{}'",
        show(&excerpt)
    );
    CoreError::InvalidArguments {
        message,
        reason: reason.to_string(),
        position,
        line,
        column,
        excerpt,
    }
}

#[derive(Clone, Copy)]
enum Frame {
    Array,
    Object,
}

/// Scan `text` as strict JSON. Returns the byte offset and reason of the first error, or `None`
/// when it is valid JSON (of any type). Iterative: no recursion however deep the input.
pub fn locate_error(text: &[u8]) -> Option<(usize, &'static str)> {
    locate_error_within(text, MAX_DEPTH)
}

/// [`locate_error`] with values nested deeper than `max_depth` rejected ([`TOO_DEEP`]).
pub fn locate_error_within(text: &[u8], max_depth: usize) -> Option<(usize, &'static str)> {
    let mut s = Scanner { t: text, i: 0 };
    let mut stack: Vec<Frame> = Vec::new();
    s.ws();
    'value: loop {
        // Parse one value at position s.i.
        if stack.len() > max_depth {
            return Some((s.i, TOO_DEEP));
        }
        match s.peek() {
            None => return Some((s.i, "expected a value")),
            Some(b'{') => {
                s.i += 1;
                s.ws();
                match s.peek() {
                    Some(b'}') => s.i += 1,
                    Some(b'"') => {
                        if let Some(e) = s.key() {
                            return Some(e);
                        }
                        stack.push(Frame::Object);
                        continue 'value;
                    }
                    _ => return Some((s.i, "expected a string key or '}'")),
                }
            }
            Some(b'[') => {
                s.i += 1;
                s.ws();
                if s.peek() == Some(b']') {
                    s.i += 1;
                } else {
                    stack.push(Frame::Array);
                    if s.peek().is_none() {
                        return Some((s.i, "expected a value or ']'"));
                    }
                    continue 'value;
                }
            }
            Some(b'"') => {
                if let Some(e) = s.string() {
                    return Some(e);
                }
            }
            Some(b'-' | b'0'..=b'9') => {
                if let Some(e) = s.number() {
                    return Some(e);
                }
            }
            Some(b't') => {
                if let Some(e) = s.literal(b"true") {
                    return Some(e);
                }
            }
            Some(b'f') => {
                if let Some(e) = s.literal(b"false") {
                    return Some(e);
                }
            }
            Some(b'n') => {
                if let Some(e) = s.literal(b"null") {
                    return Some(e);
                }
            }
            Some(_) => return Some((s.i, "expected a value")),
        }
        // After a complete value: close containers / continue them.
        loop {
            s.ws();
            match stack.last() {
                None => {
                    return if s.i < s.t.len() {
                        Some((s.i, "extra data after the JSON value"))
                    } else {
                        None
                    };
                }
                Some(Frame::Array) => match s.peek() {
                    Some(b',') => {
                        s.i += 1;
                        s.ws();
                        continue 'value;
                    }
                    Some(b']') => {
                        s.i += 1;
                        stack.pop();
                    }
                    _ => return Some((s.i, "expected ',' or ']'")),
                },
                Some(Frame::Object) => match s.peek() {
                    Some(b',') => {
                        s.i += 1;
                        s.ws();
                        if s.peek() != Some(b'"') {
                            return Some((s.i, "expected a string key"));
                        }
                        if let Some(e) = s.key() {
                            return Some(e);
                        }
                        continue 'value;
                    }
                    Some(b'}') => {
                        s.i += 1;
                        stack.pop();
                    }
                    _ => return Some((s.i, "expected ',' or '}'")),
                },
            }
        }
    }
}

struct Scanner<'a> {
    t: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.t.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// A key string, whitespace, `:` and whitespace; leaves `i` at the value.
    fn key(&mut self) -> Option<(usize, &'static str)> {
        if let Some(e) = self.string() {
            return Some(e);
        }
        self.ws();
        if self.peek() != Some(b':') {
            return Some((self.i, "expected ':'"));
        }
        self.i += 1;
        self.ws();
        None
    }

    /// Consume `word` (`true`, `false`, `null`), or report `expected a value` at its start.
    fn literal(&mut self, word: &[u8]) -> Option<(usize, &'static str)> {
        if self.t[self.i..].starts_with(word) {
            self.i += word.len();
            None
        } else {
            Some((self.i, "expected a value"))
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let h = self.t.get(at..at + 4)?;
        let s = std::str::from_utf8(h).ok()?;
        if !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(s, 16).ok()
    }

    fn string(&mut self) -> Option<(usize, &'static str)> {
        let open = self.i;
        self.i += 1;
        loop {
            let rest = &self.t[self.i..];
            let Some(off) = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            else {
                return Some((open, "unterminated string"));
            };
            self.i += off;
            match self.t[self.i] {
                b'"' => {
                    self.i += 1;
                    return None;
                }
                b'\\' => {
                    let esc = self.i;
                    match self.t.get(esc + 1) {
                        None => return Some((open, "unterminated string")),
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.i += 2,
                        Some(b'u') => {
                            let Some(cp) = self.hex4(esc + 2) else {
                                return Some((esc, "invalid escape"));
                            };
                            self.i = esc + 6;
                            if (0xDC00..0xE000).contains(&cp) {
                                return Some((esc, "invalid surrogate escape"));
                            }
                            if (0xD800..0xDC00).contains(&cp) {
                                let low = if self.t.get(self.i..self.i + 2) == Some(b"\\u") {
                                    self.hex4(self.i + 2)
                                } else {
                                    None
                                };
                                match low {
                                    Some(lo) if (0xDC00..0xE000).contains(&lo) => self.i += 6,
                                    _ => return Some((esc, "invalid surrogate escape")),
                                }
                            }
                        }
                        Some(_) => return Some((esc, "invalid escape")),
                    }
                }
                _ => return Some((self.i, "invalid control character in string")),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Option<(usize, &'static str)> {
        let start = self.i;
        let bad = Some((start, "invalid number"));
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                if self.digits() > MAX_INT_DIGITS {
                    return Some((start, NUMBER_TOO_LARGE));
                }
            }
            _ => return bad,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return bad;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return bad;
            }
        }
        None
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
    fn depth_limit() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(locate_error(ok.as_bytes()), None);
        let deep = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(
            locate_error(deep.as_bytes()),
            Some((MAX_DEPTH + 1, TOO_DEEP))
        );
        let very = "[".repeat(100_000);
        assert!(locate_error(very.as_bytes()).is_some());
        assert_eq!(deeper_than(b"{\"a\": [[], {}], \"b\": \"[[[\"}", 2), None);
        assert_eq!(deeper_than(b"{\"a\": [[], {}]}", 1), Some(7));
        assert_eq!(deeper_than(b"{\"a\": [[1]]}", 2), Some(8));
        assert_eq!(deeper_than(deep.as_bytes(), MAX_DEPTH), Some(MAX_DEPTH + 1));
        assert_eq!(deeper_than(ok.as_bytes(), MAX_DEPTH), None);
    }

    #[test]
    fn scanner_agrees_with_serde_json() {
        let samples = [
            "{}",
            "[]",
            "1",
            "-0",
            "-0.5e-3",
            "1E+2",
            "\"\\ud83d\\ude00\"",
            "true",
            "null",
            "[1,]",
            "{\"a\":}",
            "1.",
            ".5",
            "+1",
            "01",
            "\"\\u12\"",
            "[\"a\"\"b\"]",
            "{\"a\":1}}",
            "\"\x7f\"",
            "{\"a\" : [ 1 , 2 ] }",
        ];
        for s in samples {
            let ours = locate_error(s.as_bytes()).is_none();
            let serde = serde_json::from_str::<serde_json::Value>(s).is_ok();
            assert_eq!(ours, serde, "{s:?}");
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
