//! The strict JSON scanner behind every argument error: a stable, parser-independent position and
//! reason for the first problem of a text (RFC 8259, no extensions), and the depth check run after
//! a successful parse. Iterative: no recursion however deep the input. The pure-Python twin
//! (`toolweave._reference.json.locate_error`) is the same state machine.

use super::onepass::hex4;
use super::MAX_DEPTH;

/// The scanner's reason for a value nested too deep; [`super::depth_reason`] words it with the limit.
pub const TOO_DEEP: &str = "nesting too deep";

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
                            let Some(cp) = hex4(self.t, esc + 2) else {
                                return Some((esc, "invalid escape"));
                            };
                            self.i = esc + 6;
                            if (0xDC00..0xE000).contains(&cp) {
                                return Some((esc, "invalid surrogate escape"));
                            }
                            if (0xD800..0xDC00).contains(&cp) {
                                let low = if self.t.get(self.i..self.i + 2) == Some(b"\\u") {
                                    hex4(self.t, self.i + 2)
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
}
