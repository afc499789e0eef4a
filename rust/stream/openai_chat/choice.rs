//! One choice of an OpenAI chat-completions stream: its text, reasoning and tool calls, merged by
//! the rules in the module docs of [`super`].

use std::collections::HashMap;

use super::chunk::{Choice, Fragment};

/// One aggregated tool call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCall {
    /// The provider's `index` (or one assigned in order of appearance when it sent none).
    pub index: i64,
    /// Call id, `""` if never sent (see [`Self::reported_id`]).
    pub id: String,
    /// The id reported while the provider sent none ([`synthetic_call_id`]).
    pub synthetic_id: String,
    /// Call type, `function` unless the provider said otherwise.
    pub kind: String,
    /// Function name, `""` if never sent.
    pub name: String,
    /// The concatenated argument text.
    pub arguments: String,
}

impl ToolCall {
    /// The provider's id, or the synthesised one when it sent none.
    pub fn reported_id(&self) -> &str {
        if self.id.is_empty() {
            &self.synthetic_id
        } else {
            &self.id
        }
    }
}

/// Characters of a synthesised call id.
const ID_ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The id of a call whose provider sent none: 9 characters of `[0-9A-Za-z]` (Mistral accepts no
/// other tool call ids), the FNV-1a hash of the stream's `id` (as known when the call started,
/// `""` if none) and the call's index, so it is stable over the whole stream, differs between
/// the calls of one response and between responses with different ids, and the twin computes the
/// same one.
pub fn synthetic_call_id(stream_id: &str, index: i64) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let index = index.to_string();
    for b in stream_id.bytes().chain([0]).chain(index.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut id = [0u8; 9];
    for c in id.iter_mut().rev() {
        *c = ID_ALPHABET[(h % 62) as usize];
        h /= 62;
    }
    id.iter().map(|&c| char::from(c)).collect()
}

/// The aggregation state of one choice.
#[derive(Debug, Default)]
pub struct ChoiceState {
    /// Concatenated `delta.content`.
    pub text: String,
    /// Concatenated `delta.reasoning_content` / `delta.reasoning`; `None` until one is seen.
    pub reasoning: Option<String>,
    /// Tool calls in order of first appearance (see [`Self::order`] for the reported order).
    pub tool_calls: Vec<ToolCall>,
    /// Last non-null `finish_reason`.
    pub finish_reason: Option<String>,
    /// Slot in `tool_calls` of the call each index goes to: a call's own index (so the keys are
    /// the indices in use), or the index a provider sent with a call that got another one.
    by_index: HashMap<i64, usize>,
    /// The calls started in increasing order of index (the usual case: no sorting to report them).
    unsorted: bool,
    /// First slot in `tool_calls` whose call has this id.
    by_id: HashMap<String, usize>,
    /// Largest index in use.
    max_index: Option<i64>,
    /// No index below this is free (used once `max_index` is `i64::MAX`).
    lowest_free: i64,
}

impl ChoiceState {
    /// The tool calls in order of index (the slots of `tool_calls`).
    pub fn order(&self) -> Vec<usize> {
        let mut slots: Vec<usize> = (0..self.tool_calls.len()).collect();
        if self.unsorted {
            slots.sort_by_key(|&s| self.tool_calls[s].index);
        }
        slots
    }

    /// The tool call at position `i` in order of index.
    pub fn call_at(&self, i: usize) -> Option<(usize, &ToolCall)> {
        let slot = if self.unsorted {
            *self.order().get(i)?
        } else {
            i
        };
        self.tool_calls.get(slot).map(|c| (slot, c))
    }

    pub(super) fn apply_choice(&mut self, choice: Choice, stream_id: &str) {
        {
            if let Some(t) = choice.content {
                self.text.push_str(&t);
            }
            for r in [choice.reasoning_content, choice.reasoning]
                .into_iter()
                .flatten()
            {
                self.reasoning.get_or_insert_with(String::new).push_str(&r);
            }
            for frag in choice.tool_calls {
                self.merge(frag, stream_id);
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
    }

    fn merge(&mut self, frag: Fragment, stream_id: &str) {
        let id = frag.id.filter(|s| !s.is_empty());
        let known = |s: &Self| id.as_ref().and_then(|id| s.by_id.get(id).copied());
        let slot = match frag.index {
            Some(i) => match self.by_index.get(&i) {
                Some(&slot) if self.other_call(slot, id.as_deref()) => {
                    let slot = match known(self) {
                        Some(slot) => slot,
                        None => self.push_unindexed(stream_id),
                    };
                    self.by_index.insert(i, slot);
                    slot
                }
                Some(&slot) => slot,
                None => self.push_call(i, stream_id),
            },
            None => match (&id, known(self)) {
                (Some(_), Some(slot)) => slot,
                (Some(_), None) => self.push_unindexed(stream_id),
                (None, _) if !self.tool_calls.is_empty() => self.tool_calls.len() - 1,
                (None, _) => self.push_unindexed(stream_id),
            },
        };
        let call = &mut self.tool_calls[slot];
        if call.id.is_empty() {
            if let Some(id) = id {
                let first = self.by_id.entry(id.clone()).or_insert(slot);
                *first = (*first).min(slot);
                call.id = id;
            }
        }
        if call.kind.is_empty() {
            if let Some(k) = frag.kind.filter(|s| !s.is_empty()) {
                call.kind = k;
            }
        }
        if call.name.is_empty() {
            if let Some(n) = frag.name.filter(|s| !s.is_empty()) {
                call.name = n;
            }
        }
        if let Some(a) = frag.arguments {
            call.arguments.push_str(&a);
        }
    }

    /// A fragment with `id` is not part of the call in `slot`: both have an id, and they differ.
    fn other_call(&self, slot: usize, id: Option<&str>) -> bool {
        let held = &self.tool_calls[slot].id;
        id.is_some_and(|id| !held.is_empty() && held != id)
    }

    /// The index for a call started without its own: the largest so far plus one, else the
    /// smallest free one.
    fn next_index(&mut self) -> i64 {
        match self.max_index {
            None => 0,
            Some(m) if m < i64::MAX => m + 1,
            Some(_) => {
                while self.by_index.contains_key(&self.lowest_free) {
                    self.lowest_free += 1;
                }
                self.lowest_free
            }
        }
    }

    /// Start a call that came without an index of its own.
    fn push_unindexed(&mut self, stream_id: &str) -> usize {
        let index = self.next_index();
        self.push_call(index, stream_id)
    }

    /// Start a call with the unused index `index`.
    fn push_call(&mut self, index: i64, stream_id: &str) -> usize {
        let slot = self.tool_calls.len();
        self.by_index.insert(index, slot);
        self.unsorted |= self.max_index.is_some_and(|m| index < m);
        self.max_index = Some(self.max_index.map_or(index, |m| m.max(index)));
        self.tool_calls.push(ToolCall {
            index,
            synthetic_id: synthetic_call_id(stream_id, index),
            ..ToolCall::default()
        });
        slot
    }
}
