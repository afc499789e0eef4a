//! `parse_arguments` and the shared JSON -> Python conversion.

use jiter::{FloatMode, PartialMode, PythonParse, StringCacheMode};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};

use crate::json;

/// Strict JSON straight to Python objects; short strings (keys and values) are cached.
const PARSER: PythonParse = PythonParse {
    allow_inf_nan: false,
    cache_mode: StringCacheMode::Keys,
    partial_mode: PartialMode::Off,
    catch_duplicate_keys: false,
    float_mode: FloatMode::Float,
};

/// Inputs at least this long locate their syntax error with the GIL released.
const DETACH_BYTES: usize = 1 << 20;

pub(crate) fn loads<'py>(
    py: Python<'py>,
    data: &[u8],
) -> Result<Bound<'py, PyAny>, jiter::JsonError> {
    PARSER.python_parse(py, data)
}

fn kind_of(v: &Bound<'_, PyAny>) -> &'static str {
    if v.is_instance_of::<PyList>() {
        "array"
    } else if v.is_instance_of::<PyString>() {
        "string"
    } else if v.is_instance_of::<PyBool>() {
        "boolean"
    } else if v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>() {
        "number"
    } else {
        "null"
    }
}

fn parse_str<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    if json::is_blank(text.as_bytes()) {
        return Ok(PyDict::new(py));
    }
    match loads(py, text.as_bytes()) {
        Ok(v) => match v.cast_into::<PyDict>() {
            Ok(d) => Ok(d),
            Err(e) => Err(json::not_an_object(text, kind_of(&e.into_inner())).into()),
        },
        Err(e) => {
            let err = if text.len() >= DETACH_BYTES {
                py.detach(|| json::error_for(text, e.index))
            } else {
                json::error_for(text, e.index)
            };
            Err(err.into())
        }
    }
}

/// Parse tool-call arguments as a strict JSON object.
#[pyfunction]
pub fn parse_arguments<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    if let Ok(s) = text.cast::<PyString>() {
        if let Ok(t) = s.to_str() {
            return parse_str(py, t);
        }
        // A lone surrogate: not encodable as UTF-8.
        let raw = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
        let raw = raw.cast::<PyBytes>()?.as_bytes();
        let at = std::str::from_utf8(raw)
            .err()
            .map_or(raw.len(), |e| e.valid_up_to());
        let lossy = String::from_utf8_lossy(raw);
        Err(json::lone_surrogate(&lossy, at).into())
    } else if let Ok(b) = text.cast::<PyBytes>() {
        let data = b.as_bytes();
        match std::str::from_utf8(data) {
            Ok(t) => parse_str(py, t),
            Err(e) => Err(json::invalid_utf8(data, e.valid_up_to()).into()),
        }
    } else {
        Err(PyTypeError::new_err(format!(
            "parse_arguments() expects str or bytes, got {}",
            text.get_type().name()?
        )))
    }
}
