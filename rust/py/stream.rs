//! `StreamAggregator` for Python.

use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyInt, PyList, PyMemoryView, PyString};

use super::incremental::LiveArguments;
use crate::errors::{show, CoreError};
use crate::stream::{
    quote_format, CallResult, Limits, Outcome, SseEvent, StreamAggregator as Core, StreamResult,
    SUPPORTED_FORMATS,
};

/// Feeds at least this long are decoded and aggregated with the GIL released.
const DETACH_BYTES: usize = 1 << 16;

/// Aggregates a raw streamed chat-completions response. Not thread-safe: one per stream.
#[pyclass(module = "toolweave._core", name = "StreamAggregator")]
pub struct StreamAggregator {
    inner: Core,
    /// Resumable partial parsers of the tool calls' arguments, by tool call index.
    partials: Vec<LiveArguments>,
}

/// The `format` argument: absent, or whatever object was passed (checked in `new`).
pub(crate) enum FormatArg<'py> {
    Default,
    Given(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for FormatArg<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Self::Given(obj.to_owned()))
    }
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

/// The bytes of a `feed()` argument: `bytes` (borrowed), `bytearray` (copied) or a C-contiguous
/// `memoryview` of 1-byte items (copied); anything else is a `TypeError`.
enum FeedData<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
    Backed(PyBackedBytes),
}

impl FeedData<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            FeedData::Borrowed(b) => b,
            FeedData::Owned(v) => v,
            FeedData::Backed(b) => b,
        }
    }
}

fn feed_data<'a>(data: &'a Bound<'_, PyAny>) -> PyResult<FeedData<'a>> {
    if let Ok(b) = data.cast::<PyBytes>() {
        return Ok(FeedData::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = data.cast::<PyByteArray>() {
        return Ok(FeedData::Owned(b.to_vec()));
    }
    if data.is_instance_of::<PyMemoryView>() {
        let py = data.py();
        let contiguous = data.getattr(intern!(py, "c_contiguous"))?.is_truthy()?;
        let itemsize: usize = data.getattr(intern!(py, "itemsize"))?.extract()?;
        if !contiguous || itemsize != 1 {
            return Err(PyTypeError::new_err(
                "feed() argument 'data' must be a C-contiguous memoryview of 1-byte items",
            ));
        }
        let raw = data.call_method0(intern!(py, "tobytes"))?;
        return Ok(FeedData::Backed(raw.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "feed() argument 'data' must be bytes, bytearray or memoryview, not {}",
        type_name(data)
    )))
}

/// A limit argument: an `int` of at least 1 (not a `bool`); `None` means the default.
fn positive(name: &str, v: Option<&Bound<'_, PyAny>>, default: usize) -> PyResult<usize> {
    let Some(v) = v else { return Ok(default) };
    if !v.is_instance_of::<PyBool>() {
        if let Ok(n) = v.extract::<usize>() {
            if n >= 1 {
                return Ok(n);
            }
        } else if v.is_instance_of::<PyInt>() && v.gt(0)? {
            return Ok(usize::MAX); // larger than any memory: no limit in practice
        }
    }
    Err(PyValueError::new_err(format!(
        "StreamAggregator() {name} must be an int of at least 1, not {}",
        v.repr()?
    )))
}

fn in_use() -> PyErr {
    PyRuntimeError::new_err(
        "StreamAggregator is in use by another thread (a feed() or finish() is running); \
         an aggregator is not thread-safe: use one per stream",
    )
}

/// What one `feed`/`finish` call delivered: the data of each aggregated chunk (when wanted) and
/// the first failure.
#[derive(Default)]
struct Delivery {
    keep_chunks: bool,
    chunks: Vec<Vec<u8>>,
    first_error: Option<CoreError>,
}

impl Delivery {
    fn new(keep_chunks: bool) -> Self {
        Self {
            keep_chunks,
            ..Self::default()
        }
    }

    fn take(&mut self, ev: SseEvent<'_>, outcome: Outcome) {
        match outcome {
            Outcome::Chunk if self.keep_chunks => self.chunks.push(ev.data.to_vec()),
            Outcome::Failed(e) if self.first_error.is_none() => self.first_error = Some(e),
            _ => {}
        }
    }

    /// Raise the first failure with `delivered` in its `chunks` attribute, or return `delivered`.
    fn finish<'py, T: IntoPyObject<'py>>(self, py: Python<'py>, delivered: T) -> PyResult<T> {
        let Some(e) = self.first_error else {
            return Ok(delivered);
        };
        let err = PyErr::from(e);
        err.value(py).setattr(intern!(py, "chunks"), delivered)?;
        Err(err)
    }

    /// Build the chunk dicts (needs the interpreter), then raise or return them.
    fn into_chunks(mut self, py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
        let chunks = PyList::empty(py);
        for data in std::mem::take(&mut self.chunks) {
            match super::json::loads(py, &data) {
                Ok(obj) => chunks.append(obj)?,
                Err(_) => {
                    // Unreachable in practice: the aggregator validated the same bytes.
                    let excerpt: String = String::from_utf8_lossy(&data).chars().take(60).collect();
                    let message = format!("data is not valid JSON: '{}'", show(&excerpt));
                    self.first_error.get_or_insert(CoreError::StreamFormat {
                        message,
                        event: 0,
                        excerpt,
                    });
                }
            }
        }
        self.finish(py, chunks)
    }
}

impl StreamAggregator {
    /// Feed `data` (with the GIL released when it is large), then `finish()` when `end` is true.
    fn run(&mut self, py: Python<'_>, data: &[u8], end: bool, delivery: &mut Delivery) {
        let inner = &mut self.inner;
        let mut sink = |ev: SseEvent<'_>, outcome: Outcome| delivery.take(ev, outcome);
        if end && data.is_empty() {
            // `finish()`: nothing to feed (feeding would re-report a breached total limit).
        } else if data.len() >= DETACH_BYTES {
            py.detach(|| inner.feed(data, &mut sink));
        } else {
            inner.feed(data, &mut sink);
        }
        if end {
            inner.finish(&mut sink);
        }
    }
}

#[pymethods]
impl StreamAggregator {
    #[new]
    #[pyo3(
        signature = (format = FormatArg::Default, *, max_event_bytes = None, max_total_bytes = None, invalid_utf8 = None, max_depth = None),
        text_signature = "(format='openai-chat', *, max_event_bytes=16777216, max_total_bytes=268435456, invalid_utf8='reject', max_depth=200)"
    )]
    fn new(
        format: FormatArg<'_>,
        max_event_bytes: Option<&Bound<'_, PyAny>>,
        max_total_bytes: Option<&Bound<'_, PyAny>>,
        invalid_utf8: Option<&Bound<'_, PyAny>>,
        max_depth: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let limits = Limits {
            max_event_bytes: positive(
                "max_event_bytes",
                max_event_bytes,
                Limits::default().max_event_bytes,
            )?,
            max_total_bytes: positive(
                "max_total_bytes",
                max_total_bytes,
                Limits::default().max_total_bytes,
            )?,
            max_depth: super::json::max_depth_arg("StreamAggregator()", max_depth)?,
            replace_invalid_utf8: match invalid_utf8 {
                None => false,
                Some(v) => match v.extract::<String>().as_deref() {
                    Ok("reject") => false,
                    Ok("replace") => true,
                    _ => {
                        return Err(PyValueError::new_err(format!(
                            "StreamAggregator() invalid_utf8 must be 'reject' or 'replace', not {}",
                            v.repr()?
                        )))
                    }
                },
            },
        };
        let name = match &format {
            FormatArg::Default => SUPPORTED_FORMATS[0],
            FormatArg::Given(obj) => {
                let Ok(s) = obj.cast::<PyString>() else {
                    return Err(PyTypeError::new_err(format!(
                        "StreamAggregator() argument 'format' must be str, not {}",
                        type_name(obj)
                    )));
                };
                let Ok(name) = s.to_str() else {
                    // A lone surrogate: not a known format. Quote it with Python's own strings.
                    let py = obj.py();
                    let shown = s
                        .call_method1("replace", ("\\", "\\\\"))?
                        .call_method1("replace", ("\"", "\\\""))?;
                    let message = PyString::new(py, "unknown stream format \"{}\"; supported: {}")
                        .call_method1("format", (shown, SUPPORTED_FORMATS.join(", ")))?;
                    return Err(PyValueError::new_err(message.unbind()));
                };
                name
            }
        };
        let mut inner = Core::new(name)?;
        inner.set_limits(limits);
        Ok(Self {
            inner,
            partials: Vec::new(),
        })
    }

    #[getter]
    fn format(slf: &Bound<'_, Self>) -> PyResult<&'static str> {
        Ok(slf.try_borrow().map_err(|_| in_use())?.inner.format())
    }

    fn feed<'py>(slf: &Bound<'py, Self>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let data = feed_data(data)?;
        let mut delivery = Delivery::new(true);
        slf.try_borrow_mut()
            .map_err(|_| in_use())?
            .run(py, data.bytes(), false, &mut delivery);
        delivery.into_chunks(py)
    }

    /// Like `feed`, but returns only `(text_delta, reasoning_delta)` per chunk that added either.
    fn feed_deltas<'py>(
        slf: &Bound<'py, Self>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let data = feed_data(data)?;
        let mut this = slf.try_borrow_mut().map_err(|_| in_use())?;
        let mut delivery = Delivery::new(false);
        this.inner.record_deltas = true;
        this.inner.deltas.clear();
        this.run(py, data.bytes(), false, &mut delivery);
        this.inner.record_deltas = false;
        let out = PyList::empty(py);
        let deltas = std::mem::take(&mut this.inner.deltas);
        let (text, reasoning) = this.inner.text_and_reasoning();
        for (t, r) in deltas {
            out.append((&text[t], &reasoning[r]))?;
        }
        delivery.finish(py, out)
    }

    /// Like `feed`, but returns only the text and reasoning this call added, each joined.
    #[pyo3(signature = (data, *, end = false))]
    fn feed_text<'py>(
        slf: &Bound<'py, Self>,
        data: &Bound<'py, PyAny>,
        end: bool,
    ) -> PyResult<(Bound<'py, PyString>, Bound<'py, PyString>)> {
        let py = slf.py();
        let data = feed_data(data)?;
        let mut this = slf.try_borrow_mut().map_err(|_| in_use())?;
        let (t0, r0) = this.inner.inner().lens();
        let mut delivery = Delivery::new(false);
        this.run(py, data.bytes(), end, &mut delivery);
        let (text, reasoning) = this.inner.text_and_reasoning();
        let added = (
            PyString::new(py, &text[t0..]),
            PyString::new(py, &reasoning[r0..]),
        );
        if delivery.first_error.is_some() {
            let chunks = PyList::empty(py);
            if !added.0.is_empty()? || !added.1.is_empty()? {
                chunks.append(added.clone())?;
            }
            delivery.finish(py, chunks)?;
        }
        Ok(added)
    }

    fn finish<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let mut delivery = Delivery::new(true);
        slf.try_borrow_mut()
            .map_err(|_| in_use())?
            .run(py, b"", true, &mut delivery);
        delivery.into_chunks(py)
    }

    fn result<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let py = slf.py();
        let mut this = slf.try_borrow_mut().map_err(|_| in_use())?;
        result_dict(py, &this.inner.result())
    }

    /// Arguments of tool call `i` so far, parsed in partial mode (`live`: the value that later
    /// text updates in place, else a snapshot).
    #[pyo3(signature = (i, *, live = false))]
    fn partial_arguments<'py>(
        slf: &Bound<'py, Self>,
        i: &Bound<'py, PyAny>,
        live: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let py = slf.py();
        let index: Option<usize> = if i.is_instance_of::<PyBool>() {
            None
        } else {
            i.extract::<isize>()
                .ok()
                .and_then(|i| usize::try_from(i).ok())
        };
        let mut guard = slf.try_borrow_mut().map_err(|_| in_use())?;
        let this = &mut *guard;
        let max_depth = this.inner.limits().max_depth;
        match index.and_then(|i| this.inner.call_arguments(i)) {
            // Whole arguments (a `done` event, Gemini or Ollama objects) are parsed once, directly.
            Some((a, true, _)) if !live => Ok(super::json::parse_mode(
                py,
                a,
                super::json::Mode::Partial,
                max_depth,
            )?),
            Some((a, _, slot)) => {
                if this.partials.len() <= slot {
                    this.partials.resize_with(slot + 1, LiveArguments::default);
                }
                if live {
                    this.partials[slot].live(py, a, max_depth)
                } else {
                    this.partials[slot].parse(py, a, max_depth)
                }
            }
            None => Err(PyIndexError::new_err(format!(
                "no tool call at index {}",
                i.repr()?
            ))),
        }
    }

    #[getter]
    fn error<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let this = slf.try_borrow().map_err(|_| in_use())?;
        match this.inner.error() {
            Some(e) => super::errors::provider_error_dict(slf.py(), e),
            None => Ok(None),
        }
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.try_borrow().map_err(|_| in_use())?;
        Ok(format!(
            "StreamAggregator(format={}, chunks={})",
            quote_format(this.inner.format()),
            this.inner.chunks()
        ))
    }
}

fn json_to_py<'py>(py: Python<'py>, raw: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    super::json::loads(py, raw).map_err(|e| jiter::map_json_error(raw, &e))
}

fn calls<'py>(py: Python<'py>, calls: &[CallResult<'_>]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for c in calls {
        let cd = PyDict::new(py);
        cd.set_item(intern!(py, "index"), c.index)?;
        cd.set_item(intern!(py, "id"), c.id)?;
        cd.set_item(intern!(py, "type"), c.kind)?;
        cd.set_item(intern!(py, "name"), c.name)?;
        cd.set_item(intern!(py, "arguments"), c.arguments)?;
        for (k, v) in c.extra {
            cd.set_item(*k, v.as_deref())?;
        }
        out.append(cd)?;
    }
    Ok(out)
}

/// The result dict of `StreamAggregator.result()` (its shape is [`StreamResult`]'s).
fn result_dict<'py>(py: Python<'py>, r: &StreamResult<'_>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(intern!(py, "format"), r.format)?;
    d.set_item(intern!(py, "id"), r.id)?;
    d.set_item(intern!(py, "model"), r.model)?;
    d.set_item(intern!(py, "text"), r.text)?;
    d.set_item(intern!(py, "reasoning"), r.reasoning)?;
    d.set_item(intern!(py, "tool_calls"), calls(py, &r.tool_calls)?)?;
    d.set_item(intern!(py, "finish_reason"), r.finish_reason)?;
    d.set_item(
        intern!(py, "normalized_finish_reason"),
        r.normalized_finish_reason.as_deref(),
    )?;
    match &r.usage {
        Some(raw) => d.set_item(intern!(py, "usage"), json_to_py(py, raw)?)?,
        None => d.set_item(intern!(py, "usage"), py.None())?,
    }
    d.set_item(intern!(py, "truncated"), r.truncated)?;
    d.set_item(intern!(py, "chunks"), r.chunks)?;
    let blocks = PyList::empty(py);
    for b in &r.blocks {
        let raw = serde_json::to_vec(b).unwrap_or_default();
        blocks.append(json_to_py(py, &raw)?)?;
    }
    d.set_item(intern!(py, "blocks"), blocks)?;
    let choices = PyList::empty(py);
    for c in &r.choices {
        let cd = PyDict::new(py);
        cd.set_item(intern!(py, "index"), c.index)?;
        cd.set_item(intern!(py, "text"), c.text)?;
        cd.set_item(intern!(py, "reasoning"), c.reasoning)?;
        cd.set_item(intern!(py, "tool_calls"), calls(py, &c.tool_calls)?)?;
        cd.set_item(intern!(py, "finish_reason"), c.finish_reason)?;
        choices.append(cd)?;
    }
    d.set_item(intern!(py, "choices"), choices)?;
    Ok(d)
}
