//! `parse_arguments` and the shared JSON -> Python conversion.

use jiter::{FloatMode, PartialMode, PythonParse, StringCacheMode};
use pyo3::exceptions::{PyTypeError, PyValueError};
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

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Strict,
    Partial,
    Lenient,
}

fn mode_of(mode: Option<&Bound<'_, PyAny>>) -> PyResult<Mode> {
    let Some(m) = mode else {
        return Ok(Mode::Strict);
    };
    if let Ok(s) = m.cast::<PyString>() {
        match s.to_str() {
            Ok("strict") => return Ok(Mode::Strict),
            Ok("partial") => return Ok(Mode::Partial),
            Ok("lenient") => return Ok(Mode::Lenient),
            _ => {}
        }
    }
    Err(PyValueError::new_err(format!(
        "parse_arguments() mode must be 'strict', 'partial' or 'lenient', not {}",
        m.repr()?
    )))
}

/// `text` as an object if it parses strictly to one.
fn try_object<'py>(py: Python<'py>, text: &str) -> Option<Bound<'py, PyDict>> {
    loads(py, text.as_bytes()).ok()?.cast_into::<PyDict>().ok()
}

pub(crate) fn parse_mode<'py>(
    py: Python<'py>,
    text: &str,
    mode: Mode,
) -> PyResult<Bound<'py, PyDict>> {
    if mode == Mode::Strict || json::is_blank(text.as_bytes()) {
        return parse_str(py, text);
    }
    if mode == Mode::Lenient {
        if let Some(d) = try_object(py, text) {
            return Ok(d);
        }
    }
    let fix = || match mode {
        Mode::Partial => json::partial::complete_partial(text),
        _ => json::partial::repair(text),
    };
    let fixed = if text.len() >= DETACH_BYTES {
        py.detach(fix)
    } else {
        fix()
    };
    if let Some(d) = fixed.as_deref().and_then(|f| try_object(py, f)) {
        return Ok(d);
    }
    parse_str(py, text) // raises the strict error of the original text
}

/// Parse tool-call arguments as a JSON object (modes: strict, partial, lenient).
#[pyfunction]
#[pyo3(signature = (text, mode = None), text_signature = "(text, mode='strict')")]
pub fn parse_arguments<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    mode: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mode = mode_of(mode)?;
    if let Ok(d) = text.cast::<PyDict>() {
        return d.copy();
    }
    if let Ok(s) = text.cast::<PyString>() {
        if let Ok(t) = s.to_str() {
            return parse_mode(py, t, mode);
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
            Ok(t) => parse_mode(py, t, mode),
            Err(e) => Err(json::invalid_utf8(data, e.valid_up_to()).into()),
        }
    } else {
        Err(PyTypeError::new_err(format!(
            "parse_arguments() expects str, bytes or dict, got {}",
            text.get_type().name()?
        )))
    }
}
