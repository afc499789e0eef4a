//! `ollama` `/api/chat` NDJSON objects.

use jiter::{JsonObject, JsonValue};
use serde_json::Map;

use super::super::message::{
    array_field, compact, field, is_true, obj_field, str_field, to_serde, Message,
};

const OLLAMA_USAGE: [&str; 6] = [
    "prompt_eval_count",
    "eval_count",
    "total_duration",
    "load_duration",
    "prompt_eval_duration",
    "eval_duration",
];

pub(super) fn ollama(m: &mut Message, chunk: &JsonObject<'_>) {
    m.set_id_model(None, str_field(chunk, "model"));
    if let Some(msg) = obj_field(chunk, "message") {
        if let Some(t) = str_field(msg, "content") {
            m.text.push_str(t);
        }
        if let Some(t) = str_field(msg, "thinking") {
            m.add_reasoning(t);
        }
        for tc in array_field(msg, "tool_calls").unwrap_or(&[]) {
            let JsonValue::Object(tc) = tc else { continue };
            let Some(f) = obj_field(tc, "function") else {
                continue;
            };
            let slot = m.new_call(
                str_field(tc, "id").unwrap_or(""),
                str_field(f, "name").unwrap_or(""),
            );
            let args = match field(f, "arguments") {
                Some(JsonValue::Str(s)) => s.to_string(),
                None | Some(JsonValue::Null) => "{}".to_owned(),
                Some(v) => compact(&to_serde(v)),
            };
            m.calls[slot].final_args = Some(args);
        }
    }
    if is_true(chunk, "done") {
        m.done = true;
        m.finish_reason = Some(
            str_field(chunk, "done_reason")
                .filter(|s| !s.is_empty())
                .unwrap_or("stop")
                .to_owned(),
        );
        let mut usage = Map::new();
        for k in OLLAMA_USAGE {
            if let Some(v) = field(chunk, k) {
                usage.insert(k.to_owned(), to_serde(v));
            }
        }
        if !usage.is_empty() {
            m.usage = Some(usage);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::stream::{Inner, StreamAggregator};

    #[test]
    fn ollama_ndjson() {
        let mut agg = StreamAggregator::new("ollama").unwrap();
        let n = agg.outcomes(b"{\"model\":\"m\",\"message\":{\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"a\":1}}}]}}\n{\"done\":true}").len();
        assert_eq!(n, 2);
        let Inner::Generic(g) = agg.inner() else {
            panic!()
        };
        assert_eq!(g.message.calls[0].arguments(), r#"{"a":1}"#);
        assert_eq!(g.message.finish_reason.as_deref(), Some("stop"));
    }
}
