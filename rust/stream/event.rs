//! What a rejected event turns into: format errors with an excerpt of the payload, and the
//! provider errors a stream reports (shared by every format).

use super::sse::SseEvent;
use super::Outcome;
use crate::errors::{show, CoreError};

/// Characters of a bad payload quoted in a `StreamFormatError`.
const PAYLOAD_EXCERPT: usize = 60;

/// The reason of a `StreamFormatError` for a number with more than 4300 integer digits.
const NUMBER_IN_DATA_TOO_LARGE: &str =
    "data has a number too large (more than 4300 integer digits)";

/// First 60 characters of `data`, decoded lossily.
pub(crate) fn payload_excerpt(data: &[u8]) -> String {
    String::from_utf8_lossy(data)
        .chars()
        .take(PAYLOAD_EXCERPT)
        .collect()
}

/// The message of a provider error payload: `error.message`, a string `error`, a top-level
/// `message`, or else the raw text.
fn provider_message(data: &[u8]) -> String {
    let raw = || String::from_utf8_lossy(data).into_owned();
    let Ok(value) = jiter::JsonValue::parse(data, false) else {
        return raw();
    };
    let jiter::JsonValue::Object(obj) = &value else {
        return raw();
    };
    match crate::json::get(obj, "error") {
        Some(jiter::JsonValue::Object(err)) => match crate::json::get(err, "message") {
            Some(jiter::JsonValue::Str(m)) => return m.to_string(),
            _ => return raw(),
        },
        Some(jiter::JsonValue::Str(m)) => return m.to_string(),
        _ => {}
    }
    match crate::json::get(obj, "message") {
        Some(jiter::JsonValue::Str(m)) => m.to_string(),
        _ => raw(),
    }
}

/// `data` without leading and trailing ASCII whitespace.
pub(crate) fn trim_ascii(data: &[u8]) -> &[u8] {
    let start = data
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(data.len());
    let end = data
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &data[start..end]
}

/// A `StreamFormatError` outcome for event number `event`.
pub(crate) fn bad_payload(event: usize, data: &[u8], what: &str) -> Outcome {
    let excerpt = payload_excerpt(data);
    let message = format!("event {event}: {what}: '{}'", show(&excerpt));
    Outcome::Failed(CoreError::StreamFormat {
        message,
        event,
        excerpt,
    })
}

/// The reason of a `StreamFormatError` for data nested deeper than `max_depth`.
pub(crate) fn too_deep(max_depth: usize) -> String {
    format!("data nests deeper than {max_depth} levels")
}

/// Why a payload is not valid JSON (a too-large number and too deep nesting have their own
/// reasons; a lower `max_depth` was already checked by the caller).
pub(crate) fn invalid_json_reason(data: &[u8]) -> String {
    match crate::json::locate_error(data) {
        Some((_, crate::json::NUMBER_TOO_LARGE)) => NUMBER_IN_DATA_TOO_LARGE.to_string(),
        Some((_, crate::json::TOO_DEEP)) => too_deep(crate::json::MAX_DEPTH),
        _ => "data is not valid JSON".to_string(),
    }
}

/// The provider error of an event; the first one is also kept in `first`.
pub(crate) fn provider_error(first: &mut Option<CoreError>, ev: &SseEvent) -> CoreError {
    let event = if ev.event.is_empty() {
        "message".to_string()
    } else {
        String::from_utf8_lossy(ev.event).into_owned()
    };
    let err = CoreError::Provider {
        message: provider_message(ev.data),
        event,
        data: ev.data.to_vec(),
    };
    if first.is_none() {
        *first = Some(err.clone());
    }
    err
}
