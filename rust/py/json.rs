//! `parse_arguments` for Python: the readings of [`modes`] with Python objects built by jiter, and the
//! argument conversions (`str`, `bytes`, `dict`; `mode`; `max_depth`).

use jiter::{FloatMode, PartialMode, PythonParse, StringCacheMode};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};

use crate::errors::CoreError;
use crate::json;
use crate::json::modes::{self, Build, Parsed};
pub(crate) use crate::json::Mode;

/// Strict JSON straight to Python objects; short strings (keys and values, 2 to 63 bytes) come from
/// jiter's string cache, as `jiter.from_json` does by default.
const PARSER: PythonParse = PythonParse {
    allow_inf_nan: false,
    cache_mode: StringCacheMode::All,
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

/// The Python builder of [`modes`]: jiter's [`PARSER`] straight to Python objects; text-only work
/// on long texts runs with the GIL released.
struct Objects<'py>(Python<'py>);

impl<'py> Build for Objects<'py> {
    type Object = Bound<'py, PyDict>;

    fn parse(&self, text: &str) -> Result<Parsed<Self::Object>, usize> {
        let value = loads(self.0, text.as_bytes()).map_err(|e| e.index)?;
        match value.cast_into::<PyDict>() {
            Ok(d) => Ok(Parsed::Object(d)),
            Err(e) => {
                let value = e.into_inner();
                Ok(match value.cast::<PyString>().map(|s| s.to_str()) {
                    Ok(Ok(s)) => Parsed::Str(s.to_owned()),
                    _ => Parsed::Other(kind_of(&value)),
                })
            }
        }
    }

    fn empty(&self) -> Self::Object {
        PyDict::new(self.0)
    }

    fn work<T: Send>(&self, text: &str, f: impl Fn(&str) -> T + Send + Sync) -> T {
        if text.len() >= DETACH_BYTES {
            self.0.detach(|| f(text))
        } else {
            f(text)
        }
    }
}

fn mode_of(mode: Option<&Bound<'_, PyAny>>) -> PyResult<Mode> {
    let Some(m) = mode else {
        return Ok(Mode::Strict);
    };
    if let Ok(s) = m.cast::<PyString>() {
        if let Some(mode) = s.to_str().ok().and_then(Mode::from_name) {
            return Ok(mode);
        }
    }
    Err(PyValueError::new_err(format!(
        "parse_arguments() mode must be 'strict', 'partial' or 'lenient', not {}",
        m.repr()?
    )))
}

/// Read `text` in `mode` ([`modes::parse`]) with values nested at most `max_depth` (1 ..= 200) levels deep.
pub(crate) fn parse_mode<'py>(
    py: Python<'py>,
    text: &str,
    mode: Mode,
    max_depth: usize,
) -> Result<Bound<'py, PyDict>, CoreError> {
    modes::parse(&Objects(py), text, mode, max_depth)
}

/// A `max_depth` argument: an `int` in `1 ..= 200` (not a `bool`); `None` means 200.
pub(crate) fn max_depth_arg(function: &str, v: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    let Some(v) = v else {
        return Ok(json::MAX_DEPTH);
    };
    if !v.is_instance_of::<PyBool>() {
        if let Ok(n) = v.extract::<usize>() {
            if (1..=json::MAX_DEPTH).contains(&n) {
                return Ok(n);
            }
        }
    }
    Err(PyValueError::new_err(format!(
        "{function} max_depth must be an int from 1 to {}, not {}",
        json::MAX_DEPTH,
        v.repr()?
    )))
}

/// Parse tool-call arguments as a JSON object (modes: strict, partial, lenient).
#[pyfunction]
#[pyo3(
    signature = (text, mode = None, *, max_depth = None),
    text_signature = "(text, mode='strict', *, max_depth=200)"
)]
pub fn parse_arguments<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    mode: Option<&Bound<'py, PyAny>>,
    max_depth: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mode = mode_of(mode)?;
    let max_depth = max_depth_arg("parse_arguments()", max_depth)?;
    if let Ok(d) = text.cast::<PyDict>() {
        return d.copy();
    }
    if let Ok(s) = text.cast::<PyString>() {
        if let Ok(t) = s.to_str() {
            return Ok(parse_mode(py, t, mode, max_depth)?);
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
            Ok(t) => Ok(parse_mode(py, t, mode, max_depth)?),
            Err(e) => Err(json::invalid_utf8(data, e.valid_up_to()).into()),
        }
    } else {
        Err(PyTypeError::new_err(format!(
            "parse_arguments() expects str, bytes or dict, got {}",
            text.get_type().name()?
        )))
    }
}
