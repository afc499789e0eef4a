//! Partial and lenient argument text: rewritten into strict JSON, then parsed strictly.
//!
//! The rules are those of the pure-Python twin, `toolweave._reference.repair` (its module
//! docstring is the specification). Every syntax character is ASCII, so scanning bytes is the
//! same as scanning the twin's code points, and slices always fall on character boundaries.
//! Both functions are iterative: no recursion at any nesting depth.

/// JSON's whitespace (a `match`, not `b" \t\n\r".contains`: a byte slice's `contains` is a `memchr` call for
/// every byte tested, and the closing scan tests a few bytes around every token).
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

pub(crate) fn ws(t: &[u8], mut i: usize) -> usize {
    while i < t.len() && is_ws(t[i]) {
        i += 1;
    }
    i
}

pub(crate) fn is_number_byte(b: u8) -> bool {
    b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E')
}

/// The text is not a prefix of valid JSON.
pub(crate) struct Invalid;

/// Where the content of a string stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StrEnd {
    /// The closing quote was found: the position after it.
    Closed(usize),
    /// The text ends inside the string. Partial mode keeps the content up to this position and
    /// drops the rest: an incomplete escape (`\`, `\u` with fewer than 4 hex digits) or a high
    /// surrogate escape whose low half has not (fully) arrived; otherwise it is the end of text.
    Open(usize),
}

/// Scan string content from `j` (after the opening quote or after a complete character or
/// escape), validating it as JSON does: no raw control characters, only the JSON escapes, hex
/// digits after `\u` (lone surrogates are left to the strict parser). A high surrogate escape
/// followed by a complete `\u` escape is one unit, so [`StrEnd::Open`] never falls between the
/// halves of a pair: the content before it decodes on its own.
pub(crate) fn scan_string(t: &[u8], mut j: usize) -> Result<StrEnd, Invalid> {
    let n = t.len();
    loop {
        let k = memchr::memchr2(b'"', b'\\', &t[j..]).map_or(n, |k| j + k);
        if t[j..k].iter().any(|&b| b < 0x20) {
            return Err(Invalid);
        }
        if k >= n {
            return Ok(StrEnd::Open(n));
        }
        if t[k] == b'"' {
            return Ok(StrEnd::Closed(k + 1));
        }
        match escape_len(t, k)? {
            Some(len) => j = k + len,
            None => return Ok(StrEnd::Open(k)),
        }
    }
}

/// Length of the complete escape at `t[j] == b'\\'` (12 for a surrogate pair), or `None` when the
/// text ends before it is complete.
fn escape_len(t: &[u8], j: usize) -> Result<Option<usize>, Invalid> {
    match t.get(j + 1) {
        None => Ok(None),
        Some(b'u') => {
            let Some(code) = hex4(t, j + 2)? else {
                return Ok(None);
            };
            if !(0xD800..=0xDBFF).contains(&code) {
                return Ok(Some(6));
            }
            let rest = &t[j + 6..];
            if low_prefix(rest) {
                return Ok(None);
            }
            let pair = rest.starts_with(b"\\u") && matches!(hex4(t, j + 8), Ok(Some(_)));
            Ok(Some(if pair { 12 } else { 6 }))
        }
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(Some(2)),
        Some(_) => Err(Invalid),
    }
}

/// The code unit of the 4 hex digits at `i`; `None` when the text ends first.
fn hex4(t: &[u8], i: usize) -> Result<Option<u32>, Invalid> {
    let hexes = &t[i..(i + 4).min(t.len())];
    if !hexes.iter().all(u8::is_ascii_hexdigit) {
        return Err(Invalid);
    }
    if hexes.len() < 4 {
        return Ok(None);
    }
    Ok(hexes.iter().try_fold(0, |acc, &h| {
        char::from(h).to_digit(16).map(|d| acc * 16 + d)
    }))
}

/// End (after the closing quote) of the string opening at `i`; `None` at end of text.
fn string_end(t: &[u8], i: usize) -> Result<Option<usize>, Invalid> {
    Ok(match scan_string(t, i + 1)? {
        StrEnd::Closed(end) => Some(end),
        StrEnd::Open(_) => None,
    })
}

/// `rest` is empty, `\`, or `\u` with up to 3 hex digits: a low surrogate escape not yet complete.
fn low_prefix(rest: &[u8]) -> bool {
    match rest {
        [] | [b'\\'] => true,
        [b'\\', b'u', hex @ ..] => hex.len() <= 3 && hex.iter().all(u8::is_ascii_hexdigit),
        _ => false,
    }
}

fn closers(stack: &[(u8, usize)]) -> String {
    stack.iter().rev().map(|(c, _)| *c as char).collect()
}

/// Whether `text` may be a whole JSON object: its last non-blank byte is `}` and it has as many
/// opening brackets as closing ones (counted anywhere, strings included: a cheap filter, not a
/// proof). A truncated prefix (the common partial input) fails it, so partial mode skips the strict
/// attempt that would build its objects only to fail at the end.
#[must_use]
pub fn may_be_complete(text: &str) -> bool {
    text.trim_end_matches([' ', '\t', '\n', '\r'])
        .ends_with('}')
        && brackets_balance(text.as_bytes())
}

/// Whether `t` has as many `{`/`[` as `}`/`]`: one pass, counted in byte-wide lanes over blocks of
/// 255 bytes (no count can wrap), which LLVM vectorises (the two `memchr2` counts it replaces cost
/// a call per bracket: 8% of a 2 KB partial parse).
fn brackets_balance(t: &[u8]) -> bool {
    let (mut open, mut close) = (0usize, 0usize);
    for block in t.chunks(255) {
        // `{` 0x7B and `[` 0x5B differ only in bit 0x20, as do `}` 0x7D and `]` 0x5D.
        let count = |byte: u8| {
            block
                .iter()
                .fold(0u8, |n, &b| n + u8::from(b | 0x20 == byte))
        };
        open += usize::from(count(b'{'));
        close += usize::from(count(b'}'));
    }
    open == close
}

/// Close a truncated JSON text; `None` when it is not a prefix of valid JSON.
pub fn complete_partial(text: &str) -> Option<String> {
    complete(text).ok()
}

fn key(t: &[u8], i: usize) -> Result<Option<usize>, Invalid> {
    let Some(end) = string_end(t, i)? else {
        return Ok(None);
    };
    let i = ws(t, end);
    if i >= t.len() {
        return Ok(None);
    }
    if t[i] != b':' {
        return Err(Invalid);
    }
    let i = ws(t, i + 1);
    Ok((i < t.len()).then_some(i))
}

#[allow(clippy::too_many_lines)]
fn complete(text: &str) -> Result<String, Invalid> {
    let t = text.as_bytes();
    let n = t.len();
    let mut stack: Vec<(u8, usize)> = Vec::new();
    let rollback = |stack: &[(u8, usize)]| -> Result<String, Invalid> {
        let (_, start) = stack.last().ok_or(Invalid)?;
        Ok(format!("{}{}", &text[..*start], closers(stack)))
    };
    let mut i = ws(t, 0);
    loop {
        if i >= n {
            return rollback(&stack);
        }
        let c = t[i];
        match c {
            b'{' | b'[' => {
                let closer = if c == b'{' { b'}' } else { b']' };
                stack.push((closer, i + 1));
                i = ws(t, i + 1);
                if i >= n {
                    return Ok(format!("{text}{}", closers(&stack)));
                }
                if t[i] == closer {
                    stack.pop();
                    i += 1;
                } else if c == b'[' {
                    continue;
                } else if t[i] == b'"' {
                    match key(t, i)? {
                        Some(k) => i = k,
                        None => return rollback(&stack),
                    }
                    continue;
                } else {
                    return Err(Invalid);
                }
            }
            b'"' => match scan_string(t, i + 1)? {
                StrEnd::Closed(end) => i = end,
                StrEnd::Open(cut) => {
                    if stack.is_empty() {
                        return Err(Invalid);
                    }
                    return Ok(format!("{}\"{}", &text[..cut], closers(&stack)));
                }
            },
            b'-' | b'0'..=b'9' => {
                let mut j = i;
                while j < n && is_number_byte(t[j]) {
                    j += 1;
                }
                if j >= n {
                    let number = text[i..].trim_end_matches(['+', '-', '.', 'e', 'E']);
                    if number.is_empty() || stack.is_empty() {
                        return rollback(&stack);
                    }
                    return Ok(format!("{}{number}{}", &text[..i], closers(&stack)));
                }
                i = j;
            }
            b't' | b'f' | b'n' => {
                let word: &[u8] = match c {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if t[i..].starts_with(word) {
                    i += word.len();
                } else if word.starts_with(&t[i..]) {
                    return rollback(&stack);
                } else {
                    return Err(Invalid);
                }
            }
            _ => return Err(Invalid),
        }
        // After a complete value.
        loop {
            i = ws(t, i);
            let Some(&(closer, _)) = stack.last() else {
                return if i < n {
                    Err(Invalid)
                } else {
                    Ok(text.to_owned())
                };
            };
            if i >= n {
                return Ok(format!("{text}{}", closers(&stack)));
            }
            if t[i] == b',' {
                if let Some(top) = stack.last_mut() {
                    top.1 = i;
                }
                i = ws(t, i + 1);
                if i >= n {
                    return rollback(&stack);
                }
                if closer == b'}' {
                    if t[i] != b'"' {
                        return Err(Invalid);
                    }
                    match key(t, i)? {
                        Some(k) => i = k,
                        None => return rollback(&stack),
                    }
                }
                break;
            }
            if t[i] == closer {
                stack.pop();
                i += 1;
                continue;
            }
            return Err(Invalid);
        }
    }
}

/// Whether a `'` followed by `t[i..]` ends a single-quoted string: the next non-blank is a
/// delimiter (`,` `:` `}` `]`) or the end. Otherwise it is an apostrophe (`'it's'`).
fn closes(t: &[u8], i: usize) -> bool {
    let k = ws(t, i);
    k >= t.len() || matches!(t[k], b',' | b':' | b'}' | b']')
}

/// A `quote`-delimited string at `i` rewritten as a strict double-quoted one (closed at end of
/// text); in a single-quoted string, a `'` that [`closes`] nothing is kept as an apostrophe.
fn quoted(text: &str, i: usize, quote: u8, out: &mut String) -> usize {
    let t = text.as_bytes();
    let n = t.len();
    out.push('"');
    let mut j = i + 1;
    let mut run = j; // start of bytes copied verbatim
    while j < n {
        let c = t[j];
        let replacement: Option<&str> = if c == quote && (quote == b'"' || closes(t, j + 1)) {
            out.push_str(&text[run..j]);
            out.push('"');
            return j + 1;
        } else if c == b'\\' && j + 1 < n {
            out.push_str(&text[run..j]);
            if t[j + 1] == b'\'' {
                out.push('\'');
            } else {
                // `\` plus the next character (which may be multi-byte).
                let next_len = text[j + 1..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&text[j..j + 1 + next_len]);
                j += 1 + next_len;
                run = j;
                continue;
            }
            j += 2;
            run = j;
            continue;
        } else {
            match c {
                b'"' => Some("\\\""),
                b'\n' => Some("\\n"),
                b'\r' => Some("\\r"),
                b'\t' => Some("\\t"),
                b'\\' => Some(""),
                c if c < 0x20 => None,
                _ => {
                    j += 1;
                    continue;
                }
            }
        };
        out.push_str(&text[run..j]);
        match replacement {
            Some(r) => out.push_str(r),
            None => out.push_str(&format!("\\u{c:04x}")),
        }
        j += 1;
        run = j;
    }
    out.push_str(&text[run..n]);
    out.push('"');
    n
}

fn drop_trailing_comma(out: &mut String) {
    let trimmed = out.trim_end_matches([' ', '\t', '\n', '\r']);
    if trimmed.ends_with(',') {
        let at = trimmed.len() - 1;
        out.remove(at);
    }
}

/// The content of the first markdown code fence (```` ```lang\n ... ``` ````), if any.
fn fenced(text: &str) -> Option<&str> {
    let t = text.as_bytes();
    let mut from = 0;
    while let Some(off) = text[from..].find("```") {
        let open = from + off;
        let mut j = open + 3;
        while j < t.len() && (t[j].is_ascii_alphanumeric() || matches!(t[j], b'_' | b'+' | b'-')) {
            j += 1;
        }
        while j < t.len() && matches!(t[j], b' ' | b'\t') {
            j += 1;
        }
        if j < t.len() && t[j] == b'\r' {
            j += 1;
        }
        if j < t.len() && t[j] == b'\n' {
            let body = &text[j + 1..];
            return Some(body.find("```").map_or(body, |end| &body[..end]));
        }
        from = open + 1;
    }
    None
}

fn is_word_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Rewrite LLM output into strict JSON objects (see the twin's module docstring): the first object,
/// and each further object that follows it back to back (only whitespace and commas between, as
/// in `{"a": 1}{"b": 2}` or a JSON array of objects), each with the byte offset in `text` where
/// it starts. `None` when hopeless (a later object that cannot be repaired is read as a truncated
/// prefix, as lenient mode reads the first).
pub fn repair(text: &str) -> Option<Vec<(usize, String)>> {
    let body = fenced(text).unwrap_or(text);
    let offset = body.as_ptr() as usize - text.as_ptr() as usize;
    let t = body.as_bytes();
    let n = t.len();
    let mut i = body.find('{')?;
    let mut objects = Vec::new();
    let mut start = i;
    let mut out = String::with_capacity(n + 16);
    let mut stack: Vec<u8> = Vec::new();
    while i < n {
        let c = t[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                out.push(c as char);
                i += 1;
            }
            b'"' | b'\'' => i = quoted(body, i, c, &mut out),
            b'{' | b'[' => {
                stack.push(if c == b'{' { b'}' } else { b']' });
                out.push(c as char);
                i += 1;
            }
            b'}' | b']' => {
                i += 1;
                if stack.last() != Some(&c) {
                    continue; // a stray closing bracket
                }
                stack.pop();
                drop_trailing_comma(&mut out);
                out.push(c as char);
                if stack.is_empty() {
                    objects.push((offset + start, std::mem::take(&mut out)));
                    let next = skip_separators(t, i);
                    if t.get(next) != Some(&b'{') {
                        return Some(objects); // trailing prose is dropped
                    }
                    (i, start) = (next, next);
                }
            }
            b',' | b':' => {
                out.push(c as char);
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let from = i;
                while i < n && is_number_byte(t[i]) {
                    i += 1;
                }
                out.push_str(&body[from..i]);
            }
            c if is_word_start(c) => {
                let from = i;
                while i < n && is_word_byte(t[i]) {
                    i += 1;
                }
                let word = &body[from..i];
                let literal = match word {
                    "true" | "True" => Some("true"),
                    "false" | "False" => Some("false"),
                    "null" | "None" => Some("null"),
                    _ => None,
                };
                if let Some(l) = literal {
                    out.push_str(l);
                } else if stack.last() == Some(&b'}') && t.get(ws(t, i)) == Some(&b':') {
                    out.push('"');
                    out.push_str(word);
                    out.push('"');
                } else {
                    return hopeless(objects, body, offset, start);
                }
            }
            _ => return hopeless(objects, body, offset, start),
        }
    }
    drop_trailing_comma(&mut out);
    objects.push((offset + start, complete_partial(&out)?));
    Some(objects)
}

/// Repair gave up at the object starting at `start`: `None` for the first one (lenient mode then
/// reads the whole text as a truncated prefix); a later one is read that way alone.
fn hopeless(
    mut objects: Vec<(usize, String)>,
    body: &str,
    offset: usize,
    start: usize,
) -> Option<Vec<(usize, String)>> {
    if objects.is_empty() {
        return None;
    }
    objects.push((offset + start, complete_partial(&body[start..])?));
    Some(objects)
}

/// Past the whitespace and commas at `i`.
fn skip_separators(t: &[u8], mut i: usize) -> usize {
    while i < t.len() && matches!(t[i], b' ' | b'\t' | b'\n' | b'\r' | b',') {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_text_ending_in_a_brace_may_be_complete() {
        assert!(may_be_complete("{\"a\": 1} \n"));
        assert!(may_be_complete("{\"a\": \"}")); // a truncated string may pass: the strict attempt fails
        assert!(!may_be_complete("{\"a\": {\"b\": 1}")); // a nested object closed, the outer one not
        assert!(!may_be_complete("{\"a\": 1"));
        assert!(!may_be_complete("{\"a\": [1]"));
        assert!(!may_be_complete(""));
    }

    #[test]
    fn brackets_balance_counts_across_blocks() {
        let naive = |t: &[u8]| {
            let n = |set: &[u8]| t.iter().filter(|b| set.contains(b)).count();
            n(b"{[") == n(b"}]")
        };
        let deep = format!("{}x{}", "[{".repeat(300), "}]".repeat(300));
        let skew = format!("{}{}", "{".repeat(256), "]".repeat(255));
        for text in [
            deep.as_str(),
            skew.as_str(),
            "{\"\u{7b}\u{5b}\": \"\u{fffd}]\"}",
            "{;}{",
        ] {
            let t = text.as_bytes();
            assert_eq!(brackets_balance(t), naive(t), "{text}");
            for cut in [1, 254, 255, 256, 511] {
                let t = &t[..cut.min(t.len())];
                assert_eq!(brackets_balance(t), naive(t));
            }
        }
    }

    #[test]
    fn partial_closes_prefixes() {
        let cases = [
            (r#"{"name": "Al"#, Some(r#"{"name": "Al"}"#)),
            (r#"{"a": [1, 2, tr"#, Some(r#"{"a": [1, 2]}"#)),
            (r#"{"a": 1, "b"#, Some(r#"{"a": 1}"#)),
            (r#"{"a": 1."#, Some(r#"{"a": 1}"#)),
            (r#"{"a":"x\u12"#, Some(r#"{"a":"x"}"#)),
            (r#"{"a":"\ud83d"#, Some(r#"{"a":""}"#)),
            (r#"{"a": {"#, Some(r#"{"a": {}}"#)),
            ("{\"a\": tx", None),
        ];
        for (text, want) in cases {
            assert_eq!(complete_partial(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn repair_fixes_llm_output() {
        let text = "Here:\n```json\n{'a': True, b: None, \"c\": [1,2,],}\n```\nthanks";
        let first = |text: &str| repair(text).map(|objects| objects[0].1.clone());
        assert_eq!(
            first(text).as_deref(),
            Some("{\"a\": true, \"b\": null, \"c\": [1,2]}")
        );
        assert_eq!(
            first("{\"a\": \"é\nx\"}}").as_deref(),
            Some("{\"a\": \"é\\nx\"}")
        );
        assert_eq!(
            repair("x ```\n{'a': 1}, \n{b: 2} {\"c\": [3\n```"),
            Some(vec![
                (6, "{\"a\": 1}".to_string()),
                (17, "{\"b\": 2}".to_string()),
                (24, "{\"c\": [3\n]}".to_string())
            ])
        );
        assert_eq!(repair("{a: foo}"), None);
        assert_eq!(repair("no object"), None);
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let deep = "[".repeat(100_000);
        assert!(complete_partial(&format!("{{\"a\":{deep}")).is_some());
        assert!(repair(&format!("{{\"a\":{deep}")).is_some());
    }
}
