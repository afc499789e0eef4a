//! Incremental partial parsing of one tool call's argument text, for
//! `StreamAggregator.partial_arguments`.
//!
//! The argument text of a streamed tool call only grows, and a caller asks for its partial value
//! after every fragment. Re-parsing the whole text each time costs O(n) per ask (O(n^2) over a
//! stream). [`Incremental`] instead keeps a resumable parser state per tool call:
//!
//! - a stack of the open containers, each holding the Python objects of its completed members
//!   (an object also holds the key of the member in progress, once its `:` was read);
//! - the committed scan position: the end of the last complete token (a key with its colon, a
//!   complete scalar, a comma, a bracket), and what the grammar expects there.
//!
//! Each ask scans only the bytes after the committed position, converting each completed scalar
//! once (with the same strict jiter parser as `parse_arguments`). It then re-materialises only the
//! open path: one new container per open level (its completed members are shared, not rebuilt)
//! plus the value of the unfinished trailing token, closed by the rules of
//! [`crate::json::partial::complete_partial`] (an unfinished string is closed, an unfinished number
//! is trimmed, an unfinished key or literal is dropped). The result equals
//! `parse_arguments(text, mode='partial')` for every prefix; whatever this scanner does not handle
//! itself (invalid text, a top level that is not an object, nesting deeper than
//! [`MAX_INCREMENTAL_DEPTH`], a scalar that jiter rejects, text that is not an extension of the
//! text seen before) takes the one-shot path, so errors are the one-shot ones too.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList};

use super::json::{loads, parse_mode, Mode};
use crate::json::partial::{is_number_byte, partial_string, string_end, ws};

/// Deeper nesting takes the one-shot path (well below the strict parser's limit of 200).
const MAX_INCREMENTAL_DEPTH: usize = 64;

/// Bytes before the committed position remembered to check that the text only grew.
const FINGERPRINT: usize = 16;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Before the top-level `{`.
    Start,
    /// After `{`: a key or `}`.
    KeyOrClose,
    /// After `,` in an object: a key.
    Key,
    /// After `[`: a value or `]`.
    ValueOrClose,
    /// After `:` or `,` in an array: a value.
    Value,
    /// After a complete value: `,` or the closer.
    After,
    /// The top-level object is closed.
    Done,
}

/// The unfinished token at the end of the text.
enum Tail {
    /// Nothing kept (no token, or one that partial mode drops).
    Nothing,
    /// An unterminated string value starting at this byte.
    Str(usize),
    /// A number running to the end of the text, starting at this byte.
    Num(usize),
}

struct Frame {
    is_object: bool,
    /// The completed members, in a container of our own (a `dict` or a `list`): copied, never
    /// handed out, while the container is open; the value itself once it is closed.
    items: Py<PyAny>,
    /// Key of the object member in progress (after its `:`).
    key: Option<Py<PyAny>>,
}

/// Text the incremental scanner leaves to the one-shot parser.
struct Unhandled;

/// The resumable partial parser of one tool call (see the module docs).
pub(crate) struct Incremental {
    pos: usize,
    expect: Expect,
    stack: Vec<Frame>,
    done: Option<Py<PyDict>>,
    fingerprint: Vec<u8>,
    /// The text is not handled incrementally (invalid, too deep, not an object): one-shot path.
    unhandled: bool,
    /// The last result, with the length and last bytes of the text it was for: asking again
    /// before more text arrived returns the same object.
    last: Option<(usize, Vec<u8>, Py<PyDict>)>,
    /// The caller's nesting limit.
    max_depth: usize,
}

impl Default for Incremental {
    fn default() -> Self {
        Self {
            pos: 0,
            expect: Expect::Start,
            stack: Vec::new(),
            done: None,
            fingerprint: Vec::new(),
            unhandled: false,
            last: None,
            max_depth: crate::json::MAX_DEPTH,
        }
    }
}

impl Incremental {
    /// `parse_arguments(text, mode='partial')`, scanning only what was added since the last call.
    ///
    /// Values may nest `max_depth` levels deep (the one-shot path checks it: containers are
    /// opened incrementally only while their members stay within the limit).
    pub(crate) fn parse<'py>(
        &mut self,
        py: Python<'py>,
        text: &str,
        max_depth: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.max_depth = max_depth;
        let t = text.as_bytes();
        let tail = &t[t.len().saturating_sub(FINGERPRINT)..];
        if let Some((len, end, d)) = &self.last {
            if *len == t.len() && end[..] == tail[..] {
                return Ok(d.bind(py).clone());
            }
        }
        let d = self.parse_new(py, text)?;
        self.last = Some((t.len(), tail.to_vec(), d.clone().unbind()));
        Ok(d)
    }

    fn parse_new<'py>(&mut self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
        if !self.extends(text) {
            *self = Self {
                max_depth: self.max_depth,
                ..Self::default()
            };
        }
        if !self.unhandled {
            match self.advance(py, text) {
                Ok(Some(d)) => return Ok(d),
                Ok(None) => {}
                Err(Unhandled) => self.unhandled = true,
            }
        }
        parse_mode(py, text, Mode::Partial, self.max_depth)
    }

    /// True when `text` starts with the text committed so far (checked on its last bytes: the
    /// aggregator only ever appends to a call's arguments).
    fn extends(&self, text: &str) -> bool {
        let t = text.as_bytes();
        self.pos <= t.len()
            && text.is_char_boundary(self.pos)
            && t[self.pos - self.fingerprint.len()..self.pos] == self.fingerprint[..]
    }

    fn commit(&mut self, t: &[u8], pos: usize) {
        self.pos = pos;
        self.fingerprint.clear();
        self.fingerprint
            .extend_from_slice(&t[pos.saturating_sub(FINGERPRINT)..pos]);
    }

    /// Add a completed value to the innermost container (or finish the top level).
    fn add(&mut self, py: Python<'_>, value: Py<PyAny>) -> Result<(), Unhandled> {
        let frame = self.stack.last_mut().ok_or(Unhandled)?;
        let items = frame.items.bind(py);
        let added = if frame.is_object {
            let key = frame.key.take().ok_or(Unhandled)?;
            items
                .cast::<PyDict>()
                .map_err(|_| Unhandled)?
                .set_item(key, value)
        } else {
            items.cast::<PyList>().map_err(|_| Unhandled)?.append(value)
        };
        added.map_err(|_| Unhandled)?;
        self.expect = Expect::After;
        Ok(())
    }

    fn scalar(py: Python<'_>, text: &[u8]) -> Result<Py<PyAny>, Unhandled> {
        loads(py, text).map(Bound::unbind).map_err(|_| Unhandled)
    }

    /// Scan from the committed position; `Ok(None)` asks for the one-shot path this time only.
    #[allow(clippy::too_many_lines)]
    fn advance<'py>(
        &mut self,
        py: Python<'py>,
        text: &str,
    ) -> Result<Option<Bound<'py, PyDict>>, Unhandled> {
        let t = text.as_bytes();
        let n = t.len();
        let mut tail = Tail::Nothing;
        loop {
            let i = ws(t, self.pos);
            if i >= n {
                break;
            }
            let c = t[i];
            match self.expect {
                Expect::Done => return Err(Unhandled),
                Expect::Start => {
                    if c != b'{' {
                        return Err(Unhandled);
                    }
                    self.open(py, true)?;
                    self.commit(t, i + 1);
                }
                Expect::KeyOrClose | Expect::Key => {
                    if c == b'}' && self.expect == Expect::KeyOrClose {
                        self.close(py)?;
                        self.commit(t, i + 1);
                        continue;
                    }
                    if c != b'"' {
                        return Err(Unhandled);
                    }
                    let Some(end) = string_end(t, i).map_err(|_| Unhandled)? else {
                        break;
                    };
                    let colon = ws(t, end);
                    if colon >= n {
                        break;
                    }
                    if t[colon] != b':' {
                        return Err(Unhandled);
                    }
                    let key = Self::scalar(py, &t[i..end])?;
                    if let Some(frame) = self.stack.last_mut() {
                        frame.key = Some(key);
                    }
                    self.expect = Expect::Value;
                    self.commit(t, colon + 1);
                }
                Expect::ValueOrClose | Expect::Value => {
                    if c == b']' && self.expect == Expect::ValueOrClose {
                        self.close(py)?;
                        self.commit(t, i + 1);
                        continue;
                    }
                    match c {
                        b'{' | b'[' => {
                            self.open(py, c == b'{')?;
                            self.commit(t, i + 1);
                        }
                        b'"' => {
                            let Some(end) = string_end(t, i).map_err(|_| Unhandled)? else {
                                tail = Tail::Str(i);
                                break;
                            };
                            let v = Self::scalar(py, &t[i..end])?;
                            self.add(py, v)?;
                            self.commit(t, end);
                        }
                        b'-' | b'0'..=b'9' => {
                            let mut j = i;
                            while j < n && is_number_byte(t[j]) {
                                j += 1;
                            }
                            if j >= n {
                                tail = Tail::Num(i);
                                break;
                            }
                            let v = Self::scalar(py, &t[i..j])?;
                            self.add(py, v)?;
                            self.commit(t, j);
                        }
                        b't' | b'f' | b'n' => {
                            let (word, v): (&[u8], Py<PyAny>) = match c {
                                b't' => (
                                    b"true",
                                    PyBool::new(py, true).to_owned().into_any().unbind(),
                                ),
                                b'f' => (
                                    b"false",
                                    PyBool::new(py, false).to_owned().into_any().unbind(),
                                ),
                                _ => (b"null", py.None()),
                            };
                            if t[i..].starts_with(word) {
                                self.add(py, v)?;
                                self.commit(t, i + word.len());
                            } else if word.starts_with(&t[i..]) {
                                break;
                            } else {
                                return Err(Unhandled);
                            }
                        }
                        _ => return Err(Unhandled),
                    }
                }
                Expect::After => {
                    let frame = self.stack.last().ok_or(Unhandled)?;
                    let closer = if frame.is_object { b'}' } else { b']' };
                    if c == b',' {
                        self.expect = if frame.is_object {
                            Expect::Key
                        } else {
                            Expect::Value
                        };
                        self.commit(t, i + 1);
                    } else if c == closer {
                        self.close(py)?;
                        self.commit(t, i + 1);
                    } else {
                        return Err(Unhandled);
                    }
                }
            }
        }
        self.materialize(py, text, &tail)
    }

    fn open(&mut self, py: Python<'_>, is_object: bool) -> Result<(), Unhandled> {
        if self.stack.len() >= MAX_INCREMENTAL_DEPTH.min(self.max_depth) {
            return Err(Unhandled);
        }
        let items = if is_object {
            PyDict::new(py).into_any().unbind()
        } else {
            PyList::empty(py).into_any().unbind()
        };
        self.stack.push(Frame {
            is_object,
            items,
            key: None,
        });
        self.expect = if is_object {
            Expect::KeyOrClose
        } else {
            Expect::ValueOrClose
        };
        Ok(())
    }

    fn close(&mut self, py: Python<'_>) -> Result<(), Unhandled> {
        let frame = self.stack.pop().ok_or(Unhandled)?;
        let value = frame.items.into_bound(py);
        if self.stack.is_empty() {
            self.done = Some(value.cast_into::<PyDict>().map_err(|_| Unhandled)?.unbind());
            self.expect = Expect::Done;
            Ok(())
        } else {
            self.add(py, value.unbind())
        }
    }

    /// The value of the text so far: the open path rebuilt around the unfinished tail.
    fn materialize<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        tail: &Tail,
    ) -> Result<Option<Bound<'py, PyDict>>, Unhandled> {
        if let Some(done) = &self.done {
            return done.bind(py).copy().map(Some).map_err(|_| Unhandled);
        }
        if self.stack.is_empty() {
            return Ok(None); // blank text so far: the one-shot path returns `{}`
        }
        let mut child: Option<Bound<'py, PyAny>> = match *tail {
            Tail::Nothing => None,
            Tail::Str(start) => match loads(py, partial_string(text, start).as_bytes()) {
                Ok(v) => Some(v),
                Err(_) => return Ok(None),
            },
            Tail::Num(start) => {
                let number = text[start..].trim_end_matches(['+', '-', '.', 'e', 'E']);
                if number.is_empty() {
                    None
                } else {
                    match loads(py, number.as_bytes()) {
                        Ok(v) => Some(v),
                        Err(_) => return Ok(None),
                    }
                }
            }
        };
        for frame in self.stack.iter().rev() {
            child = Some(build(py, frame, child).map_err(|_| Unhandled)?);
        }
        match child.map(Bound::cast_into::<PyDict>) {
            Some(Ok(d)) => Ok(Some(d)),
            _ => Ok(None),
        }
    }
}

/// A copy of `frame`'s completed members, plus `last` (the member in progress) if any.
fn build<'py>(
    py: Python<'py>,
    frame: &Frame,
    last: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let items = frame.items.bind(py);
    if frame.is_object {
        let d = items.cast::<PyDict>()?.copy()?;
        if let (Some(k), Some(v)) = (&frame.key, last) {
            d.set_item(k, v)?;
        }
        Ok(d.into_any())
    } else {
        let l = items.cast::<PyList>()?;
        let l = l.get_slice(0, l.len());
        if let Some(v) = last {
            l.append(v)?;
        }
        Ok(l.into_any())
    }
}
