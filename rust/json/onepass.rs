//! Argument text read in one pass into any kind of values (a [`Sink`]): strict JSON, or (partial
//! mode) a truncated prefix closed where it ends.
//!
//! Strict: exactly RFC 8259 as jiter reads it (numbers are decoded by jiter's own
//! [`NumberAny::from_bytes`], so the values are jiter's), values nested at most [`MAX_DEPTH`] deep.
//! Strings are found with `memchr` and, when they hold no escape, handed to the sink as slices of
//! the text (no copy); escapes are decoded into one reused buffer.
//!
//! Partial: the values [`super::partial::complete_partial`] followed by a strict parse give, built
//! while reading instead of after rewriting the text: at the end of the text, the open containers
//! are closed; a cut string value keeps its content up to an incomplete escape or surrogate pair
//! ([`scan_string`]); a cut number keeps its digits (trailing `+ - . e E` dropped; nothing left
//! drops the member); a cut literal, a cut or dangling key, and a trailing comma are dropped. Any
//! other case (a syntax error, a value nested deeper than `max_depth`, a lone surrogate in a key
//! that the rewriting would drop) gives `None`: the caller falls back to the rewriting path, which
//! decides (a value or the strict error). So this pass never gives a value that path would not.

use std::borrow::Cow;

use std::sync::Arc;

use jiter::{JsonValue, NumberAny, NumberInt};

use super::partial::{is_number_byte, scan_string, StrEnd};
use super::MAX_DEPTH;

/// Builds values of one kind.
pub trait Sink {
    /// Any value.
    type Value;
    /// An object being filled.
    type Object;

    /// `null`.
    fn null(&mut self) -> Self::Value;
    /// `true` or `false`.
    fn boolean(&mut self, b: bool) -> Self::Value;
    /// A string value.
    fn string(&mut self, s: &str) -> Self::Value;
    /// A number; `None` when the sink cannot build it.
    fn number(&mut self, n: NumberAny) -> Option<Self::Value>;
    /// An array of `items`.
    fn array(&mut self, items: std::vec::Drain<'_, Self::Value>) -> Self::Value;
    /// A new empty object.
    fn object(&mut self) -> Self::Object;
    /// `object[key] = value` (a repeated key: the last value wins, at the first key's place).
    fn insert(&mut self, object: &mut Self::Object, key: &str, value: Self::Value);
    /// The filled object as a value.
    fn close(&mut self, object: Self::Object) -> Self::Value;
}

/// Why reading stopped before a value was complete.
enum Stop<V> {
    /// Not valid (strict) or not a case this pass decides (partial).
    Invalid,
    /// (Partial) the text ended inside this value: what to keep of it (`None`: drop the member).
    End(Option<V>),
}

type Read<V> = Result<V, Stop<V>>;

/// What a strict read of a whole text gave (see [`super::modes::Parsed`]).
pub enum Top<V> {
    /// An object.
    Object(V),
    /// A string, with its content.
    Str(String),
    /// Another value, with its kind (`array`, `number`, `boolean`, `null`).
    Other(&'static str),
}

struct Reader<'t, 's, S: Sink> {
    text: &'t str,
    t: &'t [u8],
    i: usize,
    partial: bool,
    max_depth: usize,
    buf: String,
    items: Vec<S::Value>,
    sink: &'s mut S,
}

/// Read `text` as one strict JSON value.
///
/// # Errors
/// The byte offset where reading stopped, when `text` is not valid JSON or nests deeper than
/// [`MAX_DEPTH`].
pub fn strict<S: Sink>(sink: &mut S, text: &str) -> Result<Top<S::Value>, usize> {
    let mut r = Reader::new(sink, text, false, MAX_DEPTH);
    r.ws();
    let top = match r.t.get(r.i) {
        Some(b'{') => r.value(0).map(Top::Object),
        Some(b'"') => r.top_string().map(Top::Str).ok_or(Stop::Invalid),
        Some(b'[') => r.value(0).map(|_| Top::Other("array")),
        Some(b't' | b'f') => r.value(0).map(|_| Top::Other("boolean")),
        Some(b'n') => r.value(0).map(|_| Top::Other("null")),
        Some(_) => r.value(0).map(|_| Top::Other("number")),
        None => Err(Stop::Invalid),
    };
    match top {
        Ok(v) if r.at_end() => Ok(v),
        _ => Err(r.i.min(text.len())),
    }
}

/// Read `text` as a truncated prefix of one JSON object nested at most `max_depth` levels deep;
/// `None` when this pass does not decide (see the module docs).
pub fn partial<S: Sink>(sink: &mut S, text: &str, max_depth: usize) -> Option<S::Value> {
    let mut r = Reader::new(sink, text, true, max_depth);
    r.ws();
    if r.t.get(r.i) != Some(&b'{') {
        return None;
    }
    match r.value(0) {
        Ok(v) => r.at_end().then_some(v),
        Err(Stop::End(v)) => v,
        Err(Stop::Invalid) => None,
    }
}

impl<'t, 's, S: Sink> Reader<'t, 's, S> {
    fn new(sink: &'s mut S, text: &'t str, partial: bool, max_depth: usize) -> Self {
        Reader {
            text,
            t: text.as_bytes(),
            i: 0,
            partial,
            max_depth,
            buf: String::new(),
            items: Vec::new(),
            sink,
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.t.get(self.i) {
            self.i += 1;
        }
    }

    /// Only whitespace is left.
    fn at_end(&mut self) -> bool {
        self.ws();
        self.i >= self.t.len()
    }

    /// The text ended inside a value that is dropped (partial), or fail (strict).
    fn dropped<V>(&self) -> Stop<V> {
        if self.partial {
            Stop::End(None)
        } else {
            Stop::Invalid
        }
    }

    /// The text ended inside `obj`: it is closed (partial), or fail (strict).
    fn end_object(&mut self, obj: S::Object) -> Stop<S::Value> {
        if self.partial {
            Stop::End(Some(self.sink.close(obj)))
        } else {
            Stop::Invalid
        }
    }

    /// The array whose items are `self.items[base..]`, taken off that stack.
    fn take_array(&mut self, base: usize) -> S::Value {
        self.sink.array(self.items.drain(base..))
    }

    /// The text ended inside the array whose items start at `base`: it is closed (partial), or
    /// fail (strict).
    fn end_array(&mut self, base: usize) -> Stop<S::Value> {
        if self.partial {
            Stop::End(Some(self.take_array(base)))
        } else {
            Stop::Invalid
        }
    }

    /// The value at `self.i` (not whitespace, not the end), nested `depth` levels deep.
    fn value(&mut self, depth: usize) -> Read<S::Value> {
        if depth > self.max_depth {
            return Err(Stop::Invalid);
        }
        match self.t[self.i] {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string_value(),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal(b"true", |s| s.boolean(true)),
            b'f' => self.literal(b"false", |s| s.boolean(false)),
            b'n' => self.literal(b"null", S::null),
            _ => Err(Stop::Invalid),
        }
    }

    fn object(&mut self, depth: usize) -> Read<S::Value> {
        let mut obj = self.sink.object();
        self.i += 1;
        self.ws();
        match self.t.get(self.i) {
            None => return Err(self.end_object(obj)),
            Some(b'}') => {
                self.i += 1;
                return Ok(self.sink.close(obj));
            }
            _ => {}
        }
        loop {
            // A member: key, `:`, value.
            if self.t[self.i] != b'"' {
                return Err(Stop::Invalid);
            }
            let key_at = self.i;
            let Some((end, escaped)) = self.string_end(key_at + 1) else {
                // A cut key is dropped when it scans as the rewriting scans it.
                return match (self.partial, scan_string(self.t, key_at + 1)) {
                    (true, Ok(StrEnd::Open(_))) => Err(Stop::End(Some(self.sink.close(obj)))),
                    _ => Err(Stop::Invalid),
                };
            };
            let key: Cow<'t, str> = if escaped {
                let mut owned = String::new();
                match content(self.text, &mut owned, key_at + 1, end, true) {
                    Some(_) => Cow::Owned(owned),
                    None => return Err(Stop::Invalid),
                }
            } else {
                Cow::Borrowed(&self.text[key_at + 1..end])
            };
            self.i = end + 1;
            self.ws();
            match self.t.get(self.i) {
                None => return Err(self.end_object(obj)),
                Some(b':') => self.i += 1,
                Some(_) => return Err(Stop::Invalid),
            }
            self.ws();
            if self.i >= self.t.len() {
                return Err(self.end_object(obj));
            }
            let value = self.value(depth + 1);
            match value {
                Ok(v) => self.sink.insert(&mut obj, &key, v),
                Err(Stop::End(keep)) => {
                    if let Some(v) = keep {
                        self.sink.insert(&mut obj, &key, v);
                    }
                    return Err(Stop::End(Some(self.sink.close(obj))));
                }
                Err(Stop::Invalid) => return Err(Stop::Invalid),
            }
            self.ws();
            match self.t.get(self.i) {
                None => return Err(self.end_object(obj)),
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                    if self.i >= self.t.len() {
                        return Err(self.end_object(obj));
                    }
                }
                Some(b'}') => {
                    self.i += 1;
                    return Ok(self.sink.close(obj));
                }
                Some(_) => return Err(Stop::Invalid),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Read<S::Value> {
        // Items wait on one stack shared by every array of the parse (no allocation per array).
        let base = self.items.len();
        self.i += 1;
        self.ws();
        match self.t.get(self.i) {
            None => return Err(self.end_array(base)),
            Some(b']') => {
                self.i += 1;
                return Ok(self.take_array(base));
            }
            _ => {}
        }
        loop {
            match self.value(depth + 1) {
                Ok(v) => self.items.push(v),
                Err(Stop::End(keep)) => {
                    self.items.extend(keep);
                    return Err(Stop::End(Some(self.take_array(base))));
                }
                Err(Stop::Invalid) => return Err(Stop::Invalid),
            }
            self.ws();
            match self.t.get(self.i) {
                None => return Err(self.end_array(base)),
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                    if self.i >= self.t.len() {
                        return Err(self.end_array(base));
                    }
                }
                Some(b']') => {
                    self.i += 1;
                    return Ok(self.take_array(base));
                }
                Some(_) => return Err(Stop::Invalid),
            }
        }
    }

    /// The closing quote of the string whose content starts at `from`, and whether it holds an
    /// escape; `None` when the text ends first or a control character comes before the quote.
    fn string_end(&self, from: usize) -> Option<(usize, bool)> {
        string_end(self.t, from)
    }

    fn string_value(&mut self) -> Read<S::Value> {
        let at = self.i;
        if let Some((end, escaped)) = self.string_end(at + 1) {
            self.i = end + 1;
            return match content(self.text, &mut self.buf, at + 1, end, escaped) {
                Some(s) => Ok(self.sink.string(s)),
                None => Err(Stop::Invalid),
            };
        }
        // The text ends inside the string: (partial) keep its content up to an incomplete escape.
        self.i = self.t.len();
        if !self.partial {
            return Err(Stop::Invalid);
        }
        let Ok(StrEnd::Open(cut)) = scan_string(self.t, at + 1) else {
            return Err(Stop::Invalid);
        };
        match content(self.text, &mut self.buf, at + 1, cut, true) {
            Some(s) => Err(Stop::End(Some(self.sink.string(s)))),
            None => Err(Stop::Invalid),
        }
    }

    /// A top-level string (strict): its content.
    fn top_string(&mut self) -> Option<String> {
        let at = self.i;
        let (end, escaped) = self.string_end(at + 1)?;
        self.i = end + 1;
        content(self.text, &mut self.buf, at + 1, end, escaped).map(str::to_owned)
    }

    fn number(&mut self) -> Read<S::Value> {
        let from = self.i;
        let n = self.t.len();
        let end = number_end(self.t, from);
        self.i = end;
        if end >= n && self.partial {
            let digits = self.text[from..].trim_end_matches(['+', '-', '.', 'e', 'E']);
            if digits.is_empty() {
                return Err(Stop::End(None));
            }
            return match self.decode_number(digits.as_bytes()) {
                Some(v) => Err(Stop::End(Some(v))),
                None => Err(Stop::Invalid),
            };
        }
        let raw = &self.t[from..end];
        self.decode_number(raw).ok_or(Stop::Invalid)
    }

    fn decode_number(&mut self, raw: &[u8]) -> Option<S::Value> {
        let n = NumberAny::from_bytes(raw, false).ok()?;
        self.sink.number(n)
    }

    fn literal(&mut self, word: &[u8], make: fn(&mut S) -> S::Value) -> Read<S::Value> {
        let rest = &self.t[self.i..];
        if rest.starts_with(word) {
            self.i += word.len();
            Ok(make(self.sink))
        } else if word.starts_with(rest) {
            self.i = self.t.len();
            Err(self.dropped())
        } else {
            Err(Stop::Invalid)
        }
    }
}

/// The closing quote of the string whose content starts at `t[from]`, and whether it holds an
/// escape; `None` when the text ends first or a control character comes before the quote (the
/// escapes themselves are checked by [`content`]).
pub(crate) fn string_end(t: &[u8], from: usize) -> Option<(usize, bool)> {
    let mut j = from;
    let mut escaped = false;
    loop {
        let k = special(t, j);
        match t.get(k)? {
            b'"' => return Some((k, escaped)),
            b'\\' => {
                escaped = true;
                j = k + 2;
            }
            _ => return None,
        }
    }
}

/// The end of the number token starting at `t[from]`: the first byte that cannot be part of one
/// (the token itself is judged by jiter's [`NumberAny::from_bytes`], as [`strict`] judges it).
pub(crate) fn number_end(t: &[u8], from: usize) -> usize {
    t.get(from..)
        .and_then(|rest| rest.iter().position(|&b| !is_number_byte(b)))
        .map_or(t.len(), |k| from + k)
}

/// The first byte at or after `from` that is `"`, `\` or a control character; `t.len()` if none.
/// The first 64 bytes (keys, most values) 16 at a time ([`special_16`], x86-64) or 8 at a time
/// ([`special_in`]); past them, `memchr2` finds the next quote or backslash and a fold (no early
/// exit, so LLVM vectorises it) checks the run before it for control characters.
fn special(t: &[u8], from: usize) -> usize {
    let n = t.len();
    let head = (from + 64).min(n);
    let mut j = from;
    while j + 16 <= head {
        if let Some(k) = special_16(t, j) {
            return j + k;
        }
        j += 16;
    }
    while j + 8 <= head {
        let word = u64::from_le_bytes(t[j..j + 8].try_into().unwrap_or([0; 8]));
        if let Some(k) = special_in(word) {
            return j + k;
        }
        j += 8;
    }
    if head < n {
        let k = memchr::memchr2(b'"', b'\\', &t[j..]).map_or(n, |k| j + k);
        let run = &t[j..k];
        if run.iter().fold(false, |bad, &b| bad | (b < 0x20)) {
            return j + run.iter().position(|&b| b < 0x20).unwrap_or(0);
        }
        return k;
    }
    while j < n && !matches!(t[j], b'"' | b'\\' | 0..=0x1f) {
        j += 1;
    }
    j
}

/// The index of the first of the 16 bytes at `t[j..]` (there must be 16) that is `"`, `\` or below
/// 0x20, with SSE2 (part of every x86-64): three byte compares and one mask.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn special_16(t: &[u8], j: usize) -> Option<usize> {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let bytes = t.get(j..j + 16)?;
    // SAFETY: SSE2 is in the x86-64 baseline; the unaligned load reads the 16 bytes of `bytes`.
    let mask = unsafe {
        let chunk = _mm_loadu_si128(bytes.as_ptr().cast());
        let control = _mm_cmpeq_epi8(_mm_min_epu8(chunk, _mm_set1_epi8(0x1f)), chunk);
        let quote = _mm_cmpeq_epi8(chunk, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(chunk, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control))
    };
    (mask != 0).then(|| mask.trailing_zeros() as usize)
}

/// [`special_16`] elsewhere: two words of [`special_in`].
#[cfg(not(target_arch = "x86_64"))]
fn special_16(t: &[u8], j: usize) -> Option<usize> {
    let bytes = t.get(j..j + 16)?;
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    special_in(word(0)).or_else(|| special_in(word(8)).map(|k| k + 8))
}

/// The index of the first byte of `word` (little endian) that is `"`, `\` or below 0x20. Each test
/// flags a byte by its high bit, exactly for the lowest flagged byte (a borrow only moves up).
fn special_in(word: u64) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let flags = zero(word ^ (ONES * u64::from(b'"')))
        | zero(word ^ (ONES * u64::from(b'\\')))
        | (word.wrapping_sub(ONES * 0x20) & !word & HIGH);
    (flags != 0).then(|| (flags.trailing_zeros() / 8) as usize)
}

/// The content `text[from..to]` of a string whose bytes were checked for control characters: a
/// slice of the text without escapes, else decoded into `buf`; `None` on a bad escape or a lone
/// surrogate.
pub(crate) fn content<'a>(
    text: &'a str,
    buf: &'a mut String,
    from: usize,
    to: usize,
    escaped: bool,
) -> Option<&'a str> {
    let raw = &text[from..to];
    if !escaped {
        return Some(raw);
    }
    buf.clear();
    unescape(raw, buf)?;
    Some(buf)
}

/// The 4 hex digits at `t[at..]` as a code unit (also the strict scanner's).
pub(super) fn hex4(t: &[u8], at: usize) -> Option<u32> {
    t.get(at..at + 4)?.iter().try_fold(0, |acc, &h| {
        char::from(h).to_digit(16).map(|d| acc * 16 + d)
    })
}

/// Append the JSON string content `raw` (no quotes) with its escapes decoded to `out`; `None` on a
/// bad escape or a lone surrogate (as jiter and the strict scanner reject them).
fn unescape(raw: &str, out: &mut String) -> Option<()> {
    let b = raw.as_bytes();
    let (mut run, mut j) = (0, 0);
    while let Some(off) = memchr::memchr(b'\\', &b[j..]) {
        let k = j + off;
        out.push_str(&raw[run..k]);
        j = k + 2;
        let c = match *b.get(k + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = hex4(b, j)?;
                j += 4;
                let code = match hi {
                    0xD800..=0xDBFF => {
                        if b.get(j..j + 2) != Some(b"\\u") {
                            return None;
                        }
                        let lo = hex4(b, j + 2)?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return None;
                        }
                        j += 6;
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return None,
                    _ => hi,
                };
                char::from_u32(code)?
            }
            _ => return None,
        };
        out.push(c);
        run = j;
    }
    out.push_str(&raw[run..]);
    Some(())
}

/// The pure sink: jiter's [`JsonValue`] (what `cargo test` and the fuzz targets check).
pub struct JsonValues;

impl Sink for JsonValues {
    type Value = JsonValue<'static>;
    type Object = Vec<(Cow<'static, str>, JsonValue<'static>)>;

    fn null(&mut self) -> Self::Value {
        JsonValue::Null
    }

    fn boolean(&mut self, b: bool) -> Self::Value {
        JsonValue::Bool(b)
    }

    fn string(&mut self, s: &str) -> Self::Value {
        JsonValue::Str(Cow::Owned(s.to_owned()))
    }

    fn number(&mut self, n: NumberAny) -> Option<Self::Value> {
        Some(match n {
            NumberAny::Int(NumberInt::Int(i)) => JsonValue::Int(i),
            NumberAny::Int(NumberInt::BigInt(b)) => JsonValue::BigInt(b),
            NumberAny::Float(f) => JsonValue::Float(f),
        })
    }

    fn array(&mut self, items: std::vec::Drain<'_, Self::Value>) -> Self::Value {
        JsonValue::Array(Arc::new(items.collect()))
    }

    fn object(&mut self) -> Self::Object {
        Vec::new()
    }

    fn insert(&mut self, object: &mut Self::Object, key: &str, value: Self::Value) {
        object.push((Cow::Owned(key.to_owned()), value));
    }

    fn close(&mut self, object: Self::Object) -> Self::Value {
        JsonValue::Object(Arc::new(object))
    }
}

#[cfg(test)]
mod tests {
    use jiter::PartialMode;

    use super::super::partial::complete_partial;
    use super::*;

    const SAMPLES: &[&str] = &[
        r#"{"a": 1, "b": [true, false, null], "c": {"d": "\u00e9\n\"x\"", "e": -12.5e-3}}"#,
        r#"{"q": "東京都の天気予報", "tags": ["天気", "旅行"], "n": 10, "big": 123456789012345678901234567890}"#,
        r#"{"s": "pair \ud83d\ude00 end", "t": "\\\/\b\f\r\t", "u": "\u0041\u00e9\u4e2d", "f": 1E+2, "z": -0}"#,
        r#" { "a" : [ [ ] , { } , [ 1 , 2 ] ] , "b" : { "c" : { "d" : [ "x" ] } } } "#,
        r#"{"a": 1, "a": 2, "b": "tr", "c": 0.5, "d": [], "e": {}, "f": "", "g": 10e5}"#,
    ];

    fn jiter_value(text: &str) -> Option<JsonValue<'static>> {
        JsonValue::parse_owned(text.as_bytes(), false, PartialMode::Off).ok()
    }

    fn ours(text: &str) -> Option<JsonValue<'static>> {
        match strict(&mut JsonValues, text).ok()? {
            Top::Object(v) => Some(v),
            Top::Str(s) => Some(JsonValue::Str(Cow::Owned(s))),
            Top::Other(_) => {
                jiter_value(text).or(Some(JsonValue::Str(Cow::Borrowed("accepted by us only"))))
            }
        }
    }

    /// What the rewriting path gives for a truncated prefix.
    fn rewritten(text: &str, max_depth: usize) -> Option<JsonValue<'static>> {
        let closed = complete_partial(text)?;
        let v = jiter_value(&closed)?;
        let deep = super::super::deeper_than(closed.as_bytes(), max_depth).is_some();
        (matches!(v, JsonValue::Object(_)) && !deep).then_some(v)
    }

    fn check_partial(text: &str, max_depth: usize) -> bool {
        let one = partial(&mut JsonValues, text, max_depth);
        if let Some(v) = &one {
            assert_eq!(Some(v), rewritten(text, max_depth).as_ref(), "{text:?}");
        }
        one.is_some()
    }

    /// A small deterministic generator (xorshift), so the tests need no dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            usize::try_from(self.0 % 1_000_003).unwrap_or(0)
        }
    }

    #[test]
    fn strict_agrees_with_jiter() {
        let extra = [
            "{}",
            "[]",
            "1",
            "-0",
            "\"x\"",
            "true",
            "null",
            "[1,]",
            "{\"a\":}",
            "1.",
            ".5",
            "01",
            "{\"a\":1}}",
            "{\"a\" 1}",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"\\x\"",
            "\"a\u{1}\"",
            "{\"a\":1,}",
            "[1 2]",
            "  {\"a\" : 1 }  ",
            "nul",
            "tru",
            "{\"a\":tru}",
            "\"\\u12\"",
            "1e",
            "-",
            "[-]",
            "{\"\\u00e9\": 1}",
            "{\"a\\u0000\": \"\\u0000\"}",
            "[1.5e+3, 2E-2, -0.0, 9223372036854775808, -9223372036854775809]",
        ];
        for text in SAMPLES.iter().copied().chain(extra) {
            assert_eq!(ours(text), jiter_value(text), "{text:?}");
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(ours(&deep).is_some());
        let deeper = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        assert!(ours(&deeper).is_none());
        assert!(ours(&"[".repeat(100_000)).is_none());
    }

    #[test]
    fn strict_agrees_with_jiter_on_mutations() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let alphabet = b"{}[]\",:\\ 0123456789-+.eEtrufalsn\x01u";
        for sample in SAMPLES {
            for _ in 0..2000 {
                let mut bytes = sample.as_bytes().to_vec();
                for _ in 0..1 + rng.next() % 3 {
                    let at = rng.next() % bytes.len();
                    match rng.next() % 3 {
                        0 => bytes[at] = alphabet[rng.next() % alphabet.len()],
                        1 => {
                            bytes.remove(at);
                        }
                        _ => bytes.insert(at, alphabet[rng.next() % alphabet.len()]),
                    }
                }
                if let Ok(text) = std::str::from_utf8(&bytes) {
                    assert_eq!(ours(text), jiter_value(text), "{text:?}");
                    check_partial(text, MAX_DEPTH);
                }
            }
        }
    }

    #[test]
    fn partial_agrees_with_the_rewriting_at_every_cut() {
        for sample in SAMPLES {
            let mut decided = 0;
            let cuts: Vec<usize> = (0..=sample.len())
                .filter(|&i| sample.is_char_boundary(i))
                .collect();
            for &i in &cuts {
                if check_partial(&sample[..i], MAX_DEPTH) {
                    decided += 1;
                }
            }
            // Every prefix but the ones before the first `{` is decided in one pass.
            let before = sample.find('{').unwrap_or(0) + 1;
            assert_eq!(decided, cuts.len() - before, "{sample}");
        }
    }

    #[test]
    fn special_bytes_are_found_at_any_offset() {
        let mut rng = Rng(7);
        for _ in 0..50_000 {
            let len = rng.next() % 150;
            let t: Vec<u8> = (0..len)
                .map(|_| match rng.next() % 40 {
                    0 => b'"',
                    1 => b'\\',
                    2 => u8::try_from(rng.next() % 0x20).unwrap_or(0),
                    3 => 0x7f,
                    4 => 0xe6,
                    5 => 0x20,
                    6 => 0xff,
                    7 => 0x9f,
                    _ => b'a' + u8::try_from(rng.next() % 26).unwrap_or(0),
                })
                .collect();
            let from = if len == 0 { 0 } else { rng.next() % len };
            let want = t[from..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .map_or(len, |k| from + k);
            assert_eq!(special(&t, from), want, "{t:?} {from}");
        }
    }

    #[test]
    fn partial_cut_rules() {
        let read = |t: &str| partial(&mut JsonValues, t, MAX_DEPTH).map(|v| format!("{v:?}"));
        let same = |a: &str, b: &str| {
            assert_eq!(read(a), ours(b).map(|v| format!("{v:?}")), "{a:?}");
        };
        same(r#"{"a": 1, "b": tr"#, r#"{"a": 1}"#);
        same(r#"{"a": "xy\u00"#, r#"{"a": "xy"}"#);
        same(r#"{"a": "xy\ud83d"#, r#"{"a": "xy"}"#);
        same(r#"{"a": "xy\ud83d\ude0"#, r#"{"a": "xy"}"#);
        same(r#"{"a": "xy\"#, r#"{"a": "xy"}"#);
        same(r#"{"a": 12."#, r#"{"a": 12}"#);
        same(r#"{"a": 1e+-"#, r#"{"a": 1}"#);
        same(r#"{"a": -"#, r#"{}"#);
        same(r#"{"a": [1, {"b": n"#, r#"{"a": [1, {}]}"#);
        same(r#"{"a": 1, "b"#, r#"{"a": 1}"#);
        same(r#"{"a": 1, "b" :"#, r#"{"a": 1}"#);
        same(r#"{"a": 1 ,"#, r#"{"a": 1}"#);
        same(r#"{"a": [1, "#, r#"{"a": [1]}"#);
        same(r#"{"a": {"#, r#"{"a": {}}"#);
        assert_eq!(read(r#"{"a": 1, "b": tx"#), None);
        assert_eq!(read(r#"{"a": 1, "b\x"#), None);
        assert_eq!(read(r#"{"a": "\udc00 cut"#), None);
        assert_eq!(read(r#"{"a": 1}}"#), None);
        assert_eq!(read("[1, 2"), None);
        // Depth: values deeper than max_depth are left to the rewriting path.
        assert!(partial(&mut JsonValues, r#"{"a": [[1"#, 3).is_some());
        assert!(partial(&mut JsonValues, r#"{"a": [[1"#, 2).is_none());
        assert!(partial(&mut JsonValues, &"{\"a\": [".repeat(100_000), MAX_DEPTH).is_none());
    }
}
