//! The exception classes and the one `CoreError` -> `PyErr` conversion.
//!
//! The three exception classes are plain Python classes (so they have a normal `__init__`,
//! attributes and pickling, and can be raised from Python code too) created once, when
//! `toolweave._core` is imported, and exported from it. `toolweave.exceptions` re-exports them;
//! the pure-Python twins raise the very same classes.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use crate::errors::CoreError;

pub(crate) struct Exceptions {
    pub tool_arguments: Py<PyType>,
    pub stream_format: Py<PyType>,
    pub provider_stream: Py<PyType>,
}

static EXCEPTIONS: PyOnceLock<Exceptions> = PyOnceLock::new();

const SOURCE: &std::ffi::CStr = cr#"
class ToolArgumentsError(ValueError):
    """Tool-call arguments are not a JSON object.

    Attributes:
        message: The full message.
        position: 0-based offset of the error in characters (code points) of the text.
        excerpt: Up to 20 characters either side of the position.
        line: 1-based line of the position.
        column: 1-based column (in characters) of the position.
    """

    def __init__(self, message, position=0, excerpt='', line=1, column=1):
        super().__init__(message)
        self.message = message
        self.position = position
        self.excerpt = excerpt
        self.line = line
        self.column = column

    def __reduce__(self):
        return type(self), (self.message, self.position, self.excerpt, self.line, self.column)


class StreamFormatError(ValueError):
    """A stream event's data is not a JSON object (the aggregator stays usable).

    Attributes:
        message: The full message.
        event: 1-based number of the offending SSE event in the stream.
        excerpt: The first 60 characters of its data.
        chunks: The chunks the failing feed()/finish() call completed anyway.
    """

    def __init__(self, message, event=0, excerpt=''):
        super().__init__(message)
        self.message = message
        self.event = event
        self.excerpt = excerpt
        self.chunks = []

    def __reduce__(self):
        return type(self), (self.message, self.event, self.excerpt)


class ProviderStreamError(RuntimeError):
    """The provider reported an error inside the stream (an `event: error` frame or an `error` payload).

    Attributes:
        message: The provider's message.
        error: {'event': str, 'message': str, 'data': the parsed payload, or its text if not JSON}, or None.
        chunks: The chunks the failing feed()/finish() call completed anyway.
    """

    def __init__(self, message, error=None):
        super().__init__(message)
        self.message = message
        self.error = error
        self.chunks = []

    def __reduce__(self):
        return type(self), (self.message, self.error)
"#;

pub(crate) fn exceptions(py: Python<'_>) -> PyResult<&Exceptions> {
    EXCEPTIONS.get_or_try_init(py, || {
        let globals = PyDict::new(py);
        globals.set_item("__name__", "toolweave._core")?;
        py.run(SOURCE, Some(&globals), None)?;
        let get = |name: &str| -> PyResult<Py<PyType>> {
            let cls = globals
                .get_item(name)?
                .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(name.to_string()))?;
            Ok(cls.cast_into::<PyType>()?.unbind())
        };
        Ok(Exceptions {
            tool_arguments: get("ToolArgumentsError")?,
            stream_format: get("StreamFormatError")?,
            provider_stream: get("ProviderStreamError")?,
        })
    })
}

/// The `error` dict of a provider error: event, message and the parsed payload.
pub(crate) fn provider_error_dict<'py>(
    py: Python<'py>,
    err: &CoreError,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let CoreError::Provider {
        message,
        event,
        data,
    } = err
    else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    d.set_item("event", event)?;
    d.set_item("message", message)?;
    match super::json::loads(py, data) {
        Ok(v) => d.set_item("data", v)?,
        Err(_) => d.set_item("data", String::from_utf8_lossy(data))?,
    }
    Ok(Some(d))
}

fn build(py: Python<'_>, err: CoreError) -> PyResult<PyErr> {
    let exc = exceptions(py)?;
    let value = match &err {
        CoreError::InvalidArguments {
            message,
            position,
            excerpt,
            line,
            column,
            ..
        } => exc
            .tool_arguments
            .bind(py)
            .call1((message, position, excerpt, line, column))?,
        CoreError::StreamFormat {
            message,
            event,
            excerpt,
        } => exc
            .stream_format
            .bind(py)
            .call1((message, event, excerpt))?,
        CoreError::Provider { message, .. } => exc
            .provider_stream
            .bind(py)
            .call1((message, provider_error_dict(py, &err)?))?,
        CoreError::UnknownFormat(_) => return Ok(PyValueError::new_err(err.to_string())),
        CoreError::UsageType(m) => return Ok(PyTypeError::new_err(m.clone())),
    };
    Ok(PyErr::from_value(value))
}

impl From<CoreError> for PyErr {
    fn from(err: CoreError) -> PyErr {
        Python::attach(|py| build(py, err).unwrap_or_else(|e| e))
    }
}
