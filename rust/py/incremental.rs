//! Incremental partial parsing of one tool call's argument text, for
//! `StreamAggregator.partial_arguments`.
//!
//! The argument text of a streamed tool call only grows, and a caller asks for its partial value
//! after every fragment. Re-parsing the whole text each time costs O(n) per ask (O(n^2) over a
//! stream). [`Incremental`] keeps a [`Scanner`] per tool call, which scans each byte once, and
//! builds Python values from what it reports ([`Values`]):
//!
//! - a stack of the open containers, each holding the Python objects of its completed members
//!   (an object also holds the key of the member in progress), each member converted once with
//!   the same strict jiter parser as `parse_arguments`;
//! - the string value in progress as a Python `str`, extended by each newly arrived piece (the
//!   piece alone is decoded), so an ask never decodes a byte twice.
//!
//! Each ask then materialises only the open path: one new container per open level (its
//! completed members are shared, not rebuilt: a `dict` copy or a `list` slice) plus the value of
//! the member in progress. Results are fresh objects, so building the open path is the one cost
//! that grows with the text per ask: one copy of the string in progress, one copy of the
//! references of each open container. The result equals `parse_arguments(text, mode='partial')`
//! for every prefix; whatever the scanner does not handle itself (invalid text, a top level that
//! is not an object, nesting deeper than the limit, a scalar that jiter rejects, text that is not
//! an extension of the text seen before) takes the one-shot path, so errors are the one-shot ones.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use super::json::{loads, parse_mode, Mode};
use crate::errors::CoreError;
use crate::json::incremental::{Builder, Progress, Scanner, Tail, Unhandled};
use crate::json::EXCERPT_RADIUS;

struct Frame {
    is_object: bool,
    /// The completed members, in a container of our own (a `dict` or a `list`): copied, never
    /// handed out, while the container is open; the value itself once it is closed.
    items: Py<PyAny>,
    /// Key of the object member in progress.
    key: Option<Py<PyAny>>,
}

/// The Python values of the text scanned so far.
#[derive(Default)]
struct Values {
    stack: Vec<Frame>,
    /// The top-level object, once closed.
    done: Option<Py<PyDict>>,
    /// The string value in progress, decoded so far (`None`: no content yet).
    string: Option<Py<PyString>>,
    /// Buffer for quoting a string piece before decoding it.
    scratch: Vec<u8>,
}

/// [`Values`] receiving the scanner's reports, with the GIL held.
struct Session<'a, 'py> {
    py: Python<'py>,
    values: &'a mut Values,
}

impl Session<'_, '_> {
    fn decode(&self, raw: &[u8]) -> Result<Py<PyAny>, Unhandled> {
        loads(self.py, raw)
            .map(Bound::unbind)
            .map_err(|_| Unhandled)
    }

    /// Add a completed value to the innermost container (or finish the top level).
    fn add(&mut self, value: Py<PyAny>) -> Result<(), Unhandled> {
        let py = self.py;
        let frame = self.values.stack.last_mut().ok_or(Unhandled)?;
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
        added.map_err(|_| Unhandled)
    }
}

impl Builder for Session<'_, '_> {
    fn open(&mut self, object: bool) -> Result<(), Unhandled> {
        let items = if object {
            PyDict::new(self.py).into_any().unbind()
        } else {
            PyList::empty(self.py).into_any().unbind()
        };
        self.values.stack.push(Frame {
            is_object: object,
            items,
            key: None,
        });
        Ok(())
    }

    fn close(&mut self) -> Result<(), Unhandled> {
        let frame = self.values.stack.pop().ok_or(Unhandled)?;
        if self.values.stack.is_empty() {
            let done = frame.items.into_bound(self.py).cast_into::<PyDict>();
            self.values.done = Some(done.map_err(|_| Unhandled)?.unbind());
            Ok(())
        } else {
            self.add(frame.items)
        }
    }

    fn key(&mut self, raw: &str) -> Result<(), Unhandled> {
        let key = self.decode(raw.as_bytes())?;
        self.values.stack.last_mut().ok_or(Unhandled)?.key = Some(key);
        Ok(())
    }

    fn scalar(&mut self, raw: &str) -> Result<(), Unhandled> {
        let value = self.decode(raw.as_bytes())?;
        self.add(value)
    }

    fn string_piece(&mut self, raw: &str) -> Result<(), Unhandled> {
        let mut quoted = std::mem::take(&mut self.values.scratch);
        quoted.clear();
        quoted.push(b'"');
        quoted.extend_from_slice(raw.as_bytes());
        quoted.push(b'"');
        let piece = self.decode(&quoted);
        self.values.scratch = quoted;
        let piece = piece?.into_bound(self.py);
        let joined = match self.values.string.take() {
            Some(s) => s.into_bound(self.py).add(piece).map_err(|_| Unhandled)?,
            None => piece,
        };
        self.values.string = Some(
            joined
                .cast_into::<PyString>()
                .map_err(|_| Unhandled)?
                .unbind(),
        );
        Ok(())
    }

    fn string_end(&mut self) -> Result<(), Unhandled> {
        let value = match self.values.string.take() {
            Some(s) => s.into_any(),
            None => PyString::new(self.py, "").into_any().unbind(),
        };
        self.add(value)
    }
}

impl Values {
    /// The value of the text so far: the open path rebuilt around the member in progress.
    fn materialize<'py>(
        &self,
        py: Python<'py>,
        progress: &Progress<'_>,
    ) -> Result<Bound<'py, PyDict>, Unhandled> {
        let tail = match progress {
            Progress::Blank => return Ok(PyDict::new(py)),
            Progress::Done => {
                let done = self.done.as_ref().ok_or(Unhandled)?;
                return done.bind(py).copy().map_err(|_| Unhandled);
            }
            Progress::Open(tail) => tail,
        };
        let mut child: Option<Bound<'py, PyAny>> = match tail {
            Tail::Nothing => None,
            Tail::Str => Some(match &self.string {
                Some(s) => s.bind(py).clone().into_any(),
                None => PyString::new(py, "").into_any(),
            }),
            Tail::Num(number) => Some(loads(py, number.as_bytes()).map_err(|_| Unhandled)?),
        };
        for frame in self.stack.iter().rev() {
            child = Some(build(py, frame, child).map_err(|_| Unhandled)?);
        }
        child
            .ok_or(Unhandled)?
            .cast_into::<PyDict>()
            .map_err(|_| Unhandled)
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

/// The resumable partial parser of one tool call (see the module docs).
#[derive(Default)]
pub(crate) struct Incremental {
    scanner: Scanner,
    values: Values,
    /// The text is not handled incrementally (invalid, too deep, not an object): one-shot path.
    unhandled: bool,
    /// The one-shot error, once no extension of the text can change it ([`is_final`]).
    error: Option<CoreError>,
    /// The last result, with the length and last bytes of the text it was for: asking again
    /// before more text arrived returns the same object.
    last: Option<(usize, Vec<u8>, Py<PyDict>)>,
}

/// Bytes at the end of the text remembered with the last result.
const LAST_TAIL: usize = 16;

impl Incremental {
    /// `parse_arguments(text, mode='partial', max_depth=max_depth)`, scanning only what was
    /// added since the last call.
    pub(crate) fn parse<'py>(
        &mut self,
        py: Python<'py>,
        text: &str,
        max_depth: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let t = text.as_bytes();
        let tail = &t[t.len().saturating_sub(LAST_TAIL)..];
        if let Some((len, end, d)) = &self.last {
            if *len == t.len() && end[..] == tail[..] {
                return Ok(d.bind(py).clone());
            }
        }
        let d = self.parse_new(py, text, max_depth)?;
        self.last = Some((t.len(), tail.to_vec(), d.clone().unbind()));
        Ok(d)
    }

    fn parse_new<'py>(
        &mut self,
        py: Python<'py>,
        text: &str,
        max_depth: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        if !self.scanner.extends(text) {
            *self = Self::default();
        }
        if let Some(e) = &self.error {
            return Err(e.clone().into());
        }
        if !self.unhandled {
            let mut session = Session {
                py,
                values: &mut self.values,
            };
            let value = self
                .scanner
                .advance(text, max_depth, &mut session)
                .and_then(|progress| self.values.materialize(py, &progress));
            match value {
                Ok(d) => return Ok(d),
                Err(Unhandled) => self.unhandled = true,
            }
        }
        parse_mode(py, text, Mode::Partial, max_depth).map_err(|e| {
            if self.scanner.opened() && is_final(&e, text) {
                self.error = Some(e.clone());
            }
            e.into()
        })
    }
}

/// Whether every extension of `text` has the same one-shot error `e`, given that the text opened
/// its top-level object (so the scanner left it to the one-shot parser for a reason found in
/// complete tokens: a syntax error, a scalar jiter rejects, a lone surrogate, nesting too deep,
/// text after the object), so asking again after more text need not parse it again (an invalid
/// text grows by whatever the model still sends).
///
/// The strict scanner reports the first error in text order, found in those same complete
/// tokens, and the message quotes [`EXCERPT_RADIUS`] characters after the position: the error is
/// final once more than that many characters follow it. (Before the top-level `{`, an error can
/// still depend on the end of the text: `"abc` is an unterminated string, `"abc"` not an object.)
fn is_final(e: &CoreError, text: &str) -> bool {
    let CoreError::InvalidArguments { position, .. } = e else {
        return false;
    };
    text.chars().skip(*position).nth(EXCERPT_RADIUS).is_some()
}
