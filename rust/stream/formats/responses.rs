//! `openai-responses` events (`response.*`): output items, text and argument deltas.

use std::collections::HashMap;

use jiter::JsonObject;

use super::super::message::{index_field, obj_field, str_field, to_map, Message};

pub(super) fn responses(
    m: &mut Message,
    by_output: &mut HashMap<i64, usize>,
    chunk: &JsonObject<'_>,
) -> bool {
    let Some(kind) = str_field(chunk, "type") else {
        return true;
    };
    match kind {
        "error" => return false,
        "response.created"
        | "response.in_progress"
        | "response.completed"
        | "response.incomplete"
        | "response.failed" => {
            if let Some(r) = obj_field(chunk, "response") {
                m.set_id_model(str_field(r, "id"), str_field(r, "model"));
                if kind != "response.created" && kind != "response.in_progress" {
                    m.done = true;
                    m.finish_reason = Some(
                        str_field(r, "status")
                            .filter(|s| !s.is_empty())
                            .unwrap_or_else(|| kind.trim_start_matches("response."))
                            .to_owned(),
                    );
                    if let Some(u) = obj_field(r, "usage") {
                        m.usage = Some(to_map(u));
                    }
                }
            }
        }
        "response.output_item.added" | "response.output_item.done" => {
            if let Some(item) =
                obj_field(chunk, "item").filter(|i| str_field(i, "type") == Some("function_call"))
            {
                responses_item(
                    m,
                    by_output,
                    index_field(chunk, "output_index"),
                    item,
                    kind.ends_with("done"),
                );
            }
        }
        "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
            let key = if kind.ends_with("delta") {
                "delta"
            } else {
                "arguments"
            };
            let slot = index_field(chunk, "output_index").and_then(|i| by_output.get(&i));
            if let (Some(&slot), Some(t)) = (slot, str_field(chunk, key)) {
                if key == "delta" {
                    m.calls[slot].arguments.push_str(t);
                } else {
                    m.calls[slot].final_args = Some(t.to_owned());
                }
            }
        }
        "response.output_text.delta" => {
            if let Some(t) = str_field(chunk, "delta") {
                m.text.push_str(t);
            }
        }
        "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
            if let Some(t) = str_field(chunk, "delta") {
                m.add_reasoning(t);
            }
        }
        _ => {}
    }
    true
}

fn responses_item(
    m: &mut Message,
    by_output: &mut HashMap<i64, usize>,
    output_index: Option<i64>,
    item: &JsonObject<'_>,
    done: bool,
) {
    let call_id = str_field(item, "call_id").unwrap_or("");
    let name = str_field(item, "name").unwrap_or("");
    let slot = match output_index.and_then(|i| by_output.get(&i)) {
        Some(&slot) => slot,
        None => {
            let slot = m.new_call(call_id, name);
            m.calls[slot].extra.push((
                "item_id",
                Some(str_field(item, "id").unwrap_or("").to_owned()),
            ));
            if let Some(i) = output_index {
                by_output.insert(i, slot);
            }
            slot
        }
    };
    let call = &mut m.calls[slot];
    if call.id.is_empty() {
        call_id.clone_into(&mut call.id);
    }
    if call.name.is_empty() {
        name.clone_into(&mut call.name);
    }
    if done {
        if let Some(a) = str_field(item, "arguments") {
            call.final_args = Some(a.to_owned());
        }
    }
}
