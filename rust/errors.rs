//! The one error type of the pure core. `rust/py/errors.rs` maps it to Python exceptions.

use std::fmt;

/// Everything the pure core can fail with.
#[derive(Debug, Clone, PartialEq)]
pub enum CoreError {
    /// Tool-call arguments are not a strict JSON object (Python: `ToolArgumentsError`).
    InvalidArguments {
        /// Full message, e.g. `invalid tool arguments at line 1 column 7 (char 6): expected a value near '{"a": tru'`.
        message: String,
        /// Short reason without location, e.g. `expected a value`.
        reason: String,
        /// 0-based offset in characters (Unicode code points) of the input text.
        position: usize,
        /// 1-based line (lines are split on `\n`).
        line: usize,
        /// 1-based column in characters.
        column: usize,
        /// Up to 20 characters either side of `position`.
        excerpt: String,
    },
    /// An SSE `data:` payload is not a JSON object (Python: `StreamFormatError`).
    StreamFormat {
        /// Full message.
        message: String,
        /// 1-based number of the SSE event in the stream (every dispatched event counts).
        event: usize,
        /// The first 60 characters of the payload.
        excerpt: String,
    },
    /// The provider reported an error inside the stream (Python: `ProviderStreamError`).
    Provider {
        /// The provider's message.
        message: String,
        /// The SSE event type (`error` for an `event: error` frame, else `message`).
        event: String,
        /// The raw `data:` payload.
        data: Vec<u8>,
    },
    /// A stream format this build does not know; the message names the supported ones (Python: `ValueError`).
    UnknownFormat(String),
    /// A schema function's input: nesting deeper than the schema limit, not a valid JSON Schema, an
    /// unknown dialect name (Python: `ValueError`).
    Schema(String),
    /// A usage value of the wrong type (Python: `TypeError`).
    UsageType(String),
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::InvalidArguments { message, .. }
            | CoreError::StreamFormat { message, .. }
            | CoreError::Provider { message, .. }
            | CoreError::UsageType(message)
            | CoreError::UnknownFormat(message)
            | CoreError::Schema(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for CoreError {}

/// Render `text` for an error message: newlines, tabs and other control characters become escapes.
///
/// The pure-Python twin (`toolweave._reference.json._show`) does exactly the same.
pub fn show(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_escapes_controls() {
        assert_eq!(show("a\nb\t\u{1}c"), "a\\nb\\t\\u0001c");
    }
}
