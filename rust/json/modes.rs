//! The readings `parse_arguments` tries in each mode, and their order, for any builder of values.
//!
//! - strict: the text as one JSON object (blank text is `{}`); its error is the canonical one;
//! - partial: the text read in one pass ([`onepass::partial`]: values built while reading, what is
//!   open closed where the text ends); when that pass does not decide, a text that may be whole
//!   (see [`partial::may_be_complete`]) read strictly, else the text as a truncated prefix closed by
//!   [`partial::complete_partial`] (`{"a": 1, "b": tr` -> `{"a": 1}`), which the one pass mirrors;
//! - lenient: a valid object as it is; a JSON string whose content reads (leniently) as an object,
//!   unwrapped (double-encoded arguments); else [`partial::repair`], its objects back to back merged
//!   ([`merge_texts`]); else the truncated-prefix reading of partial mode.
//!
//! When no reading gives an object, the error is the strict error of the original text. Every
//! reading is checked against `max_depth`. The builder ([`Build`]) only turns text into values:
//! jiter's [`JsonValue`] ([`Values`], what `cargo test` and the fuzz targets run) or Python objects
//! (the binding), so both follow this one order. The pure-Python twin is
//! `toolweave._reference.json.parse_arguments`.

use std::collections::{HashMap, HashSet};

use jiter::{JsonObject, JsonValue, PartialMode};

use super::{
    deeper_than, error_within, get, is_blank, kind_name, make_error, not_an_object, onepass,
    partial, MAX_DEPTH,
};
use crate::errors::CoreError;

/// How `parse_arguments` reads a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One strict JSON object.
    Strict,
    /// A truncated prefix of one (a streamed tool call so far).
    Partial,
    /// LLM output: repaired, unwrapped, merged, or read as a prefix.
    Lenient,
}

impl Mode {
    /// The mode named `name` (`strict`, `partial`, `lenient`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Mode> {
        match name {
            "strict" => Some(Mode::Strict),
            "partial" => Some(Mode::Partial),
            "lenient" => Some(Mode::Lenient),
            _ => None,
        }
    }
}

/// What a strict parse of a whole text gave.
pub enum Parsed<O> {
    /// An object.
    Object(O),
    /// A string, with its content (lenient mode reads it again).
    Str(String),
    /// Another value, with its kind (`array`, `number`, `boolean`, `null`).
    Other(&'static str),
}

/// Turns strict JSON text into values of one kind.
pub trait Build {
    /// The object values built.
    type Object;

    /// Parse `text` strictly (no depth limit below [`MAX_DEPTH`]).
    ///
    /// # Errors
    /// The byte offset where the parser stopped, when `text` is not valid JSON.
    fn parse(&self, text: &str) -> Result<Parsed<Self::Object>, usize>;

    /// An empty object (blank text).
    fn empty(&self) -> Self::Object;

    /// Partial mode in one pass ([`onepass::partial`]): the object, or `None` when that pass does
    /// not decide and the rewriting path must.
    fn partial(&self, text: &str, max_depth: usize) -> Option<Self::Object>;

    /// `f(text)`: text-only work (scans, repairs) a builder may run elsewhere, e.g. without the GIL.
    fn work<T: Send>(&self, text: &str, f: impl Fn(&str) -> T + Send + Sync) -> T {
        f(text)
    }
}

/// [`deeper_than`] for text a parser accepted: parsers stop at [`MAX_DEPTH`] themselves, so only a
/// lower limit needs the scan.
fn deeper_than_parsed(text: &str, max_depth: usize) -> Option<usize> {
    (max_depth < MAX_DEPTH)
        .then(|| deeper_than(text.as_bytes(), max_depth))
        .flatten()
}

/// Read `text` in `mode` as an object nested at most `max_depth` (1 ..= 200) levels deep.
///
/// # Errors
/// [`CoreError::InvalidArguments`]: the strict error of `text` when no reading gives an object, or
/// (lenient) objects back to back that give one key different values.
pub fn parse<B: Build>(
    b: &B,
    text: &str,
    mode: Mode,
    max_depth: usize,
) -> Result<B::Object, CoreError> {
    if mode == Mode::Strict || is_blank(text.as_bytes()) {
        return strict(b, text, max_depth);
    }
    if mode == Mode::Lenient {
        if let Some(o) = lenient(b, text, max_depth)? {
            return Ok(o);
        }
    } else if let Some(o) = b.partial(text, max_depth) {
        // One pass: what the readings below give, without rewriting the text.
        return Ok(o);
    } else if partial::may_be_complete(text) {
        // A whole object (the last fragment has arrived) reads the same strictly: one parse.
        if let Some(o) = object(b, text, max_depth) {
            return Ok(o);
        }
    }
    let completed = b.work(text, partial::complete_partial);
    if let Some(o) = completed.and_then(|c| object(b, &c, max_depth)) {
        return Ok(o);
    }
    strict(b, text, max_depth)
}

/// Strict mode: the object, or the canonical error of `text`.
fn strict<B: Build>(b: &B, text: &str, max_depth: usize) -> Result<B::Object, CoreError> {
    if is_blank(text.as_bytes()) {
        return Ok(b.empty());
    }
    match b.parse(text) {
        Ok(parsed) => {
            if let Some(pos) = deeper_than_parsed(text, max_depth) {
                return Err(make_error(text, pos, &super::depth_reason(max_depth)));
            }
            match parsed {
                Parsed::Object(o) => Ok(o),
                Parsed::Str(_) => Err(not_an_object(text, "string")),
                Parsed::Other(kind) => Err(not_an_object(text, kind)),
            }
        }
        Err(at) => Err(b.work(text, |t| error_within(t, at, max_depth))),
    }
}

/// `text` as an object if it parses strictly to one nested at most `max_depth` levels deep.
fn object<B: Build>(b: &B, text: &str, max_depth: usize) -> Option<B::Object> {
    match b.parse(text) {
        Ok(Parsed::Object(o)) => deeper_than_parsed(text, max_depth).is_none().then_some(o),
        _ => None,
    }
}

/// The lenient readings before the truncated-prefix one; `None`: none of them gives an object.
fn lenient<B: Build>(b: &B, text: &str, max_depth: usize) -> Result<Option<B::Object>, CoreError> {
    match b.parse(text) {
        Ok(Parsed::Object(o)) if deeper_than_parsed(text, max_depth).is_none() => {
            return Ok(Some(o))
        }
        Ok(Parsed::Str(inner)) => {
            if let Ok(o) = parse(b, &inner, Mode::Lenient, max_depth) {
                return Ok(Some(o));
            }
        }
        _ => {}
    }
    let Some(objects) = b.work(text, partial::repair) else {
        return Ok(None);
    };
    let merged = match objects.as_slice() {
        [(_, one)] => one.clone(),
        _ => match merge_texts(&objects, max_depth) {
            Ok(Some(m)) => m,
            Ok(None) => return Ok(None),
            Err((at, keys)) => return Err(make_error(text, at, &clash(&keys))),
        },
    };
    Ok(object(b, &merged, max_depth))
}

/// The strict objects `objects` (texts, each with its offset in the original text) that followed
/// one another, as one object text: the members of each in turn, a key repeated with the same
/// value kept once. `Ok(None)` when one of them is not an object nested at most `max_depth` deep.
///
/// # Errors
/// The offset of the first object that gives a key already seen another value ([`same`]), with
/// those keys in its order: merging them would lose one.
pub fn merge_texts(
    objects: &[(usize, String)],
    max_depth: usize,
) -> Result<Option<String>, (usize, Vec<String>)> {
    let mut seen: HashMap<String, JsonValue<'static>> = HashMap::new();
    let mut members: Vec<&str> = Vec::with_capacity(objects.len());
    for (at, text) in objects {
        let Ok(JsonValue::Object(obj)) =
            JsonValue::parse_owned(text.as_bytes(), false, PartialMode::Off)
        else {
            return Ok(None);
        };
        if deeper_than(text.as_bytes(), max_depth).is_some() {
            return Ok(None);
        }
        let mut clashes = Vec::new();
        let mut keys = HashSet::new();
        for (key, _) in obj.iter() {
            if !keys.insert(key.as_ref()) {
                continue;
            }
            let value = get(&obj, key).unwrap_or(&JsonValue::Null);
            if seen.get(key.as_ref()).is_some_and(|old| !same(old, value)) {
                clashes.push(key.to_string());
            }
        }
        if !clashes.is_empty() {
            return Err((*at, clashes));
        }
        for key in keys {
            let value = get(&obj, key).cloned().unwrap_or(JsonValue::Null);
            seen.insert(key.to_string(), value);
        }
        let body = text
            .trim()
            .strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'));
        match body.map(str::trim) {
            Some("") => {}
            Some(inner) => members.push(inner),
            None => return Ok(None),
        }
    }
    Ok(Some(format!("{{{}}}", members.join(","))))
}

/// Equal JSON values of the same types all the way down (`1`, `1.0` and `true` differ; the order
/// of an object's keys does not matter, and with duplicate keys the last value counts).
#[must_use]
pub fn same(a: &JsonValue<'_>, b: &JsonValue<'_>) -> bool {
    match (a, b) {
        (JsonValue::Null, JsonValue::Null) => true,
        (JsonValue::Bool(x), JsonValue::Bool(y)) => x == y,
        (JsonValue::Int(x), JsonValue::Int(y)) => x == y,
        (JsonValue::BigInt(x), JsonValue::BigInt(y)) => x == y,
        (JsonValue::Float(x), JsonValue::Float(y)) => x == y,
        (JsonValue::Str(x), JsonValue::Str(y)) => x == y,
        (JsonValue::Array(x), JsonValue::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(v, w)| same(v, w))
        }
        (JsonValue::Object(x), JsonValue::Object(y)) => {
            let keys =
                |o: &JsonObject<'_>| o.iter().map(|(k, _)| k.to_string()).collect::<HashSet<_>>();
            let kx = keys(x);
            kx == keys(y)
                && kx
                    .iter()
                    .all(|k| matches!((get(x, k), get(y, k)), (Some(v), Some(w)) if same(v, w)))
        }
        _ => false,
    }
}

/// The error reason for objects back to back that disagree on `keys`.
fn clash(keys: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut named: Vec<String> = keys
        .iter()
        .take(SHOWN)
        .map(|k| serde_json::to_string(k).unwrap_or_default())
        .collect();
    if keys.len() > SHOWN {
        named.push(format!("and {} more", keys.len() - SHOWN));
    }
    format!(
        "JSON objects back to back give different values for {}: merging them would lose one",
        named.join(", ")
    )
}

/// The pure builder: jiter's [`JsonValue`] (integers exact, duplicate keys kept in order; read them
/// with [`get`], where the last one wins).
pub struct Values;

impl Build for Values {
    type Object = JsonObject<'static>;

    fn parse(&self, text: &str) -> Result<Parsed<Self::Object>, usize> {
        match JsonValue::parse_owned(text.as_bytes(), false, PartialMode::Off) {
            Ok(JsonValue::Object(o)) => Ok(Parsed::Object(o)),
            Ok(JsonValue::Str(s)) => Ok(Parsed::Str(s.into_owned())),
            Ok(other) => Ok(Parsed::Other(kind_name(&other))),
            Err(e) => Err(e.index),
        }
    }

    fn empty(&self) -> Self::Object {
        JsonObject::default()
    }

    fn partial(&self, text: &str, max_depth: usize) -> Option<Self::Object> {
        match onepass::partial(&mut onepass::JsonValues, text, max_depth)? {
            JsonValue::Object(o) => Some(o),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, mode: Mode) -> Result<Vec<(String, String)>, String> {
        match super::parse(&Values, text, mode, MAX_DEPTH) {
            Ok(o) => Ok(o
                .iter()
                .map(|(k, v)| (k.to_string(), format!("{v:?}")))
                .collect()),
            Err(CoreError::InvalidArguments { reason, .. }) => Err(reason),
            Err(other) => panic!("{other:?}"),
        }
    }

    fn keys(text: &str, mode: Mode) -> Vec<String> {
        read(text, mode)
            .unwrap()
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    #[test]
    fn strict_rejects_what_the_other_modes_read() {
        let cut = r#"{"a": 1, "b": tr"#;
        assert_eq!(read(cut, Mode::Strict), Err("expected a value".into()));
        assert_eq!(keys(cut, Mode::Partial), ["a"]);
        assert_eq!(keys(cut, Mode::Lenient), ["a"]);
        assert_eq!(keys("  ", Mode::Partial), Vec::<String>::new());
        assert_eq!(
            read("[1]", Mode::Partial),
            Err("expected a JSON object, got array".into())
        );
    }

    #[test]
    fn lenient_unwraps_repairs_and_merges() {
        assert_eq!(keys(r#""{\"a\": 1}""#, Mode::Lenient), ["a"]);
        assert_eq!(keys("```json\n{'a': True,}\n```", Mode::Lenient), ["a"]);
        assert_eq!(
            keys(r#"{"a": 1}{"b": 2}{"a": 1}"#, Mode::Lenient),
            ["a", "b", "a"]
        );
        assert_eq!(
            keys(r#"[{"a": 1}, {}, {"b": {"c": [1]}}]"#, Mode::Lenient),
            ["a", "b"]
        );
        assert_eq!(
            read(r#"{"a": 1}{"a": 1.0, "b": 2}"#, Mode::Lenient),
            Err(r#"JSON objects back to back give different values for "a": merging them would lose one"#.into())
        );
        assert_eq!(
            read(r#""x""#, Mode::Lenient),
            Err("expected a JSON object, got string".into())
        );
    }

    #[test]
    fn same_is_typed_and_ignores_key_order() {
        let v = |t: &str| JsonValue::parse_owned(t.as_bytes(), false, PartialMode::Off).unwrap();
        assert!(same(
            &v(r#"{"a": [1, {"b": null}], "c": "x"}"#),
            &v(r#"{"c": "x", "a": [1, {"b": null}]}"#)
        ));
        assert!(same(&v(r#"{"a": 1, "a": 2}"#), &v(r#"{"a": 2}"#)));
        assert!(!same(&v("1"), &v("1.0")));
        assert!(!same(&v("1"), &v("true")));
        assert!(!same(&v("[1, 2]"), &v("[1]")));
        assert!(!same(&v(r#"{"a": 1}"#), &v(r#"{"a": 1, "b": 1}"#)));
    }

    #[test]
    fn clashes_are_named_at_the_later_object() {
        let objects = [
            (0, r#"{"a": 1, "b": [1]}"#.to_string()),
            (9, r#"{"b": [2], "a": 2}"#.to_string()),
        ];
        assert_eq!(
            merge_texts(&objects, MAX_DEPTH),
            Err((9, vec!["b".into(), "a".into()]))
        );
        let many: Vec<String> = (0..7).map(|i| format!("k{i}")).collect();
        assert!(clash(&many).ends_with(r#""k4", and 2 more: merging them would lose one"#));
    }

    #[test]
    fn every_reading_respects_max_depth() {
        let deep = r#"{"a": [[1]]}"#;
        for mode in [Mode::Strict, Mode::Partial, Mode::Lenient] {
            assert!(super::parse(&Values, deep, mode, 3).is_ok(), "{mode:?}");
            assert!(super::parse(&Values, deep, mode, 2).is_err(), "{mode:?}");
        }
        let objects = [(0, r#"{"a": 1}"#.to_string()), (8, deep.to_string())];
        assert_eq!(merge_texts(&objects, 2), Ok(None));
    }
}
