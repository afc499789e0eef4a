//! `StreamAggregator` for Python.

use std::borrow::Cow;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{show, CoreError};
use crate::stream::{OpenAiChatAggregator, Outcome, SseEvent, StreamAggregator as Core};

/// Feeds at least this long are decoded and aggregated with the GIL released.
const DETACH_BYTES: usize = 1 << 16;

/// Aggregates a raw streamed chat-completions response.
#[pyclass(module = "toolweave._core", name = "StreamAggregator")]
pub struct StreamAggregator {
    inner: Core,
}

impl StreamAggregator {
    /// Phase 2 (needs the interpreter): build the chunk dicts and raise the first failure.
    fn deliver<'py>(
        &self,
        py: Python<'py>,
        processed: Vec<(SseEvent, Outcome)>,
    ) -> PyResult<Bound<'py, PyList>> {
        let chunks = PyList::empty(py);
        let mut first_error: Option<CoreError> = None;
        for (ev, outcome) in processed {
            match outcome {
                Outcome::Chunk => match super::json::loads(py, &ev.data) {
                    Ok(obj) => chunks.append(obj)?,
                    Err(_) => {
                        // Unreachable in practice: the aggregator validated the same bytes.
                        let excerpt: String =
                            String::from_utf8_lossy(&ev.data).chars().take(60).collect();
                        let message = format!("data is not valid JSON: '{}'", show(&excerpt));
                        first_error.get_or_insert(CoreError::StreamFormat {
                            message,
                            event: 0,
                            excerpt,
                        });
                    }
                },
                Outcome::Skipped => {}
                Outcome::Failed(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            None => Ok(chunks),
            Some(e) => {
                let err = PyErr::from(e);
                err.value(py).setattr(intern!(py, "chunks"), chunks)?;
                Err(err)
            }
        }
    }
}

#[pymethods]
impl StreamAggregator {
    #[new]
    #[pyo3(signature = (format = "openai-chat"))]
    fn new(format: &str) -> PyResult<Self> {
        Ok(Self {
            inner: Core::new(format)?,
        })
    }

    #[getter]
    fn format(&self) -> &'static str {
        self.inner.format()
    }

    fn feed<'py>(&mut self, py: Python<'py>, data: Cow<'_, [u8]>) -> PyResult<Bound<'py, PyList>> {
        let processed = if data.len() >= DETACH_BYTES {
            let inner = &mut self.inner;
            let data: &[u8] = &data;
            py.detach(|| inner.feed(data))
        } else {
            self.inner.feed(&data)
        };
        self.deliver(py, processed)
    }

    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let processed = self.inner.finish();
        self.deliver(py, processed)
    }

    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s: &OpenAiChatAggregator = self.inner.state();
        let d = PyDict::new(py);
        d.set_item(intern!(py, "id"), s.id.as_deref())?;
        d.set_item(intern!(py, "model"), s.model.as_deref())?;
        d.set_item(intern!(py, "text"), &s.text)?;
        d.set_item(intern!(py, "reasoning"), s.reasoning.as_deref())?;
        let calls = PyList::empty(py);
        for c in &s.tool_calls {
            let cd = PyDict::new(py);
            cd.set_item(intern!(py, "index"), c.index)?;
            cd.set_item(intern!(py, "id"), &c.id)?;
            cd.set_item(intern!(py, "type"), OpenAiChatAggregator::call_kind(c))?;
            cd.set_item(intern!(py, "name"), &c.name)?;
            cd.set_item(intern!(py, "arguments"), &c.arguments)?;
            calls.append(cd)?;
        }
        d.set_item(intern!(py, "tool_calls"), calls)?;
        d.set_item(intern!(py, "finish_reason"), s.finish_reason.as_deref())?;
        match &s.usage {
            Some(raw) => {
                let usage =
                    super::json::loads(py, raw).map_err(|e| jiter::map_json_error(raw, &e))?;
                d.set_item(intern!(py, "usage"), usage)?;
            }
            None => d.set_item(intern!(py, "usage"), py.None())?,
        }
        d.set_item(intern!(py, "truncated"), s.truncated())?;
        d.set_item(intern!(py, "chunks"), s.chunks)?;
        Ok(d)
    }

    #[getter]
    fn error<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        match &self.inner.state().error {
            Some(e) => super::errors::provider_error_dict(py, e),
            None => Ok(None),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "StreamAggregator(format={:?}, chunks={})",
            self.inner.format(),
            self.inner.state().chunks
        )
    }
}
