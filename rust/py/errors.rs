//! The exception classes and the one `CoreError` -> `PyErr` conversion.
//!
//! The three exception classes are plain Python classes defined in `toolweave.exceptions` (so they
//! have a normal `__init__`, attributes and pickling, and exist without the extension for
//! `TOOLWEAVE_PURE=1`); the core looks them up once and raises the very classes the pure-Python
//! twins raise. They are looked up at the first error, never at import, so
//! `toolweave.exceptions` may import the rest of the package.

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

pub(crate) fn exceptions(py: Python<'_>) -> PyResult<&Exceptions> {
    EXCEPTIONS.get_or_try_init(py, || {
        let module = py.import("toolweave.exceptions")?;
        let get = |name: &str| -> PyResult<Py<PyType>> {
            Ok(module.getattr(name)?.cast_into::<PyType>()?.unbind())
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
        CoreError::UnknownFormat(m) | CoreError::Schema(m) => {
            return Ok(PyValueError::new_err(m.clone()))
        }
        CoreError::UsageType(m) => return Ok(PyTypeError::new_err(m.clone())),
    };
    Ok(PyErr::from_value(value))
}

impl From<CoreError> for PyErr {
    fn from(err: CoreError) -> PyErr {
        Python::attach(|py| build(py, err).unwrap_or_else(|e| e))
    }
}
