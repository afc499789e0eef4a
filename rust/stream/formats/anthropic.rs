//! `anthropic` Messages API events (`message_start`, `content_block_*`, `message_delta`, `error`).

use std::collections::HashMap;

use jiter::{JsonObject, JsonValue};
use serde_json::{Map, Value};

use super::super::anthropic_delta::{BlockDelta, DeltaKind};
use super::super::message::{
    compact, index_field, obj_field, str_field, to_map, to_serde, Block, Message,
};

pub(super) fn anthropic(
    m: &mut Message,
    by_index: &mut HashMap<i64, usize>,
    chunk: &JsonObject<'_>,
) -> bool {
    match str_field(chunk, "type") {
        Some("error") => return false,
        Some("message_start") => {
            if let Some(msg) = obj_field(chunk, "message") {
                m.set_id_model(str_field(msg, "id"), str_field(msg, "model"));
                if let Some(u) = obj_field(msg, "usage") {
                    m.usage = Some(to_map(u));
                }
            }
        }
        Some("content_block_start") => anthropic_start(m, by_index, chunk),
        Some("content_block_delta") => {
            if let Some(d) = BlockDelta::from_object(chunk) {
                apply_block_delta(m, by_index, &d);
            }
        }
        Some("message_delta") => {
            if let Some(reason) =
                obj_field(chunk, "delta").and_then(|d| str_field(d, "stop_reason"))
            {
                m.finish_reason = Some(reason.to_owned());
            }
            if let Some(u) = obj_field(chunk, "usage") {
                let usage = m.usage.get_or_insert_with(Map::new);
                for (k, v) in u.iter() {
                    if !matches!(v, JsonValue::Null) {
                        usage.insert(k.to_string(), to_serde(v));
                    }
                }
            }
        }
        Some("message_stop") => m.done = true,
        _ => {}
    }
    true
}

fn anthropic_start(m: &mut Message, by_index: &mut HashMap<i64, usize>, chunk: &JsonObject<'_>) {
    let (Some(index), Some(block)) = (
        index_field(chunk, "index"),
        obj_field(chunk, "content_block"),
    ) else {
        return;
    };
    let mut rec = Block {
        start: to_map(block),
        ..Block::default()
    };
    match str_field(block, "type") {
        Some("tool_use") => {
            let slot = m.new_call(
                str_field(block, "id").unwrap_or(""),
                str_field(block, "name").unwrap_or(""),
            );
            if let Some(input) = obj_field(block, "input").filter(|o| !o.is_empty()) {
                m.calls[slot].final_args = Some(compact(&Value::Object(to_map(input))));
            }
            rec.call = Some(slot);
        }
        Some("text") => {
            if let Some(t) = str_field(block, "text").filter(|t| !t.is_empty()) {
                m.text.push_str(t);
            }
        }
        Some("thinking") => {
            if let Some(t) = str_field(block, "thinking").filter(|t| !t.is_empty()) {
                m.add_reasoning(t);
            }
        }
        _ => {}
    }
    by_index.insert(index, m.blocks.len());
    m.blocks.push(rec);
}

pub(super) fn apply_block_delta(
    m: &mut Message,
    by_index: &HashMap<i64, usize>,
    d: &BlockDelta<'_>,
) {
    let Some(&pos) = by_index.get(&d.index) else {
        return;
    };
    let rec = &mut m.blocks[pos];
    let t = d.value.as_ref();
    match d.kind {
        DeltaKind::Text => {
            m.text.push_str(t);
            rec.parts.push_str(t);
        }
        DeltaKind::Thinking => {
            rec.parts.push_str(t);
            m.reasoning.get_or_insert_with(String::new).push_str(t);
        }
        DeltaKind::Signature => rec.signature.push_str(t),
        DeltaKind::InputJson => {
            rec.parts.push_str(t);
            if let Some(slot) = rec.call {
                let call = &mut m.calls[slot];
                if !rec.json {
                    call.final_args = None;
                }
                call.arguments.push_str(t);
            }
            rec.json = true;
        }
    }
}

/// The content blocks as JSON objects (see the twin's `Anthropic.blocks`).
pub fn anthropic_blocks(m: &Message) -> Vec<Value> {
    m.blocks
        .iter()
        .map(|rec| {
            let mut b = rec.start.clone();
            let kind = b
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let prefixed = |b: &Map<String, Value>, key: &str, tail: &str| {
                let head = b.get(key).and_then(Value::as_str).unwrap_or("");
                Value::String(format!("{head}{tail}"))
            };
            if kind == "text" {
                let v = prefixed(&b, "text", &rec.parts);
                b.insert("text".into(), v);
            } else if kind == "thinking" {
                let v = prefixed(&b, "thinking", &rec.parts);
                b.insert("thinking".into(), v);
                let s = prefixed(&b, "signature", &rec.signature);
                b.insert("signature".into(), s);
            } else if rec.json
                || matches!(
                    kind.as_str(),
                    "tool_use" | "server_tool_use" | "mcp_tool_use"
                )
            {
                b.insert("input_raw".into(), Value::String(rec.parts.clone()));
            }
            Value::Object(b)
        })
        .collect()
}
