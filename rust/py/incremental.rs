//! The live Python value of a growing tool-call argument text: `PartialArguments` and
//! `StreamAggregator.partial_arguments`. The paths (live scan, one-shot fallback, final errors)
//! are [`crate::incremental`]'s; this module builds the Python value from the scanner's reports:
//!
//! - the top-level `dict` and every container below it are created once, when their opening
//!   bracket arrives, inserted into their parent at once, and then updated in place: each
//!   completed member is converted once (with the same strict jiter parser as `parse_arguments`)
//!   and set or appended;
//! - the member still being written (a string or a number) is in its container too and is
//!   replaced by its longer version at each fragment. The open string grows in place when nothing
//!   but the parser holds it ([`GROWER`]: CPython's `s += t` fast path), so a fragment costs its
//!   own length, not the string's;
//! - a key, literal or number that partial mode drops is simply not set yet.
//!
//! `StreamAggregator.partial_arguments` without `live=True` returns a snapshot instead: the
//! containers of the open path copied (references to their members), the rest shared.

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use pyo3::sync::PyOnceLock;

use super::json::{loads, max_depth_arg, parse_mode, Mode};
use crate::errors::CoreError;
use crate::incremental::{Answer, Incremental, LiveValue, Remembered};
use crate::json::incremental::{Builder, Progress, Tail, Unhandled};
use crate::json::lone_surrogate;

/// One open container of the live value.
struct Frame {
    /// The live `dict` or `list`, already a member of its parent (or the top-level object).
    container: Py<PyAny>,
    is_object: bool,
    /// Key of the object member in progress (from its key until the member completes).
    key: Option<Py<PyAny>>,
    /// The member in progress is in the container: an open container, or the string or number
    /// still being written.
    present: bool,
}

impl Frame {
    /// Put `value` in the place of the member in progress (added if it is not there yet).
    fn set(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let c = self.container.bind(py);
        if self.is_object {
            let key = self
                .key
                .as_ref()
                .ok_or_else(|| PyTypeError::new_err("no key"))?;
            c.cast::<PyDict>()?.set_item(key, value)?;
        } else {
            let l = c.cast::<PyList>()?;
            if self.present {
                l.set_item(l.len().saturating_sub(1), value)?;
            } else {
                l.append(value)?;
            }
        }
        self.present = true;
        Ok(())
    }

    /// The member in progress is complete.
    fn complete(&mut self) {
        self.key = None;
        self.present = false;
    }
}

/// The live Python value of the text scanned so far.
#[derive(Default)]
struct Values {
    /// The top-level object (created by the first ask, even on blank text).
    root: Option<Py<PyDict>>,
    /// The open containers, outermost first (`[0]` is the top-level object while it is open).
    stack: Vec<Frame>,
    /// The string value in progress, decoded so far (`None`: no content yet).
    string: Option<Py<PyString>>,
    /// Buffer for quoting a string piece before decoding it.
    scratch: Vec<u8>,
    /// `send` of the generator growing the string in progress, from its second piece on.
    send: Option<Py<PyAny>>,
}

/// [`Values`] receiving the scanner's reports, with the GIL held.
struct Session<'a, 'py> {
    py: Python<'py>,
    values: &'a mut Values,
}

fn unhandled(_: PyErr) -> Unhandled {
    Unhandled
}

/// The value of a complete JSON scalar, key or quoted string piece `raw` (syntax checked by the
/// scanner): short cuts for a string without escapes and a small integer (no leading zero),
/// jiter for the rest (it rejects what `parse_arguments` rejects).
fn decode<'py>(py: Python<'py>, raw: &str) -> Result<Bound<'py, PyAny>, Unhandled> {
    let b = raw.as_bytes();
    if b.len() >= 2 && b[0] == b'"' && !b.contains(&b'\\') {
        return Ok(PyString::new(py, &raw[1..raw.len() - 1]).into_any());
    }
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    if (1..=18).contains(&digits.len())
        && digits.iter().all(u8::is_ascii_digit)
        && (digits[0] != b'0' || digits.len() == 1)
    {
        if let Ok(n) = raw.parse::<i64>() {
            return n
                .into_pyobject(py)
                .map(Bound::into_any)
                .map_err(|_| Unhandled);
        }
    }
    loads(py, b).map_err(|_| Unhandled)
}

impl<'py> Session<'_, 'py> {
    fn top(&mut self) -> Result<&mut Frame, Unhandled> {
        self.values.stack.last_mut().ok_or(Unhandled)
    }

    /// The member in progress of the innermost container is complete with `value`.
    fn add(&mut self, value: &Bound<'py, PyAny>) -> Result<(), Unhandled> {
        let py = self.py;
        let frame = self.top()?;
        frame.set(py, value).map_err(unhandled)?;
        frame.complete();
        Ok(())
    }
}

/// The string in progress grown by `s += piece` in a Python generator, whose local `s` is the
/// string's only holder between pieces (see [`Builder::string_piece`]): CPython then resizes it
/// in place (its fast path for a `str` held by one local variable, `BINARY_OP_INPLACE_ADD_UNICODE`,
/// `unicode_concatenate` before 3.11), so a piece costs its own length, not the string's. Where
/// the fast path does not apply (a string held elsewhere, as by a snapshot; a tracer) it is a plain
/// concatenation: the same value, a copy. Started with the string's first two pieces; each `send`
/// adds one and returns the string so far.
const GROWER: &std::ffi::CStr =
    c"def grower(s, piece):\n    while True:\n        s += piece\n        piece = yield s\n";

/// Strings shorter than this many characters grow by a plain copy (bounded, so still linear).
const GROW_IN_PLACE_FROM: usize = 2048;

static GROWER_FN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn grower(py: Python<'_>) -> PyResult<&Py<PyAny>> {
    GROWER_FN.get_or_try_init(py, || {
        let globals = PyDict::new(py);
        py.run(GROWER, Some(&globals), None)?;
        Ok(globals
            .get_item("grower")?
            .ok_or_else(|| PyTypeError::new_err("grower"))?
            .unbind())
    })
}

impl Values {
    /// `s + piece`, in place when nothing else holds `s` (see [`GROWER`]).
    fn append<'py>(
        &mut self,
        s: Py<PyString>,
        piece: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = piece.py();
        if let Some(send) = &self.send {
            drop(s); // the generator's local is now the string's only holder
            return send.bind(py).call1((piece,));
        }
        let s = s.into_bound(py);
        if s.len()? < GROW_IN_PLACE_FROM {
            return s.add(piece); // a short copy costs less than starting a generator
        }
        let generator = grower(py)?.bind(py).call1((s, piece))?;
        let joined = generator.call_method0(intern!(py, "__next__"))?;
        self.send = Some(generator.getattr(intern!(py, "send"))?.unbind());
        Ok(joined)
    }
}

impl Builder for Session<'_, '_> {
    fn open(&mut self, object: bool) -> Result<(), Unhandled> {
        let py = self.py;
        let container = if self.values.stack.is_empty() {
            if !object {
                return Err(Unhandled);
            }
            let root = self
                .values
                .root
                .get_or_insert_with(|| PyDict::new(py).unbind());
            root.clone_ref(py).into_any()
        } else {
            let c = if object {
                PyDict::new(py).into_any()
            } else {
                PyList::empty(py).into_any()
            };
            self.top()?.set(py, &c).map_err(unhandled)?;
            c.unbind()
        };
        self.values.stack.push(Frame {
            container,
            is_object: object,
            key: None,
            present: false,
        });
        Ok(())
    }

    fn close(&mut self) -> Result<(), Unhandled> {
        self.values.stack.pop().ok_or(Unhandled)?;
        if let Some(parent) = self.values.stack.last_mut() {
            parent.complete();
        }
        Ok(())
    }

    fn key(&mut self, raw: &str) -> Result<(), Unhandled> {
        let key = decode(self.py, raw)?.unbind();
        self.top()?.key = Some(key);
        Ok(())
    }

    fn scalar(&mut self, raw: &str) -> Result<(), Unhandled> {
        let value = decode(self.py, raw)?;
        self.add(&value)
    }

    fn string_piece(&mut self, raw: &str) -> Result<(), Unhandled> {
        let py = self.py;
        let piece = if raw.contains('\\') {
            let mut quoted = std::mem::take(&mut self.values.scratch);
            quoted.clear();
            quoted.push(b'"');
            quoted.extend_from_slice(raw.as_bytes());
            quoted.push(b'"');
            let piece = loads(py, &quoted).map_err(|_| Unhandled);
            self.values.scratch = quoted;
            piece?
        } else {
            PyString::new(py, raw).into_any()
        };
        let joined = match self.values.string.take() {
            Some(s) => {
                let frame = self.top()?;
                if frame.present {
                    // Let go of the container's reference, so the string can grow in place.
                    frame
                        .set(py, &py.None().into_bound(py))
                        .map_err(unhandled)?;
                }
                self.values.append(s, &piece).map_err(unhandled)?
            }
            None => piece,
        };
        let joined = joined.cast_into::<PyString>().map_err(|_| Unhandled)?;
        self.values.string = Some(joined.unbind());
        Ok(())
    }

    fn string_end(&mut self) -> Result<(), Unhandled> {
        self.values.send = None;
        let value = match self.values.string.take() {
            Some(s) => s.into_bound(self.py).into_any(),
            None => PyString::new(self.py, "").into_any(),
        };
        self.add(&value)
    }
}

impl Values {
    /// Put the member in progress (`tail`) in place and return the live top-level object.
    fn settle<'py>(
        &mut self,
        py: Python<'py>,
        progress: &Progress<'_>,
    ) -> Result<Bound<'py, PyDict>, Unhandled> {
        if let Progress::Open(tail) = progress {
            let value = match tail {
                Tail::Nothing => None,
                Tail::Str => Some(match &self.string {
                    Some(s) => s.bind(py).clone().into_any(),
                    None => PyString::new(py, "").into_any(),
                }),
                Tail::Num(number) => Some(decode(py, number)?),
            };
            if let Some(value) = value {
                let frame = self.stack.last_mut().ok_or(Unhandled)?;
                frame.set(py, &value).map_err(unhandled)?;
            }
        }
        let root = self.root.get_or_insert_with(|| PyDict::new(py).unbind());
        Ok(root.bind(py).clone())
    }

    /// A copy of the live value that later text never changes: the containers of the open path
    /// are copied (references to their members), everything else is shared (closed containers
    /// and complete scalars are never changed; the open string is replaced, not changed, while
    /// anything else holds it).
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut child: Option<Bound<'py, PyAny>> = None;
        for frame in self.stack.iter().rev() {
            let c = frame.container.bind(py);
            let copy = if frame.is_object {
                c.cast::<PyDict>()?.copy()?.into_any()
            } else {
                let l = c.cast::<PyList>()?;
                l.get_slice(0, l.len()).into_any()
            };
            if let Some(child) = child {
                // The open child is the member in progress: at its key, or last.
                match &frame.key {
                    Some(key) if frame.is_object => copy.cast::<PyDict>()?.set_item(key, child)?,
                    _ => {
                        let l = copy.cast::<PyList>()?;
                        l.set_item(l.len().saturating_sub(1), child)?;
                    }
                }
            }
            child = Some(copy);
        }
        match child {
            Some(c) => Ok(c.cast_into::<PyDict>()?),
            None => match &self.root {
                Some(root) => root.bind(py).copy(),
                None => Ok(PyDict::new(py)),
            },
        }
    }
}

impl<'py> LiveValue for Session<'_, 'py> {
    type Object = Bound<'py, PyDict>;

    fn settle(&mut self, progress: &Progress<'_>) -> Result<Bound<'py, PyDict>, Unhandled> {
        self.values.settle(self.py, progress)
    }

    fn reset(&mut self) {
        *self.values = Values::default();
    }
}

/// The partial parser of one growing argument text with its live Python value (see the module
/// docs).
#[derive(Default)]
pub(crate) struct LiveArguments {
    paths: Incremental,
    values: Values,
    /// The last snapshot: asking again before more text arrived returns the same object.
    last: Option<Remembered<Py<PyDict>>>,
}

impl LiveArguments {
    fn advance<'py>(
        &mut self,
        py: Python<'py>,
        text: &str,
        max_depth: usize,
    ) -> Result<Answer<Bound<'py, PyDict>>, CoreError> {
        let mut session = Session {
            py,
            values: &mut self.values,
        };
        self.paths
            .advance(text, max_depth, &mut session, |text, max_depth| {
                parse_mode(py, text, Mode::Partial, max_depth)
            })
    }

    /// `parse_arguments(text, mode='partial', max_depth=max_depth)` as the live value (a new one
    /// once the one-shot path took over), scanning only what was added since the last call.
    pub(crate) fn live<'py>(
        &mut self,
        py: Python<'py>,
        text: &str,
        max_depth: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        Ok(self.advance(py, text, max_depth)?.into_inner())
    }

    /// The same value as [`Self::live`], as a snapshot that later text never changes.
    pub(crate) fn parse<'py>(
        &mut self,
        py: Python<'py>,
        text: &str,
        max_depth: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        if let Some(d) = self.last.as_ref().and_then(|last| last.recall(text)) {
            return Ok(d.bind(py).clone());
        }
        let d = match self.advance(py, text, max_depth)? {
            Answer::Live(_) => self.values.snapshot(py)?,
            Answer::Fresh(d) => d,
        };
        self.last = Some(Remembered::new(text, d.clone().unbind()));
        Ok(d)
    }
}

/// Incremental partial parser of one growing argument text, with a live value.
#[pyclass(module = "toolweave._core", name = "PartialArguments")]
pub struct PartialArguments {
    max_depth: usize,
    /// All text fed (a lone surrogate as U+FFFD characters, as `parse_arguments` reports it).
    text: String,
    parser: LiveArguments,
    value: Option<Py<PyDict>>,
    /// Byte position in `text` of the first lone surrogate fed, and all text fed as given.
    surrogate: Option<(usize, Py<PyString>)>,
}

impl PartialArguments {
    /// Add `s` once the text holds a lone surrogate (or `s` does): `text` gets it decoded
    /// lossily (each surrogate as U+FFFD characters, as `parse_arguments` reports it).
    fn push_with_surrogates(&mut self, s: &Bound<'_, PyString>) -> PyResult<()> {
        let py = s.py();
        let raw = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
        let raw = raw.cast::<PyBytes>()?.as_bytes();
        let given = match self.surrogate.take() {
            Some((at, given)) => (at, given.into_bound(py)),
            None => {
                let at = std::str::from_utf8(raw)
                    .err()
                    .map_or(raw.len(), |e| e.valid_up_to());
                (self.text.len() + at, PyString::new(py, &self.text))
            }
        };
        let all = given.1.add(s)?.cast_into::<PyString>()?;
        self.surrogate = Some((given.0, all.unbind()));
        self.text.push_str(&String::from_utf8_lossy(raw));
        Ok(())
    }
}

#[pymethods]
impl PartialArguments {
    #[new]
    #[pyo3(signature = (max_depth = None), text_signature = "(max_depth=200)")]
    fn new(max_depth: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(Self {
            max_depth: max_depth_arg("PartialArguments()", max_depth)?,
            text: String::new(),
            parser: LiveArguments::default(),
            value: None,
            surrogate: None,
        })
    }

    /// Add `fragment` to the text; the arguments parsed so far, as the live value.
    fn feed<'py>(&mut self, fragment: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let py = fragment.py();
        let s = fragment.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "PartialArguments.feed() expects str, got {}",
                fragment
                    .get_type()
                    .name()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string())
            ))
        })?;
        self.value = None;
        match s.to_str() {
            Ok(t) if self.surrogate.is_none() => self.text.push_str(t),
            _ => self.push_with_surrogates(s)?,
        }
        if let Some((at, _)) = &self.surrogate {
            return Err(lone_surrogate(&self.text, *at).into());
        }
        let d = self.parser.live(py, &self.text, self.max_depth)?;
        self.value = Some(d.clone().unbind());
        Ok(d)
    }

    /// The live value (the last `feed()`'s result), or None.
    #[getter]
    fn value(&self, py: Python<'_>) -> Option<Py<PyDict>> {
        self.value.as_ref().map(|v| v.clone_ref(py))
    }

    /// All text fed so far.
    #[getter]
    fn text<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        match &self.surrogate {
            Some((_, given)) => given.bind(py).clone(),
            None => PyString::new(py, &self.text),
        }
    }

    /// The `max_depth` given to the constructor.
    #[getter]
    fn max_depth(&self) -> usize {
        self.max_depth
    }
}
