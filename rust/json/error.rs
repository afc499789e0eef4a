//! Argument errors: [`CoreError::InvalidArguments`] with the character position, line, column
//! and an excerpt of the text around the problem, as the pure-Python twin words them.

use super::scan::{locate_error_within, TOO_DEEP};
use super::MAX_DEPTH;
use crate::errors::{show, CoreError};

/// The reason reported for nesting deeper than `max_depth` levels.
pub fn depth_reason(max_depth: usize) -> String {
    format!("nesting deeper than {max_depth} levels")
}

/// Characters shown either side of an error position.
pub const EXCERPT_RADIUS: usize = 20;

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
