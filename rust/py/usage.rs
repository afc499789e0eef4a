//! `UsageAccumulator` for Python: converts mappings to [`UsageValue`] trees and back.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyMapping, PyString};

use crate::usage::{UsageAccumulator as Core, UsageMap, UsageValue};

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

fn path_of(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn to_map(obj: &Bound<'_, PyAny>, path: &str) -> PyResult<UsageMap> {
    let items: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = if let Ok(d) = obj.cast::<PyDict>() {
        d.iter().collect()
    } else {
        let m = obj.cast::<PyMapping>()?;
        m.items()?
            .iter()
            .map(|kv| kv.extract())
            .collect::<PyResult<_>>()?
    };
    let mut out = Vec::with_capacity(items.len());
    for (k, v) in items {
        let Ok(key) = k.cast::<PyString>() else {
            let at = if path.is_empty() {
                "the top level".to_string()
            } else {
                format!("'{path}'")
            };
            return Err(PyTypeError::new_err(format!(
                "usage keys must be strings, got {} at {at}",
                type_name(&k)
            )));
        };
        let key = key.to_str()?.to_string();
        let p = path_of(path, &key);
        out.push((key, to_value(&v, &p)?));
    }
    Ok(out)
}

fn to_value(v: &Bound<'_, PyAny>, path: &str) -> PyResult<UsageValue> {
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
        Ok(UsageValue::Str(s.to_str()?.to_string()))
    } else if v.is_instance_of::<PyDict>() || v.cast::<PyMapping>().is_ok() {
        Ok(UsageValue::Map(to_map(v, path)?))
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

    fn add(&mut self, usage: &Bound<'_, PyAny>) -> PyResult<()> {
        if usage.is_none() {
            return Ok(());
        }
        if !(usage.is_instance_of::<PyDict>() || usage.cast::<PyMapping>().is_ok()) {
            return Err(PyTypeError::new_err(format!(
                "usage must be a mapping or None, got {}",
                type_name(usage)
            )));
        }
        let map = to_map(usage, "")?;
        self.inner.add(Some(map)).map_err(PyErr::from)
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
