//! `parse_arguments` and the shared JSON -> Python conversion.

use jiter::{FloatMode, PartialMode, PythonParse, StringCacheMode};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};

use crate::errors::CoreError;
use crate::json;

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

/// [`json::deeper_than`] for text jiter's parser accepted: its own limit is `MAX_DEPTH`, so only a
/// lower one needs the scan.
fn deeper_than_parsed(text: &str, max_depth: usize) -> Option<usize> {
    (max_depth < json::MAX_DEPTH)
        .then(|| json::deeper_than(text.as_bytes(), max_depth))
        .flatten()
}

fn parse_str<'py>(
    py: Python<'py>,
    text: &str,
    max_depth: usize,
) -> Result<Bound<'py, PyDict>, CoreError> {
    if json::is_blank(text.as_bytes()) {
        return Ok(PyDict::new(py));
    }
    match loads(py, text.as_bytes()) {
        Ok(v) => {
            if let Some(pos) = deeper_than_parsed(text, max_depth) {
                return Err(json::make_error(text, pos, &json::depth_reason(max_depth)));
            }
            match v.cast_into::<PyDict>() {
                Ok(d) => Ok(d),
                Err(e) => Err(json::not_an_object(text, kind_of(&e.into_inner()))),
            }
        }
        Err(e) => {
            let err = if text.len() >= DETACH_BYTES {
                py.detach(|| json::error_within(text, e.index, max_depth))
            } else {
                json::error_within(text, e.index, max_depth)
            };
            Err(err)
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

/// `text` as an object if it parses strictly to one nested at most `max_depth` levels deep.
fn try_object<'py>(py: Python<'py>, text: &str, max_depth: usize) -> Option<Bound<'py, PyDict>> {
    let d = loads(py, text.as_bytes())
        .ok()?
        .cast_into::<PyDict>()
        .ok()?;
    deeper_than_parsed(text, max_depth).is_none().then_some(d)
}

/// `f(text)`, with the GIL released for long texts.
fn detached<T: Send>(py: Python<'_>, text: &str, f: impl Fn(&str) -> T + Send + Sync) -> T {
    if text.len() >= DETACH_BYTES {
        py.detach(|| f(text))
    } else {
        f(text)
    }
}

/// Parse in `mode` with values nested at most `max_depth` (1 ..= 200) levels deep.
pub(crate) fn parse_mode<'py>(
    py: Python<'py>,
    text: &str,
    mode: Mode,
    max_depth: usize,
) -> Result<Bound<'py, PyDict>, CoreError> {
    if mode == Mode::Strict || json::is_blank(text.as_bytes()) {
        return parse_str(py, text, max_depth);
    }
    if mode == Mode::Lenient {
        if let Some(d) = lenient(py, text, max_depth)? {
            return Ok(d);
        }
    } else if json::partial::may_be_complete(text) {
        // A whole object (the last fragment has arrived) reads the same strictly: one parse.
        if let Some(d) = try_object(py, text, max_depth) {
            return Ok(d);
        }
    }
    // Partial, or lenient without a repair: the text as a truncated prefix (`{"a": 1, "b": tr` -> `{"a": 1}`).
    let completed = detached(py, text, json::partial::complete_partial);
    if let Some(d) = completed.and_then(|c| try_object(py, &c, max_depth)) {
        return Ok(d);
    }
    parse_str(py, text, max_depth) // raises the strict error of the original text
}

/// Lenient mode before the truncated-prefix reading: a valid object as it is; a JSON string whose
/// content parses (leniently) to an object, unwrapped (double-encoded arguments); else the repair,
/// its objects back to back merged ([`merge`]). `None`: none of these gives an object.
fn lenient<'py>(
    py: Python<'py>,
    text: &str,
    max_depth: usize,
) -> Result<Option<Bound<'py, PyDict>>, CoreError> {
    if let Ok(value) = loads(py, text.as_bytes()) {
        if let Ok(s) = value.cast::<PyString>() {
            let inner = s.to_str().ok();
            if let Some(d) = inner.and_then(|t| parse_mode(py, t, Mode::Lenient, max_depth).ok()) {
                return Ok(Some(d));
            }
        } else if let Ok(d) = value.cast_into::<PyDict>() {
            if deeper_than_parsed(text, max_depth).is_none() {
                return Ok(Some(d));
            }
        }
    }
    let Some(objects) = detached(py, text, json::partial::repair) else {
        return Ok(None);
    };
    let mut merged: Option<Bound<'py, PyDict>> = None;
    for (at, object) in objects {
        let Some(d) = try_object(py, &object, max_depth) else {
            return Ok(None);
        };
        match &merged {
            None => merged = Some(d),
            Some(m) => merge(m, &d).map_err(|keys| json::make_error(text, at, &clash(&keys)))?,
        }
    }
    Ok(merged)
}

/// Add the members of `more` (an object that followed `into` back to back) to `into`; `Err` with
/// the keys `more` gives another value ([`same`]), leaving `into` unchanged.
fn merge(into: &Bound<'_, PyDict>, more: &Bound<'_, PyDict>) -> Result<(), Vec<String>> {
    let mut clashes = Vec::new();
    for (key, value) in more.iter() {
        if let Ok(Some(old)) = into.get_item(&key) {
            if !same(&old, &value) {
                clashes.push(key.extract::<String>().unwrap_or_default());
            }
        }
    }
    if clashes.is_empty() {
        into.update(more.as_mapping()).map_err(|_| clashes)
    } else {
        Err(clashes)
    }
}

/// Equal JSON values of the same types all the way down (`1`, `1.0` and `true` differ).
fn same(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> bool {
    if !a.get_type().is(b.get_type()) {
        return false;
    }
    if let (Ok(x), Ok(y)) = (a.cast::<PyDict>(), b.cast::<PyDict>()) {
        return x.len() == y.len()
            && x.iter()
                .all(|(k, v)| matches!(y.get_item(&k), Ok(Some(w)) if same(&v, &w)));
    }
    if let (Ok(x), Ok(y)) = (a.cast::<PyList>(), b.cast::<PyList>()) {
        return x.len() == y.len() && x.iter().zip(y.iter()).all(|(v, w)| same(&v, &w));
    }
    a.eq(b).unwrap_or(false)
}

/// The error reason for objects back to back that disagree on `keys`.
fn clash(keys: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut named: Vec<String> = keys
        .iter()
        .take(SHOWN)
        .map(|k| serde_json::to_string(k).unwrap_or_default())
        .collect();
    if keys.len() > SHOWN {
        named.push(format!("and {} more", keys.len() - SHOWN));
    }
    format!(
        "JSON objects back to back give different values for {}: merging them would lose one",
        named.join(", ")
    )
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
