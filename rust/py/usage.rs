//! `UsageAccumulator` for Python: converts mappings to [`UsageValue`] trees and back.

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyMapping, PyString};

use crate::usage::{join, too_deep, UsageAccumulator as Core, UsageMap, UsageValue, MAX_DEPTH};

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

fn where_(path: &str) -> String {
    if path.is_empty() {
        "the top level".to_string()
    } else {
        format!("'{path}'")
    }
}

/// One `(key, value)` pair of a mapping.
type Item<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>);

/// Convert the mapping `obj` at `path` (nesting level `depth`, the top level is 1).
///
/// An exact `dict` is read directly; any other mapping (dict subclasses too) through its
/// `items()` (a repeated key keeps its first position and its last value, as when building a
/// dict: [`Core::add`] merges it so). Nothing here borrows the accumulator, so user code run by
/// `items()` may use it.
fn to_map(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<UsageMap> {
    if depth > MAX_DEPTH {
        return Err(too_deep(path).into());
    }
    let items: Vec<Item<'_>> = if let Ok(d) = obj.cast_exact::<PyDict>() {
        d.iter().collect()
    } else {
        let m = obj.cast::<PyMapping>()?;
        m.items()?
            .iter()
            .map(|kv| kv.extract())
            .collect::<PyResult<_>>()?
    };
    let mut out: UsageMap = Vec::with_capacity(items.len());
    for (k, v) in items {
        let Ok(key) = k.cast::<PyString>() else {
            return Err(PyTypeError::new_err(format!(
                "usage keys must be strings, got {} at {}",
                type_name(&k),
                where_(path)
            )));
        };
        let Ok(key) = key.to_str() else {
            return Err(PyTypeError::new_err(format!(
                "usage keys must be valid Unicode, got a lone surrogate at {}",
                where_(path)
            )));
        };
        let value = to_value(&v, &join(path, key), depth)?;
        out.push((key.to_string(), value));
    }
    Ok(out)
}

/// Convert a value of a mapping at nesting level `depth`.
fn to_value(v: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<UsageValue> {
    if v.is_none() {
        Ok(UsageValue::Null)
    } else if v.is_instance_of::<PyBool>() {
        Err(bad(v, path))
    } else if v.is_instance_of::<PyInt>() {
        match v.extract::<i64>() {
            Ok(i) => Ok(UsageValue::Int(i128::from(i))),
            Err(_) => Err(PyTypeError::new_err(format!(
                "usage value at '{path}' is out of the 64-bit integer range"
            ))),
        }
    } else if v.is_instance_of::<PyFloat>() {
        Ok(UsageValue::Float(v.extract::<f64>()?))
    } else if let Ok(s) = v.cast::<PyString>() {
        match s.to_str() {
            Ok(s) => Ok(UsageValue::Str(s.to_string())),
            Err(_) => Err(PyTypeError::new_err(format!(
                "usage value at '{path}' is a string with a lone surrogate"
            ))),
        }
    } else if v.is_instance_of::<PyDict>() || v.cast::<PyMapping>().is_ok() {
        Ok(UsageValue::Map(to_map(v, path, depth + 1)?))
    } else {
        Err(bad(v, path))
    }
}

fn bad(v: &Bound<'_, PyAny>, path: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "usage value at '{path}' must be a number, string, mapping or None, got {}",
        type_name(v)
    ))
}

fn to_py<'py>(py: Python<'py>, map: &UsageMap) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in map {
        match v {
            UsageValue::Null => d.set_item(k, py.None())?,
            UsageValue::Int(i) => d.set_item(k, i)?,
            UsageValue::Float(f) => d.set_item(k, f)?,
            UsageValue::Str(s) => d.set_item(k, s)?,
            UsageValue::Map(m) => d.set_item(k, to_py(py, m)?)?,
        }
    }
    Ok(d)
}

fn in_use() -> PyErr {
    PyRuntimeError::new_err(
        "UsageAccumulator is in use by another thread; an accumulator is not thread-safe",
    )
}

/// Sums usage objects over the rounds of a conversation.
#[pyclass(module = "toolweave._core", name = "UsageAccumulator")]
#[derive(Default)]
pub struct UsageAccumulator {
    inner: Core,
}

#[pymethods]
impl UsageAccumulator {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    fn add(slf: &Bound<'_, Self>, usage: &Bound<'_, PyAny>) -> PyResult<()> {
        if usage.is_none() {
            return Ok(());
        }
        if !(usage.is_instance_of::<PyDict>() || usage.cast::<PyMapping>().is_ok()) {
            return Err(PyTypeError::new_err(format!(
                "usage must be a mapping or None, got {}",
                type_name(usage)
            )));
        }
        // Convert first, without borrowing: `items()` of a mapping may call back into `add`.
        let map = to_map(usage, "", 1)?;
        let mut this = slf.try_borrow_mut().map_err(|_| in_use())?;
        this.inner.add(Some(map)).map_err(PyErr::from)
    }

    fn total<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.inner.total().map(|m| to_py(py, m)).transpose()
    }

    #[getter]
    fn rounds(&self) -> usize {
        self.inner.rounds()
    }

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn __repr__(&self) -> String {
        format!("UsageAccumulator(rounds={})", self.inner.rounds())
    }
}
