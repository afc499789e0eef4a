//! Chunk templates: most events of a stream differ from the one before only in one string value
//! (the next piece of text or of a tool call's arguments).
//!
//! A [`Template`] keeps a payload that was fully parsed, split around that value. A later payload
//! that has the same bytes before and after, with exactly one JSON string in between, has the
//! same JSON structure with only that string changed, so its effect on the aggregate is the
//! template's with the new string: it is read by two byte comparisons and one string decode
//! instead of a parse.

use std::borrow::Cow;
use std::ops::Range;

use super::scan::json_string;

/// A payload split around one string value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    prefix: Vec<u8>,
    suffix: Vec<u8>,
}

impl Template {
    /// The template of `data` whose varying value is the JSON string token at `value` (quotes
    /// included).
    pub fn new(data: &[u8], value: Range<usize>) -> Self {
        Self {
            prefix: data[..value.start].to_vec(),
            suffix: data[value.end..].to_vec(),
        }
    }

    /// The value of `data` (valid UTF-8) if it matches the template: same prefix and suffix, one
    /// complete JSON string token in between.
    pub fn read<'a>(&self, data: &'a [u8]) -> Option<Cow<'a, str>> {
        let rest = data.strip_prefix(&self.prefix[..])?;
        let middle = rest.strip_suffix(&self.suffix[..])?;
        match json_string(middle)? {
            (value, b"") => Some(value),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_payloads_of_the_same_shape() {
        let a = br#"{"choices":[{"delta":{"content":"hi"}}]}"#;
        let t = Template::new(a, 32..36);
        let read = |d: &str| t.read(d.as_bytes()).map(Cow::into_owned);
        assert_eq!(
            read(r#"{"choices":[{"delta":{"content":"x\"y"}}]}"#).as_deref(),
            Some("x\"y")
        );
        assert_eq!(
            read(r#"{"choices":[{"delta":{"content":""}}]}"#).as_deref(),
            Some("")
        );
        assert_eq!(
            read(r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#),
            None
        );
        assert_eq!(read(r#"{"choices":[{"delta":{"content":"a\"}}]}"#), None);
        assert_eq!(read(r#"{"choices":[{"delta":{"content":"\x"}}]}"#), None);
        assert_eq!(
            read("{\"choices\":[{\"delta\":{\"content\":\"\n\"}}]}"),
            None
        );
        assert_eq!(read(r#"{"choices":[{"delta":{"content":1}}]}"#), None);
        assert_eq!(read(r#"{"choices":[{"delta":{"content":"a"}}]} "#), None);
        assert_eq!(read(r#"{"choices":[{"delta":{"content":""#), None);
    }
}
