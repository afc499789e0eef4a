//! The resumable partial parser of one growing tool-call argument text: what `PartialArguments`
//! and `StreamAggregator.partial_arguments` do, without Python (twin:
//! `toolweave._reference.incremental`).
//!
//! The argument text of a streamed tool call only grows, and a caller wants its partial value
//! after every fragment. Re-parsing the whole text each time costs O(n) per fragment (O(n^2) over
//! a stream). [`Incremental`] keeps a [`Scanner`], which scans each byte once and reports what it
//! finds to a [`LiveValue`]: a value built once and updated in place (the Python layer builds
//! `dict`s and `list`s, [`JsonTree`] builds `serde_json` values for the tests and fuzz targets).
//!
//! The order of the paths, defined here once:
//!
//! 1. text that is not an extension of the text seen before starts afresh (new scanner, new
//!    value);
//! 2. a one-shot error already known to be final ([`is_final`]) is returned again, unparsed;
//! 3. the scanner's live value, while the scanner handles the text;
//! 4. whatever the scanner does not handle (invalid text, a top level that is not an object,
//!    nesting deeper than the limit, a scalar the builder rejects) leaves the live value behind
//!    for good and takes the one-shot path, a new value per ask, so errors are the one-shot ones.
//!
//! So after each fragment the value equals `parse_arguments(text, mode='partial')`, and a
//! fragment costs time proportional to its own length (plus a number still being written, read
//! again).

use serde_json::{Map, Value};

use crate::errors::CoreError;
use crate::json::incremental::{Builder, Progress, Scanner, Tail, Unhandled};
use crate::json::{self, EXCERPT_RADIUS};

/// A value built from a [`Scanner`]'s reports, updated in place as the text grows.
pub trait LiveValue: Builder {
    /// What a caller gets for the text so far (the Python layer: the live top-level `dict`).
    type Object;

    /// Put the member in progress (`progress`'s tail) in its place; the top-level object.
    fn settle(&mut self, progress: &Progress<'_>) -> Result<Self::Object, Unhandled>;

    /// Forget the value: the next one is a new object.
    fn reset(&mut self);
}

/// A value of the text so far.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer<T> {
    /// The live value, updated in place by later text.
    Live(T),
    /// A one-shot value, new at each ask.
    Fresh(T),
}

impl<T> Answer<T> {
    /// The value, live or not.
    pub fn into_inner(self) -> T {
        match self {
            Answer::Live(v) | Answer::Fresh(v) => v,
        }
    }
}

/// The path state of one growing argument text (see the module docs); the value itself is the
/// caller's [`LiveValue`].
#[derive(Debug, Default)]
pub struct Incremental {
    scanner: Scanner,
    /// The text is not handled incrementally (invalid, too deep, not an object): one-shot path.
    unhandled: bool,
    /// The one-shot error, once no extension of the text can change it ([`is_final`]).
    error: Option<CoreError>,
}

impl Incremental {
    /// The partial value of `text` (values nested at most `max_depth` levels deep), scanning only
    /// what was added since the last call; `one_shot(text, max_depth)` is the one-shot partial
    /// parse, used when the scanner does not handle the text.
    ///
    /// # Errors
    ///
    /// The one-shot parse's error ([`CoreError::InvalidArguments`]).
    pub fn advance<V: LiveValue>(
        &mut self,
        text: &str,
        max_depth: usize,
        live: &mut V,
        one_shot: impl FnOnce(&str, usize) -> Result<V::Object, CoreError>,
    ) -> Result<Answer<V::Object>, CoreError> {
        if !self.scanner.extends(text) {
            *self = Self::default();
            live.reset();
        }
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if !self.unhandled {
            match self
                .scanner
                .advance(text, max_depth, live)
                .and_then(|progress| live.settle(&progress))
            {
                Ok(v) => return Ok(Answer::Live(v)),
                Err(Unhandled) => {
                    self.unhandled = true;
                    live.reset();
                }
            }
        }
        one_shot(text, max_depth)
            .map(Answer::Fresh)
            .inspect_err(|e| {
                if self.scanner.opened() && is_final(e, text) {
                    self.error = Some(e.clone());
                }
            })
    }
}

/// Whether every extension of `text` has the same one-shot error `e`, given that the text opened
/// its top-level object (so the scanner left it to the one-shot parser for a reason found in
/// complete tokens: a syntax error, a scalar the parser rejects, a lone surrogate, nesting too
/// deep, text after the object), so asking again after more text need not parse it again (an
/// invalid text grows by whatever the model still sends).
///
/// The strict scanner reports the first error in text order, found in those same complete
/// tokens, and the message quotes [`EXCERPT_RADIUS`] characters after the position: the error is
/// final once more than that many characters follow it. (Before the top-level `{`, an error can
/// still depend on the end of the text: `"abc` is an unterminated string, `"abc"` not an object.)
pub fn is_final(e: &CoreError, text: &str) -> bool {
    let CoreError::InvalidArguments { position, .. } = e else {
        return false;
    };
    text.chars().skip(*position).nth(EXCERPT_RADIUS).is_some()
}

/// Bytes at the end of the text remembered with a [`Remembered`] value.
const LAST_TAIL: usize = 16;

/// The last answer given for a text, recognised by the text's length and last bytes (the text only
/// grows): asking again before more text arrived returns the same object.
#[derive(Debug)]
pub struct Remembered<T> {
    len: usize,
    tail: Vec<u8>,
    value: T,
}

impl<T> Remembered<T> {
    /// Remember `value` as the answer for `text`.
    pub fn new(text: &str, value: T) -> Self {
        let t = text.as_bytes();
        Self {
            len: t.len(),
            tail: t[t.len().saturating_sub(LAST_TAIL)..].to_vec(),
            value,
        }
    }

    /// The remembered answer when `text` is the text it was given for.
    pub fn recall(&self, text: &str) -> Option<&T> {
        let t = text.as_bytes();
        (self.len == t.len() && self.tail[..] == t[t.len().saturating_sub(LAST_TAIL)..])
            .then_some(&self.value)
    }
}

/// A [`LiveValue`] of `serde_json` values: the model of the Python layer's live `dict`, for the
/// Rust tests and the fuzz targets (each ask returns a copy of the whole value).
#[derive(Debug, Default)]
pub struct JsonTree {
    /// The open containers, outermost first, each with the key of its member in progress.
    stack: Vec<(Value, Option<String>)>,
    /// The closed top-level object.
    done: Option<Value>,
    /// The string value in progress, decoded so far.
    string: Option<String>,
}

/// A complete JSON scalar, key or string piece as a `serde_json` value.
fn decode(raw: &str) -> Result<Value, Unhandled> {
    serde_json::from_str(raw).map_err(|_| Unhandled)
}

impl JsonTree {
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
}

impl Builder for JsonTree {
    fn open(&mut self, object: bool) -> Result<(), Unhandled> {
        let c = if object {
            Value::Object(Map::new())
        } else {
            Value::Array(Vec::new())
        };
        if self.stack.is_empty() && !object {
            return Err(Unhandled);
        }
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
        let Value::String(k) = decode(raw)? else {
            return Err(Unhandled);
        };
        self.stack.last_mut().ok_or(Unhandled)?.1 = Some(k);
        Ok(())
    }

    fn scalar(&mut self, raw: &str) -> Result<(), Unhandled> {
        let v = decode(raw)?;
        self.add(v)
    }

    fn string_piece(&mut self, raw: &str) -> Result<(), Unhandled> {
        let Value::String(piece) = decode(&format!("\"{raw}\""))? else {
            return Err(Unhandled);
        };
        self.string.get_or_insert_with(String::new).push_str(&piece);
        Ok(())
    }

    fn string_end(&mut self) -> Result<(), Unhandled> {
        let s = self.string.take().unwrap_or_default();
        self.add(Value::String(s))
    }
}

impl LiveValue for JsonTree {
    type Object = Value;

    fn settle(&mut self, progress: &Progress<'_>) -> Result<Value, Unhandled> {
        let tail = match progress {
            Progress::Blank => return Ok(Value::Object(Map::new())),
            Progress::Done => return self.done.clone().ok_or(Unhandled),
            Progress::Open(tail) => tail,
        };
        let mut child = match tail {
            Tail::Nothing => None,
            Tail::Str => Some(Value::String(self.string.clone().unwrap_or_default())),
            Tail::Num(n) => Some(decode(n)?),
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

    fn reset(&mut self) {
        *self = Self::default();
    }
}

/// The one-shot partial value of `text` as `serde_json` (the [`JsonTree`] model of
/// `parse_arguments(text, mode='partial')`): `{}` for blank text, else the text completed by
/// [`json::partial::complete_partial`] parsed strictly, which must be an object nested at most
/// `max_depth` levels deep.
///
/// # Errors
///
/// The strict error of `text` ([`CoreError::InvalidArguments`]).
pub fn one_shot_json(text: &str, max_depth: usize) -> Result<Value, CoreError> {
    if json::is_blank(text.as_bytes()) {
        return Ok(Value::Object(Map::new()));
    }
    let strict_error = || match json::deeper_than(text.as_bytes(), max_depth) {
        Some(pos) => json::make_error(text, pos, &json::depth_reason(max_depth)),
        None => json::error_within(text, text.len(), max_depth),
    };
    let completed = json::partial::complete_partial(text).ok_or_else(strict_error)?;
    if json::deeper_than(completed.as_bytes(), max_depth).is_some() {
        return Err(strict_error());
    }
    match serde_json::from_str::<Value>(&completed) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(strict_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ask after every `size`-byte fragment (moved forward to char boundaries); every answer.
    fn ask_each(text: &str, size: usize) -> Vec<(Result<Value, CoreError>, bool)> {
        let (mut inc, mut tree) = (Incremental::default(), JsonTree::default());
        let mut end = 0;
        let mut out = Vec::new();
        while end < text.len() {
            end = (end + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let answer = inc.advance(&text[..end], 50, &mut tree, one_shot_json);
            out.push(match answer {
                Ok(Answer::Live(v)) => (Ok(v), true),
                Ok(Answer::Fresh(v)) => (Ok(v), false),
                Err(e) => (Err(e), false),
            });
        }
        out
    }

    fn prefixes(text: &str, size: usize) -> Vec<&str> {
        let mut end = 0;
        let mut out = Vec::new();
        while end < text.len() {
            end = (end + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            out.push(&text[..end]);
        }
        out
    }

    const TEXTS: &[&str] = &[
        r#"{"city": "Paris", "days": [1, 2.5, -3e2], "opts": {"unit": "C\u00e9\n", "x": null, "ok": true}}"#,
        r#"  {"a": [[], {}, [{"b": "\ud83d\ude00 smile"}]], "n": 12345678901234567890}"#,
        r#"{"s": "é😀 long \" quoted \\ string", "t": false}"#,
    ];

    #[test]
    fn every_answer_is_the_one_shot_value_and_live() {
        for text in TEXTS {
            for size in [1, 3, 8, 64] {
                let answers = ask_each(text, size);
                for ((answer, live), prefix) in answers.into_iter().zip(prefixes(text, size)) {
                    assert_eq!(answer, one_shot_json(prefix, 50), "{prefix:?}");
                    assert!(live, "{prefix:?} left the live path");
                }
            }
        }
    }

    #[test]
    fn invalid_text_takes_the_one_shot_path_and_its_final_error_is_kept() {
        let text = r#"{"a": 1, "b": tru "c": 2, "d": "some more text after the error"}"#;
        let answers = ask_each(text, 4);
        let first_error = answers.iter().position(|(a, _)| a.is_err()).unwrap();
        assert!(answers[..first_error].iter().all(|(_, live)| *live));
        for ((answer, live), prefix) in answers.into_iter().zip(prefixes(text, 4)) {
            assert_eq!(answer, one_shot_json(prefix, 50), "{prefix:?}");
            if answer.is_err() {
                assert!(!live);
            }
        }
        let e = one_shot_json(text, 50).unwrap_err();
        assert!(is_final(&e, text));
        assert!(!is_final(&e, &text[..20]));
    }

    #[test]
    fn a_text_that_is_not_an_extension_starts_afresh() {
        let (mut inc, mut tree) = (Incremental::default(), JsonTree::default());
        let a = inc.advance(r#"{"a": "xy"#, 50, &mut tree, one_shot_json);
        assert_eq!(a.unwrap(), Answer::Live(serde_json::json!({"a": "xy"})));
        let b = inc.advance(r#"{"b": 1"#, 50, &mut tree, one_shot_json);
        assert_eq!(b.unwrap(), Answer::Live(serde_json::json!({"b": 1})));
    }

    #[test]
    fn too_deep_and_not_an_object_are_one_shot() {
        let deep = format!("{{\"a\": {}", "[".repeat(60));
        let answers = ask_each(&deep, 7);
        assert!(answers.iter().any(|(_, live)| !live));
        for ((answer, _), prefix) in answers.into_iter().zip(prefixes(&deep, 7)) {
            assert_eq!(answer, one_shot_json(prefix, 50), "{prefix:?}");
        }
        let (mut inc, mut tree) = (Incremental::default(), JsonTree::default());
        assert!(inc.advance("[1, 2", 50, &mut tree, one_shot_json).is_err());
    }

    /// Every text with one byte replaced by a syntax character (a deterministic small fuzz: the
    /// fuzz target `partial_incremental` does the same on any text).
    #[test]
    fn mutated_texts_answer_as_the_one_shot_parse() {
        for text in TEXTS {
            for at in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
                for c in ["\"", "}", "]", ",", "\\", "x", "1", ":", " "] {
                    let next = (at + 1..=text.len())
                        .find(|&j| text.is_char_boundary(j))
                        .unwrap();
                    let mutated = format!("{}{c}{}", &text[..at], &text[next..]);
                    for size in [1, 5] {
                        let answers = ask_each(&mutated, size);
                        for ((answer, _), prefix) in
                            answers.into_iter().zip(prefixes(&mutated, size))
                        {
                            assert_eq!(answer, one_shot_json(prefix, 50), "{prefix:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn remembered_answers_are_recalled_for_the_same_text_only() {
        let r = Remembered::new("{\"a\": 1", 7);
        assert_eq!(r.recall("{\"a\": 1"), Some(&7));
        assert_eq!(r.recall("{\"a\": 12"), None);
        assert_eq!(r.recall("{\"b\": 1"), None);
    }
}
