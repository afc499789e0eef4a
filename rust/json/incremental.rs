//! Resumable partial-mode scanning of a growing JSON object text: a streamed tool call's arguments.
//!
//! A caller asks for the partial value of the arguments after every fragment. [`Scanner::advance`]
//! scans only the bytes added since its previous call (each byte once, plus at most the few
//! bytes of an unfinished escape or literal again) and reports the syntax it finds to a
//! [`Builder`], which turns it into values:
//!
//! - containers opening and closing, complete keys and complete scalars, each handed over once
//!   as its raw JSON text;
//! - a string value still open at the end of the text as pieces: each piece is the raw content
//!   added since the previous piece, cut only between whole characters and escapes (never inside
//!   an escape or between the halves of a surrogate pair), so each piece decodes on its own and
//!   the pieces decode to the string so far.
//!
//! [`Progress`] then says what the end of the text leaves unfinished, by the rules of
//! [`crate::json::partial::complete_partial`]: an unterminated string value is kept (an
//! incomplete trailing escape dropped), a number is trimmed to its valid prefix, a key or literal
//! still being written is dropped. Whatever this scanner cannot vouch for (text that is not a
//! prefix of a JSON object, a value nested deeper than the caller's limit, a scalar the builder
//! rejects) is [`Unhandled`]: the caller parses that text one-shot, so values and errors are
//! always the one-shot ones.

use super::partial::{is_number_byte, scan_string, ws, StrEnd};

/// Bytes before the scan position remembered to check that the text only grew.
const FINGERPRINT: usize = 16;

/// The text is left to the one-shot parser (invalid, too deep, or rejected by the builder).
#[derive(Debug)]
pub struct Unhandled;

/// Receives what [`Scanner::advance`] finds, in text order. Raw texts are JSON syntax, checked
/// by the scanner only as far as partial mode needs; a builder that rejects one returns
/// [`Unhandled`].
pub trait Builder {
    /// A container opens: the top-level object, or the value of the member in progress.
    fn open(&mut self, object: bool) -> Result<(), Unhandled>;
    /// The innermost container closes; it becomes a member of its parent (or the result).
    fn close(&mut self) -> Result<(), Unhandled>;
    /// The complete key (a JSON string, quotes included) of the innermost object's next member.
    fn key(&mut self, raw: &str) -> Result<(), Unhandled>;
    /// A complete scalar member: a JSON string (quotes included), number or literal.
    fn scalar(&mut self, raw: &str) -> Result<(), Unhandled>;
    /// More content (no quotes) of the string value in progress, never empty.
    fn string_piece(&mut self, raw: &str) -> Result<(), Unhandled>;
    /// The string value in progress is complete: the pieces so far are all of it.
    fn string_end(&mut self) -> Result<(), Unhandled>;
}

/// What the text so far amounts to.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress<'t> {
    /// Only whitespace so far (`{}`).
    Blank,
    /// The top-level object is closed.
    Done,
    /// The open containers, plus the value of the member in progress (if partial mode keeps one).
    Open(Tail<'t>),
}

/// The member value in progress at the end of the text.
#[derive(Debug, PartialEq, Eq)]
pub enum Tail<'t> {
    /// None kept: no member in progress, or one that partial mode drops.
    Nothing,
    /// A string: the pieces handed to the builder so far (none yet: the empty string).
    Str,
    /// A number, trimmed to its valid prefix (never empty).
    Num(&'t str),
}

/// What the scanner expects at its position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the top-level `{`.
    Start,
    /// After `{`: a key or `}`.
    KeyOrClose,
    /// After `,` in an object: a key.
    Key,
    /// Inside a key opened at this byte.
    InKey(usize),
    /// After a key: `:`.
    Colon,
    /// After `[`: a value or `]`.
    ValueOrClose,
    /// After `:`, or after `,` in an array: a value.
    Value,
    /// Inside a string value opened at `start`; `pieces` once some content went to the builder.
    InStr { start: usize, pieces: bool },
    /// Inside a number starting at this byte.
    InNum(usize),
    /// Inside `true`, `false` or `null`, starting at this byte.
    InLit(usize),
    /// After a complete value: `,` or the closer.
    After,
    /// The top-level object is closed.
    Done,
}

/// The resumable scanner of one growing text (see the module docs).
#[derive(Debug)]
pub struct Scanner {
    /// Everything before this byte has been scanned.
    pos: usize,
    state: State,
    /// The kinds of the open containers, innermost last (`true`: object).
    stack: Vec<bool>,
    /// The bytes just before `pos`.
    fingerprint: Vec<u8>,
    /// Bytes examined so far, for the tests that prove each byte is scanned once.
    #[cfg(test)]
    pub(crate) visited: usize,
}

impl Default for Scanner {
    fn default() -> Self {
        Self {
            pos: 0,
            state: State::Start,
            stack: Vec::new(),
            fingerprint: Vec::new(),
            #[cfg(test)]
            visited: 0,
        }
    }
}

impl Scanner {
    /// True when `text` extends the text scanned so far (checked on the bytes just before the
    /// scan position: callers only ever append). A scanner that returns false must be replaced.
    pub fn extends(&self, text: &str) -> bool {
        let t = text.as_bytes();
        self.pos <= t.len()
            && text.is_char_boundary(self.pos)
            && t[self.pos - self.fingerprint.len()..self.pos] == self.fingerprint[..]
    }

    /// True once the top-level `{` was scanned.
    pub fn opened(&self) -> bool {
        self.state != State::Start
    }

    /// Scan what `text` added since the previous call (`text` must [`Self::extends`] it), with
    /// values nested at most `max_depth` levels deep (the top-level object is depth 0).
    ///
    /// After [`Unhandled`] the scanner and its builder are in no defined state: the caller parses
    /// one-shot from then on.
    pub fn advance<'t, B: Builder>(
        &mut self,
        text: &'t str,
        max_depth: usize,
        b: &mut B,
    ) -> Result<Progress<'t>, Unhandled> {
        let t = text.as_bytes();
        while self.step(text, max_depth, b)? {}
        self.fingerprint.clear();
        self.fingerprint
            .extend_from_slice(&t[self.pos.saturating_sub(FINGERPRINT)..self.pos]);
        Ok(match self.state {
            State::Start => Progress::Blank,
            State::Done => Progress::Done,
            State::InStr { .. } => Progress::Open(Tail::Str),
            State::InNum(start) => {
                let number = text[start..].trim_end_matches(['+', '-', '.', 'e', 'E']);
                Progress::Open(if number.is_empty() {
                    Tail::Nothing
                } else {
                    Tail::Num(number)
                })
            }
            _ => Progress::Open(Tail::Nothing),
        })
    }

    fn count(&mut self, _bytes: usize) {
        #[cfg(test)]
        {
            self.visited += _bytes;
        }
    }

    /// Scan one token (or the rest of the text inside one); false at the end of the text.
    fn step<B: Builder>(
        &mut self,
        text: &str,
        max_depth: usize,
        b: &mut B,
    ) -> Result<bool, Unhandled> {
        let t = text.as_bytes();
        match self.state {
            State::InKey(start) => {
                return self.string(t, |end| match end {
                    StrEnd::Closed(end) => b.key(&text[start..end]).map(|()| State::Colon),
                    StrEnd::Open(_) => Ok(State::InKey(start)),
                });
            }
            State::InStr { start, pieces } => {
                let from = self.pos;
                return self.string(t, |end| match end {
                    StrEnd::Closed(end) if !pieces => {
                        b.scalar(&text[start..end]).map(|()| State::After)
                    }
                    StrEnd::Closed(end) => {
                        if end - 1 > from {
                            b.string_piece(&text[from..end - 1])?;
                        }
                        b.string_end().map(|()| State::After)
                    }
                    StrEnd::Open(cut) if cut > from => {
                        b.string_piece(&text[from..cut]).map(|()| State::InStr {
                            start,
                            pieces: true,
                        })
                    }
                    StrEnd::Open(_) => Ok(State::InStr { start, pieces }),
                });
            }
            State::InNum(start) => {
                let digits = t[self.pos..]
                    .iter()
                    .take_while(|&&c| is_number_byte(c))
                    .count();
                self.count(digits);
                self.pos += digits;
                if self.pos >= t.len() {
                    return Ok(false);
                }
                b.scalar(&text[start..self.pos])?;
                self.state = State::After;
                return Ok(true);
            }
            State::InLit(start) => {
                let word: &[u8] = match t[start] {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                let rest = &t[start..];
                self.count(rest.len().min(word.len()));
                if rest.starts_with(word) {
                    b.scalar(&text[start..start + word.len()])?;
                    self.pos = start + word.len();
                    self.state = State::After;
                    return Ok(true);
                }
                if word.starts_with(rest) {
                    self.pos = t.len();
                    return Ok(false);
                }
                return Err(Unhandled);
            }
            _ => {}
        }
        let i = ws(t, self.pos);
        self.count(i - self.pos + 1);
        self.pos = i;
        let Some(&c) = t.get(i) else {
            return Ok(false);
        };
        self.pos = i + 1;
        self.state = match (self.state, c) {
            (State::Start, b'{') => return self.open(b, true).map(|()| true),
            (State::KeyOrClose, b'}') | (State::ValueOrClose, b']') => {
                return self.close(b).map(|()| true)
            }
            (State::KeyOrClose | State::Key, b'"') => State::InKey(i),
            (State::Colon, b':') => State::Value,
            (State::ValueOrClose | State::Value, _) => {
                if self.stack.len() > max_depth {
                    return Err(Unhandled); // the one-shot parser reports the depth
                }
                match c {
                    b'{' | b'[' => return self.open(b, c == b'{').map(|()| true),
                    b'"' => State::InStr {
                        start: i,
                        pieces: false,
                    },
                    b'-' | b'0'..=b'9' => {
                        self.pos = i;
                        State::InNum(i)
                    }
                    b't' | b'f' | b'n' => State::InLit(i),
                    _ => return Err(Unhandled),
                }
            }
            (State::After, b',') => {
                if *self.stack.last().ok_or(Unhandled)? {
                    State::Key
                } else {
                    State::Value
                }
            }
            (State::After, b'}' | b']') if self.closer() == Some(c) => {
                return self.close(b).map(|()| true)
            }
            _ => return Err(Unhandled),
        };
        Ok(true)
    }

    /// Scan the string the scanner is inside; `then` gives the next state for where it stops.
    fn string(
        &mut self,
        t: &[u8],
        then: impl FnOnce(StrEnd) -> Result<State, Unhandled>,
    ) -> Result<bool, Unhandled> {
        let end = scan_string(t, self.pos).map_err(|_| Unhandled)?;
        self.state = then(end)?;
        match end {
            StrEnd::Closed(end) => {
                self.count(end - self.pos);
                self.pos = end;
                Ok(true)
            }
            StrEnd::Open(cut) => {
                self.count(t.len() - self.pos);
                self.pos = cut;
                Ok(false)
            }
        }
    }

    fn closer(&self) -> Option<u8> {
        self.stack
            .last()
            .map(|&object| if object { b'}' } else { b']' })
    }

    fn open<B: Builder>(&mut self, b: &mut B, object: bool) -> Result<(), Unhandled> {
        b.open(object)?;
        self.stack.push(object);
        self.state = if object {
            State::KeyOrClose
        } else {
            State::ValueOrClose
        };
        Ok(())
    }

    fn close<B: Builder>(&mut self, b: &mut B) -> Result<(), Unhandled> {
        b.close()?;
        self.stack.pop();
        self.state = if self.stack.is_empty() {
            State::Done
        } else {
            State::After
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::partial::complete_partial;
    use crate::stream::message::to_serde;
    use jiter::JsonValue;
    use serde_json::{Map, Value};

    /// `raw` decoded by jiter (the parser of the Python layer), as a `serde_json` value.
    fn parse(raw: &str) -> Option<Value> {
        JsonValue::parse(raw.as_bytes(), false)
            .ok()
            .map(|v| to_serde(&v))
    }

    /// Builds `serde_json` values, counting the raw bytes it is handed to decode.
    #[derive(Default)]
    struct Tree {
        stack: Vec<(Value, Option<String>)>,
        done: Option<Value>,
        string: Option<String>,
        decoded: usize,
    }

    impl Tree {
        fn decode(&mut self, raw: &str) -> Result<Value, Unhandled> {
            self.decoded += raw.len();
            parse(raw).ok_or(Unhandled)
        }

        fn add(&mut self, value: Value) -> Result<(), Unhandled> {
            match self.stack.last_mut().ok_or(Unhandled)? {
                (Value::Object(m), key) => {
                    m.insert(key.take().ok_or(Unhandled)?, value);
                }
                (Value::Array(a), _) => a.push(value),
                _ => return Err(Unhandled),
            }
            Ok(())
        }

        fn materialize(&mut self, progress: &Progress<'_>) -> Result<Value, Unhandled> {
            let tail = match progress {
                Progress::Blank => return Ok(Value::Object(Map::new())),
                Progress::Done => return self.done.clone().ok_or(Unhandled),
                Progress::Open(tail) => tail,
            };
            let mut child = match tail {
                Tail::Nothing => None,
                Tail::Str => Some(Value::String(self.string.clone().unwrap_or_default())),
                Tail::Num(n) => Some(self.decode(n)?),
            };
            for (container, key) in self.stack.iter().rev() {
                let mut c = container.clone();
                match (&mut c, key, child) {
                    (Value::Object(m), Some(k), Some(v)) => {
                        m.insert(k.clone(), v);
                    }
                    (Value::Array(a), _, Some(v)) => a.push(v),
                    _ => {}
                }
                child = Some(c);
            }
            child.ok_or(Unhandled)
        }
    }

    impl Builder for Tree {
        fn open(&mut self, object: bool) -> Result<(), Unhandled> {
            let c = if object {
                Value::Object(Map::new())
            } else {
                Value::Array(Vec::new())
            };
            self.stack.push((c, None));
            Ok(())
        }

        fn close(&mut self) -> Result<(), Unhandled> {
            let (c, _) = self.stack.pop().ok_or(Unhandled)?;
            if self.stack.is_empty() {
                self.done = Some(c);
                Ok(())
            } else {
                self.add(c)
            }
        }

        fn key(&mut self, raw: &str) -> Result<(), Unhandled> {
            let Value::String(k) = self.decode(raw)? else {
                return Err(Unhandled);
            };
            self.stack.last_mut().ok_or(Unhandled)?.1 = Some(k);
            Ok(())
        }

        fn scalar(&mut self, raw: &str) -> Result<(), Unhandled> {
            let v = self.decode(raw)?;
            self.add(v)
        }

        fn string_piece(&mut self, raw: &str) -> Result<(), Unhandled> {
            assert!(!raw.is_empty());
            let Value::String(piece) = self.decode(&format!("\"{raw}\""))? else {
                return Err(Unhandled);
            };
            self.decoded -= 2;
            self.string.get_or_insert_with(String::new).push_str(&piece);
            Ok(())
        }

        fn string_end(&mut self) -> Result<(), Unhandled> {
            let s = self.string.take().unwrap_or_default();
            self.add(Value::String(s))
        }
    }

    /// The one-shot partial value of `text` (`None`: an error).
    fn one_shot(text: &str) -> Option<Value> {
        if text.trim_matches([' ', '\t', '\n', '\r']).is_empty() {
            return Some(Value::Object(Map::new()));
        }
        parse(&complete_partial(text)?).filter(Value::is_object)
    }

    /// Prefix ends of `text` for fragments of `size` bytes (moved forward to char boundaries).
    fn cuts(text: &str, size: usize) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut end = 0;
        while end < text.len() {
            end = (end + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            ends.push(end);
        }
        ends
    }

    struct Run {
        scanner: Scanner,
        tree: Tree,
        unhandled: bool,
        asks: usize,
    }

    /// Ask after every prefix ending at `ends`. With `check`, each answer is built and must equal
    /// the one-shot one, and a prefix is left to the one-shot path only when that is an error.
    fn run(text: &str, ends: &[usize], max_depth: usize, check: bool) -> Run {
        let mut r = Run {
            scanner: Scanner::default(),
            tree: Tree::default(),
            unhandled: false,
            asks: 0,
        };
        for &end in ends {
            let prefix = &text[..end];
            assert!(r.scanner.extends(prefix));
            r.asks += 1;
            let progress = r.scanner.advance(prefix, max_depth, &mut r.tree);
            let got = match progress {
                Ok(p) if check => r.tree.materialize(&p),
                Ok(Progress::Open(Tail::Num(n))) => {
                    r.tree.decoded += n.len(); // what building the answer would decode
                    Ok(Value::Null)
                }
                Ok(_) => Ok(Value::Null),
                Err(e) => Err(e),
            };
            match got {
                Ok(v) if check => assert_eq!(Some(v), one_shot(prefix), "{prefix:?}"),
                Ok(_) => {}
                Err(Unhandled) => {
                    if check {
                        assert_eq!(one_shot(prefix), None, "{prefix:?}");
                    }
                    r.unhandled = true;
                    return r;
                }
            }
        }
        r
    }

    fn deep(levels: usize, filler: usize) -> String {
        let mut text = String::new();
        for level in 0..levels {
            text.push_str(&format!(
                "{{\"k\": {level}, \"s\": \"{}\", \"c\": ",
                "y".repeat(filler)
            ));
        }
        text.push_str("null");
        text.push_str(&"}".repeat(levels));
        format!("{{\"top\": {text}}}")
    }

    /// Documents of about `size` bytes, one per shape.
    fn shapes(size: usize) -> Vec<(&'static str, String)> {
        let unit = "ab\\n\\\"\\u00e9\\ud83d\\ude00é😀x";
        let items: Vec<String> = (0..size / 60)
            .map(|i| format!("{{\"id\": {i}, \"name\": \"item {i} é\", \"tags\": [\"a\", \"b\"], \"ok\": true, \"p\": -1.5e3}}"))
            .collect();
        vec![
            (
                "string",
                format!("{{\"text\": \"{}\"}}", "abcdefgh".repeat(size / 8)),
            ),
            (
                "escapes",
                format!("{{\"text\": \"{}\"}}", unit.repeat(size / unit.len())),
            ),
            (
                "array",
                format!(
                    "{{\"xs\": [{}]}}",
                    (0..size / 7)
                        .map(|i| i.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            ("deep", deep(150, size / 150)),
            (
                "mixed",
                format!(
                    "{{\"items\": [{}], \"n\": null, \"f\": false}}",
                    items.join(", ")
                ),
            ),
            ("key", format!("{{\"{}\": 1}}", "k".repeat(size))),
            (
                "blank",
                format!(
                    "  {{ {} \"a\" {} : {} 1 {} }} {}",
                    " ".repeat(size / 5),
                    "\n".repeat(size / 5),
                    "\t".repeat(size / 5),
                    " ".repeat(size / 5),
                    " ".repeat(size / 5)
                ),
            ),
            ("number", format!("{{\"n\": 1.{}}}", "5".repeat(size))),
        ]
    }

    #[test]
    fn every_prefix_equals_the_one_shot_value() {
        for (name, text) in shapes(1_500) {
            for size in [1, 3, 8] {
                let r = run(&text, &cuts(&text, size), 200, true);
                assert!(!r.unhandled, "{name} in {size}-byte fragments");
            }
        }
    }

    #[test]
    fn escapes_split_anywhere() {
        let texts = [
            r#"{"a": "x\u00e9\ud83d\ude00y\n\"\\\/\b\f\r\t", "b": ["\ud83d\ude00"]}"#,
            r#"{"\u00e9\ud83d\ude00": "é😀", "k\"": {"\\": 1}}"#,
            r#"{"a": "\ud83d\ud83d\ude00"}"#,
            r#"{"a": "\ud83dx"}"#,
            r#"{"a": "\ude00"}"#,
            r#"{"a": "\ud83d\u0041"}"#,
            r#"{"a": "\x"}"#,
            r#"{"a": "\u12g4"}"#,
            "{\"a\": \"tab\there\"}",
            r#"{"a": 01, "b": 1}"#,
            r#"{"a": 1.5e+-3}"#,
            r#"{"a": tru}"#,
            r#"{"a": [1, 2,]}"#,
            r#"{"a": 1}{"b": 2}"#,
            r#"[1, 2]"#,
            r#"{"a" 1}"#,
            r#"{"a": "b" "c"}"#,
        ];
        for text in texts {
            for size in 1..=7 {
                run(text, &cuts(text, size), 200, true);
            }
        }
    }

    #[test]
    fn depth_beyond_the_limit_is_left_to_the_one_shot_parser() {
        let nested =
            |levels: usize| format!("{{\"a\": {}1{}}}", "[".repeat(levels), "]".repeat(levels));
        for limit in [1, 5, 150, 200] {
            let within = nested(limit - 1);
            assert!(!run(&within, &cuts(&within, 1), limit, true).unhandled);
            let beyond = nested(limit);
            assert!(run(&beyond, &cuts(&beyond, 1), limit, false).unhandled);
        }
    }

    #[test]
    fn each_byte_is_scanned_and_decoded_once() {
        let size = 200_000;
        for (name, text) in shapes(size) {
            for fragment in [1, 8, 64] {
                if fragment == 1 && text.len() > 50_000 {
                    continue;
                }
                let ends = cuts(&text, fragment);
                let r = run(&text, &ends, 200, false);
                assert!(!r.unhandled, "{name}");
                let n = text.len();
                // Per ask at most an unfinished escape (12 bytes) is scanned again.
                assert!(
                    r.scanner.visited <= n + 16 * r.asks,
                    "{name}/{fragment}: scanned {} bytes of {n} in {} asks",
                    r.scanner.visited,
                    r.asks
                );
                // A number in progress is decoded again at each ask (`number` is the one shape
                // where that grows with the text: a 200 KB number).
                if name != "number" {
                    assert!(
                        r.tree.decoded <= n + 8 * r.asks,
                        "{name}/{fragment}: decoded {} bytes of {n} in {} asks",
                        r.tree.decoded,
                        r.asks
                    );
                }
            }
        }
    }

    #[test]
    fn a_text_that_does_not_extend_the_scanned_one_is_noticed() {
        let mut s = Scanner::default();
        let mut tree = Tree::default();
        s.advance(r#"{"a": "xyz"#, 200, &mut tree).ok();
        assert!(s.extends(r#"{"a": "xyz", "b""#));
        assert!(!s.extends(r#"{"a": "xyw", "b""#));
        assert!(!s.extends(r#"{"a""#));
    }
}
