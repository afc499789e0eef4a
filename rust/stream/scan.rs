//! Targeted `jiter` passes: read the few fields an aggregator needs from an event payload without
//! building a JSON tree; every other value is validated and skipped.
//!
//! A repeated key behaves like a Python dict: callers assign per key, so the last one wins.

use std::borrow::Cow;
use std::ops::Range;

use jiter::{Jiter, JiterResult, NumberAny, NumberInt, Peek};
use memchr::memchr2;

/// The string at the cursor, or `None` (the value is skipped) when it is not a string.
pub fn opt_string(j: &mut Jiter<'_>) -> JiterResult<Option<String>> {
    let peek = j.peek()?;
    if peek == Peek::String {
        Ok(Some(j.known_str()?.to_owned()))
    } else {
        j.known_skip(peek)?;
        Ok(None)
    }
}

/// The string at the cursor with its span in the input (quotes included), or `None` (the value
/// is skipped) when it is not a string.
pub fn opt_string_span(j: &mut Jiter<'_>) -> JiterResult<Option<(String, Range<usize>)>> {
    let peek = j.peek()?;
    let start = j.current_index();
    if peek == Peek::String {
        let s = j.known_str()?.to_owned();
        Ok(Some((s, start..j.current_index())))
    } else {
        j.known_skip(peek)?;
        Ok(None)
    }
}

/// The JSON string at the start of `s` (which is valid UTF-8) and what follows it.
pub fn json_string(s: &[u8]) -> Option<(Cow<'_, str>, &[u8])> {
    let body = s.strip_prefix(b"\"")?;
    let end = memchr2(b'"', b'\\', body)?;
    if body[end] == b'"' {
        let raw = &body[..end];
        if raw.iter().any(|b| *b < 0x20) {
            return None;
        }
        return Some((
            Cow::Borrowed(std::str::from_utf8(raw).ok()?),
            &body[end + 1..],
        ));
    }
    let mut j = Jiter::new(s);
    let value = j.next_str().ok()?.to_owned();
    Some((Cow::Owned(value), &s[j.current_index()..]))
}

/// Whether the value at the cursor is the string `want` (it is consumed either way).
pub fn string_is(j: &mut Jiter<'_>, want: &str) -> JiterResult<bool> {
    let peek = j.peek()?;
    if peek == Peek::String {
        Ok(j.known_str()? == want)
    } else {
        j.known_skip(peek)?;
        Ok(false)
    }
}

/// `Some(i)` for a JSON integer that fits i64, `None` for anything else.
pub fn opt_int(j: &mut Jiter<'_>) -> JiterResult<Option<i64>> {
    let peek = j.peek()?;
    if peek.is_num() {
        Ok(match j.known_number(peek)? {
            NumberAny::Int(NumberInt::Int(i)) => Some(i),
            _ => None,
        })
    } else {
        j.known_skip(peek)?;
        Ok(None)
    }
}

/// Whether the value at the cursor is anything but `null` (it is consumed either way).
pub fn not_null(j: &mut Jiter<'_>) -> JiterResult<bool> {
    let peek = j.peek()?;
    j.known_skip(peek)?;
    Ok(peek != Peek::Null)
}

/// Iterate an array's object elements; non-objects (and non-arrays) are skipped.
pub fn each_object(
    j: &mut Jiter<'_>,
    mut f: impl FnMut(&mut Jiter<'_>) -> JiterResult<()>,
) -> JiterResult<()> {
    let peek = j.peek()?;
    if peek != Peek::Array {
        return j.known_skip(peek);
    }
    let mut next = j.known_array()?;
    while let Some(p) = next {
        if p == Peek::Object {
            f(j)?;
        } else {
            j.known_skip(p)?;
        }
        next = j.array_step()?;
    }
    Ok(())
}

/// Run `$body` with each key of the object at the cursor (its `Peek::Object` must already be
/// known); `$body` must consume the key's value.
macro_rules! for_keys {
    ($j:ident, $key:ident => $body:block) => {{
        let mut k = $j.known_object()?;
        while let Some($key) = k {
            $body
            k = $j.next_key()?;
        }
    }};
}
pub(crate) use for_keys;
