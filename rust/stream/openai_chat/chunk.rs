//! Reading one chat-completions chunk with a targeted `jiter` pass (only the aggregated fields are
//! decoded), or through a [`Template`] when it differs from the last one only in one string.

use std::ops::Range;

use jiter::{Jiter, JiterResult, Peek};

use crate::stream::scan::{each_object, for_keys, not_null, opt_int, opt_string, opt_string_span};
use crate::stream::template::Template;

#[derive(Debug, Clone, Default)]
pub(super) struct Fragment {
    pub(super) index: Option<i64>,
    pub(super) id: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) name: Option<String>,
    pub(super) arguments: Option<String>,
    /// Span of the `arguments` string in the payload.
    pub(super) arguments_at: Option<Range<usize>>,
}

#[derive(Default)]
pub(super) struct Choice {
    pub(super) content: Option<String>,
    pub(super) reasoning_content: Option<String>,
    pub(super) reasoning: Option<String>,
    pub(super) finish_reason: Option<String>,
    pub(super) tool_calls: Vec<Fragment>,
    /// Spans of `content`, `reasoning_content` and `reasoning` in the payload.
    pub(super) spans: [Option<Range<usize>>; 3],
}

/// The string a [`Template`] varies in a one-choice chunk, with the rest of that choice.
#[derive(Debug, Clone)]
pub(super) enum Slot {
    Content,
    ReasoningContent,
    Reasoning,
    /// The arguments of the choice's only tool-call fragment (its other fields as here).
    Arguments(Fragment),
}

/// A template with what its chunks do: fill `slot` of choice `choice`.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    pub(super) template: Template,
    pub(super) choice: i64,
    pub(super) slot: Slot,
}

impl Shape {
    /// The shape of a parsed chunk whose only effect besides one string is already done (`id`
    /// and `model` are first-wins): one choice, no finish reason, no usage, and exactly one of
    /// content, reasoning, or the arguments of a single tool-call fragment.
    pub(super) fn of(chunk: &Chunk, data: &[u8]) -> Option<Self> {
        if chunk.error || chunk.usage.is_some() {
            return None;
        }
        let [(choice, c)] = &chunk.choices[..] else {
            return None;
        };
        if c.finish_reason.is_some() {
            return None;
        }
        let strings = [&c.content, &c.reasoning_content, &c.reasoning];
        let set = strings.iter().filter(|s| s.is_some()).count() + c.tool_calls.len();
        if set != 1 {
            return None;
        }
        let (span, slot) = match (&c.tool_calls[..], &c.spans) {
            ([f], _) => (
                f.arguments_at.clone()?,
                Slot::Arguments(Fragment {
                    arguments: None,
                    arguments_at: None,
                    ..f.clone()
                }),
            ),
            (_, [Some(s), _, _]) => (s.clone(), Slot::Content),
            (_, [_, Some(s), _]) => (s.clone(), Slot::ReasoningContent),
            (_, [_, _, Some(s)]) => (s.clone(), Slot::Reasoning),
            _ => return None,
        };
        Some(Self {
            template: Template::new(data, span),
            choice: *choice,
            slot,
        })
    }

    /// The chunk of a payload whose string is `value`.
    pub(super) fn chunk(&self, value: String) -> Chunk {
        let mut c = Choice::default();
        match &self.slot {
            Slot::Content => c.content = Some(value),
            Slot::ReasoningContent => c.reasoning_content = Some(value),
            Slot::Reasoning => c.reasoning = Some(value),
            Slot::Arguments(f) => c.tool_calls.push(Fragment {
                arguments: Some(value),
                ..f.clone()
            }),
        }
        Chunk {
            choices: vec![(self.choice, c)],
            ..Chunk::default()
        }
    }
}

#[derive(Default)]
pub(super) struct Chunk {
    pub(super) id: Option<String>,
    pub(super) model: Option<String>,
    pub(super) usage: Option<Range<usize>>,
    pub(super) error: bool,
    pub(super) choices: Vec<(i64, Choice)>,
}

fn split<T, U>(v: Option<(T, U)>) -> (Option<T>, Option<U>) {
    v.map_or((None, None), |(t, u)| (Some(t), Some(u)))
}

fn parse_fragment(j: &mut Jiter<'_>) -> JiterResult<Fragment> {
    let mut f = Fragment::default();
    for_keys!(j, key => {
        match key {
            "index" => f.index = opt_int(j)?.filter(|i| *i >= 0),
            "id" => f.id = opt_string(j)?,
            "type" => f.kind = opt_string(j)?,
            "function" => {
                f.name = None;
                f.arguments = None;
                f.arguments_at = None;
                let peek = j.peek()?;
                if peek == Peek::Object {
                    for_keys!(j, fk => {
                        match fk {
                            "name" => f.name = opt_string(j)?,
                            "arguments" => {
                                (f.arguments, f.arguments_at) = split(opt_string_span(j)?);
                            }
                            _ => j.next_skip()?,
                        }
                    });
                } else {
                    j.known_skip(peek)?;
                }
            }
            _ => j.next_skip()?,
        }
    });
    Ok(f)
}

fn parse_delta(j: &mut Jiter<'_>, c: &mut Choice) -> JiterResult<()> {
    *c = Choice {
        finish_reason: c.finish_reason.take(),
        ..Choice::default()
    };
    let peek = j.peek()?;
    if peek != Peek::Object {
        return j.known_skip(peek);
    }
    for_keys!(j, key => {
        match key {
            "content" => (c.content, c.spans[0]) = split(opt_string_span(j)?),
            "reasoning_content" => {
                (c.reasoning_content, c.spans[1]) = split(opt_string_span(j)?);
            }
            "reasoning" => (c.reasoning, c.spans[2]) = split(opt_string_span(j)?),
            "tool_calls" => {
                c.tool_calls.clear();
                each_object(j, |j| {
                    c.tool_calls.push(parse_fragment(j)?);
                    Ok(())
                })?;
            }
            _ => j.next_skip()?,
        }
    });
    Ok(())
}

fn parse_choice(j: &mut Jiter<'_>) -> JiterResult<Option<(i64, Choice)>> {
    let mut c = Choice::default();
    let mut index = Some(0);
    for_keys!(j, key => {
        match key {
            "index" => index = opt_int(j)?.filter(|i| *i >= 0),
            "delta" => parse_delta(j, &mut c)?,
            "finish_reason" => c.finish_reason = opt_string(j)?,
            _ => j.next_skip()?,
        }
    });
    Ok(index.map(|i| (i, c)))
}

/// Parse one chunk; `want_id_model` is false once both are known (their values are then skipped).
pub(super) fn parse_chunk(data: &[u8], want_id_model: bool) -> JiterResult<Option<Chunk>> {
    let mut j = Jiter::new(data);
    let mut c = Chunk::default();
    let peek = j.peek()?;
    if peek != Peek::Object {
        j.known_skip(peek)?;
        j.finish()?;
        return Ok(None);
    }
    for_keys!(j, key => {
        match key {
            "id" if want_id_model => c.id = opt_string(&mut j)?,
            "model" if want_id_model => c.model = opt_string(&mut j)?,
            "usage" => {
                let p = j.peek()?;
                let start = j.current_index();
                j.known_skip(p)?;
                c.usage = (p == Peek::Object).then(|| start..j.current_index());
            }
            "error" => c.error = not_null(&mut j)?,
            "choices" => {
                c.choices.clear();
                each_object(&mut j, |j| {
                    if let Some(choice) = parse_choice(j)? {
                        c.choices.push(choice);
                    }
                    Ok(())
                })?;
            }
            _ => j.next_skip()?,
        }
    });
    j.finish()?;
    Ok(Some(c))
}
