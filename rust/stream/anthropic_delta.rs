//! Reading Anthropic `content_block_delta` events fast: nearly every event of a Messages API stream.
//!
//! Three tiers, each giving the same result as the general path (a parsed JSON tree) or declining:
//! 1. the exact compact shape the API sends, `{"type":"content_block_delta","index":N,"delta":
//!    {"type":"text_delta","text":"..."}}` (and `input_json_delta`/`partial_json`,
//!    `thinking_delta`/`thinking`, `signature_delta`/`signature`), matched byte for byte with only
//!    the string value decoded;
//! 2. any other `content_block_delta` object, read with a targeted `jiter` pass (keys in any order,
//!    repeated keys: the last wins, unknown members skipped);
//! 3. everything else (other event types, an `error` member, invalid JSON) is left to the general
//!    path, which also produces the errors.

use std::borrow::Cow;

use jiter::{Jiter, JiterResult, JsonObject, Peek};

use super::message::{index_field, obj_field, str_field};
use super::scan::{for_keys, json_string, not_null, opt_int, opt_string, string_is};

/// The kind of a delta, by its `delta.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeltaKind {
    /// `text_delta`: `delta.text`.
    Text,
    /// `thinking_delta`: `delta.thinking`.
    Thinking,
    /// `signature_delta`: `delta.signature`.
    Signature,
    /// `input_json_delta`: `delta.partial_json`.
    InputJson,
}

/// The delta kinds with their wire names and value members.
const KINDS: [(DeltaKind, &str, &str); 4] = [
    (DeltaKind::Text, "text_delta", "text"),
    (DeltaKind::InputJson, "input_json_delta", "partial_json"),
    (DeltaKind::Thinking, "thinking_delta", "thinking"),
    (DeltaKind::Signature, "signature_delta", "signature"),
];

/// What aggregation takes from one `content_block_delta` event.
#[derive(Debug, PartialEq, Eq)]
pub struct BlockDelta<'a> {
    /// `index` (a non-negative integer).
    pub index: i64,
    /// `delta.type`.
    pub kind: DeltaKind,
    /// The string member of `delta` that `kind` names.
    pub value: Cow<'a, str>,
}

/// The result of reading an event payload.
#[derive(Debug, PartialEq, Eq)]
pub enum Read<'a> {
    /// A delta to fold in.
    Delta(BlockDelta<'a>),
    /// A `content_block_delta` that changes nothing (no usable index, unknown kind, no value).
    Ignored,
    /// Not read here: the general path decides (another type, an `error`, invalid JSON...).
    Other,
}

impl<'a> BlockDelta<'a> {
    /// Read a UTF-8-validated event payload (tiers 1 and 2 of the module docs).
    pub fn read(data: &'a [u8]) -> Read<'a> {
        if let Some(read) = exact(data) {
            return read;
        }
        match Fields::scan(data) {
            Ok(Some(f)) => f.into_read(),
            _ => Read::Other,
        }
    }

    /// The same from a parsed event (`None`: nothing to fold in).
    pub fn from_object(chunk: &'a JsonObject<'a>) -> Option<Self> {
        let index = index_field(chunk, "index")?;
        let delta = obj_field(chunk, "delta")?;
        let (kind, _, member) = KINDS
            .into_iter()
            .find(|(_, name, _)| str_field(delta, "type") == Some(*name))?;
        let value = str_field(delta, member)?;
        Some(Self {
            index,
            kind,
            value: Cow::Borrowed(value),
        })
    }
}

const PREFIX: &[u8] = br#"{"type":"content_block_delta","index":"#;
const DELTA: &[u8] = br#","delta":{"type":""#;

/// Tier 1: the exact compact shape, or `None`.
fn exact(data: &[u8]) -> Option<Read<'_>> {
    let rest = data.strip_prefix(PREFIX)?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 18 || (digits > 1 && rest[0] == b'0') {
        return None;
    }
    let index = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let rest = rest[digits..].strip_prefix(DELTA)?;
    let (kind, rest) = KINDS.into_iter().find_map(|(kind, name, member)| {
        let rest = rest.strip_prefix(name.as_bytes())?.strip_prefix(b"\",\"")?;
        let rest = rest.strip_prefix(member.as_bytes())?.strip_prefix(b"\":")?;
        Some((kind, rest))
    })?;
    let (value, rest) = json_string(rest)?;
    (rest == b"}}").then_some(Read::Delta(BlockDelta { index, kind, value }))
}

/// Tier 2: the members aggregation reads, by a targeted pass over any key order.
#[derive(Debug, Default)]
struct Fields {
    index: Option<i64>,
    /// `delta` is an object.
    has_delta: bool,
    kind: Option<String>,
    /// `text`, `partial_json`, `thinking`, `signature` (in the order of [`KINDS`]).
    members: [Option<String>; 4],
}

impl Fields {
    /// `None` unless the payload is a `content_block_delta` object without a non-null `error`.
    fn scan(data: &[u8]) -> JiterResult<Option<Self>> {
        let mut j = Jiter::new(data);
        if j.peek()? != Peek::Object {
            return Ok(None);
        }
        let (mut f, mut is_delta, mut error) = (Self::default(), false, false);
        for_keys!(j, key => {
            match key {
                "type" => is_delta = string_is(&mut j, "content_block_delta")?,
                "index" => f.index = opt_int(&mut j)?.filter(|i| *i >= 0),
                "delta" => f.scan_delta(&mut j)?,
                "error" => error = not_null(&mut j)?,
                _ => j.next_skip()?,
            }
        });
        j.finish()?;
        Ok((is_delta && !error).then_some(f))
    }

    fn scan_delta(&mut self, j: &mut Jiter<'_>) -> JiterResult<()> {
        *self = Self {
            index: self.index,
            ..Self::default()
        };
        let peek = j.peek()?;
        if peek != Peek::Object {
            return j.known_skip(peek);
        }
        self.has_delta = true;
        for_keys!(j, key => {
            match (key, KINDS.iter().position(|(_, _, member)| *member == key)) {
                ("type", _) => self.kind = opt_string(j)?,
                (_, Some(i)) => self.members[i] = opt_string(j)?,
                _ => j.next_skip()?,
            }
        });
        Ok(())
    }

    fn into_read(self) -> Read<'static> {
        let Self {
            index,
            has_delta,
            kind,
            mut members,
        } = self;
        let found = KINDS
            .iter()
            .position(|(_, name, _)| kind.as_deref() == Some(*name));
        match (index, has_delta, found) {
            (Some(index), true, Some(i)) => match members[i].take() {
                Some(value) => Read::Delta(BlockDelta {
                    index,
                    kind: KINDS[i].0,
                    value: Cow::Owned(value),
                }),
                None => Read::Ignored,
            },
            _ => Read::Ignored,
        }
    }
}

#[cfg(test)]
mod tests {
    use jiter::JsonValue;

    use super::*;

    fn general(case: &str) -> Read<'_> {
        let value = JsonValue::parse(case.as_bytes(), false).unwrap();
        let JsonValue::Object(obj) = &value else {
            panic!()
        };
        match BlockDelta::from_object(obj) {
            Some(d) => Read::Delta(BlockDelta {
                value: Cow::Owned(d.value.into_owned()),
                ..d
            }),
            None => Read::Ignored,
        }
    }

    /// Both fast tiers read what the general path reads, or decline.
    #[test]
    fn fast_tiers_match_the_general_path() {
        let cases: &[&str] = &[
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\u00e9 \"q\""}}"#,
            r#"{"type":"content_block_delta","index":12,"delta":{"type":"input_json_delta","partial_json":"{\"k\": 1"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"東京"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":""}}"#,
            r#"{"delta":{"text":"x","type":"text_delta"},"index":1,"type":"content_block_delta"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"},"delta":7}"#,
            r#"{"type":"content_block_delta","index":0,"delta":7,"delta":{"type":"thinking_delta","thinking":"t"}}"#,
            r#"{"type":"content_block_delta","index":-1,"delta":{"type":"input_json_delta","partial_json":"{"}}"#,
            r#"{"type":"content_block_delta","index":1.0,"index":2,"delta":{"type":"text_delta","text":1,"text":"b"}}"#,
            r#"{"type":"content_block_delta","index":99999999999999999999,"delta":{"type":"text_delta","text":"s"}}"#,
            r#"{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"s"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"},"error":null}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}  }"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"x_delta","text":"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}"#,
        ];
        for case in cases {
            let fast = BlockDelta::read(case.as_bytes());
            if case.contains("01,") {
                assert_eq!(fast, Read::Other, "{case}");
                continue;
            }
            assert_eq!(fast, general(case), "{case}");
        }
        let declined: &[&str] = &[
            r#"{"type":"content_block_delta","index":0,"delta":{},"error":{"message":"m"}}"#,
            r#"{"type":"content_block_delta","type":"ping"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}x"#,
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\nb\"}}",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\x"}}"#,
            r#"[{"type":"content_block_delta"}]"#,
            r#"{"type":"message_stop"}"#,
        ];
        for case in declined {
            assert_eq!(BlockDelta::read(case.as_bytes()), Read::Other, "{case}");
        }
    }

    #[test]
    fn the_exact_shape_borrows_unescaped_values() {
        let data = br#"{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"hi"}}"#;
        let Read::Delta(d) = BlockDelta::read(data) else {
            panic!()
        };
        assert_eq!((d.index, d.kind), (3, DeltaKind::Text));
        assert!(matches!(d.value, Cow::Borrowed("hi")));
    }
}
