//! The `jsonschema` crate's view of the Python objects `validate_json` parsed: the compiled schema
//! validates the very dict it returns, so the text is parsed once (by jiter, straight to Python).
//!
//! Only for trees [`plain`] accepts (exact dict/list/str/int/float/bool/None, every `int` within the
//! signed 64-bit range, every `float` finite): for those, each node reads as the `serde_json::Value`
//! the binding's `to_value` makes of it (numbers are that `Number`), so results and error texts are
//! those of validating the converted value. Anything else takes the converting path.

use std::borrow::Cow;

use jsonschema::json::{cmp, Array, Json, Node, NodeIdentity, Object};
use jsonschema::types::JsonType;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use pyo3::types::{PyDictMethods, PyListMethods};
use serde_json::{Number, Value};

/// Whether every number in `value` is an exact `int` within `i64` or a finite exact `float`, and
/// every container an exact `dict` (with `str` keys) or `list`: what [`Objects`] may validate. Other
/// values (what jiter never builds from strict JSON) answer `false`, as do bigger integers.
pub(crate) fn plain(value: &Bound<'_, PyAny>) -> bool {
    if value.is_exact_instance_of::<PyString>()
        || value.is_none()
        || value.is_exact_instance_of::<PyBool>()
    {
        return true;
    }
    if let Ok(d) = value.cast_exact::<PyDict>() {
        return d
            .iter()
            .all(|(k, v)| k.is_exact_instance_of::<PyString>() && plain(&v));
    }
    if let Ok(l) = value.cast_exact::<PyList>() {
        return l.iter().all(|v| plain(&v));
    }
    if value.is_exact_instance_of::<PyInt>() {
        return value.extract::<i64>().is_ok();
    }
    value
        .cast_exact::<PyFloat>()
        .is_ok_and(|f| f.value().is_finite())
}

/// The representation: nodes are Python objects of a [`plain`] tree.
pub struct Objects;

impl Json for Objects {
    type Node<'py> = PyNode<'py>;
    type PreparedKey = Py<PyString>;
    type StringBuffer = ();

    // A tree parsed from JSON text has no cycles.
    const ACYCLIC: bool = true;

    fn prepare_key(key: &str) -> Py<PyString> {
        Python::attach(|py| PyString::intern(py, key).unbind())
    }

    fn with_string_node<T>((): &mut (), string: &str, f: impl FnOnce(PyNode<'_>) -> T) -> T {
        Python::attach(|py| f(PyNode::new(PyString::new(py, string).into_any())))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Str,
    Int,
    Float,
    Bool,
    Null,
    Dict,
    List,
}

/// One value of a [`plain`] tree, its kind read once.
#[derive(Clone)]
pub struct PyNode<'py> {
    value: Bound<'py, PyAny>,
    kind: Kind,
}

impl<'py> PyNode<'py> {
    pub(crate) fn new(value: Bound<'py, PyAny>) -> Self {
        let kind = if value.is_exact_instance_of::<PyString>() {
            Kind::Str
        } else if value.is_exact_instance_of::<PyDict>() {
            Kind::Dict
        } else if value.is_exact_instance_of::<PyList>() {
            Kind::List
        } else if value.is_exact_instance_of::<PyInt>() {
            Kind::Int
        } else if value.is_exact_instance_of::<PyFloat>() {
            Kind::Float
        } else if value.is_exact_instance_of::<PyBool>() {
            Kind::Bool
        } else {
            Kind::Null
        };
        PyNode { value, kind }
    }

    fn str(&self) -> Option<&str> {
        match self.kind {
            Kind::Str => self.value.cast::<PyString>().ok()?.to_str().ok(),
            _ => None,
        }
    }
}

impl<'py> Node<'py, Objects> for PyNode<'py> {
    type Object = PyObject<'py>;
    type Array = PyArray<'py>;
    type Number = Number;

    fn as_object(&self) -> Option<PyObject<'py>> {
        match self.kind {
            Kind::Dict => self
                .value
                .cast::<PyDict>()
                .ok()
                .map(|d| PyObject(d.clone())),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<PyArray<'py>> {
        match self.kind {
            Kind::List => self.value.cast::<PyList>().ok().map(|l| PyArray(l.clone())),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'py, str>> {
        self.str().map(|s| Cow::Owned(s.to_owned()))
    }

    fn as_number(&self) -> Option<Number> {
        match self.kind {
            Kind::Int => self
                .value
                .extract::<i64>()
                .map(Number::from)
                .or_else(|_| self.value.extract::<u64>().map(Number::from))
                .ok(),
            Kind::Float => Number::from_f64(self.value.cast::<PyFloat>().ok()?.value()),
            _ => None,
        }
    }

    fn is_number(&self) -> bool {
        matches!(self.kind, Kind::Int | Kind::Float)
    }

    fn as_boolean(&self) -> Option<bool> {
        match self.kind {
            Kind::Bool => self.value.cast::<PyBool>().ok().map(|b| b.is_true()),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        self.kind == Kind::Null
    }

    fn json_type(&self) -> JsonType {
        match self.kind {
            Kind::Str => JsonType::String,
            Kind::Int | Kind::Float => JsonType::Number,
            Kind::Bool => JsonType::Boolean,
            Kind::Null => JsonType::Null,
            Kind::Dict => JsonType::Object,
            Kind::List => JsonType::Array,
        }
    }

    fn string_length(&self) -> Option<u64> {
        // A `str` of valid Unicode (what jiter builds) has one code point per character.
        self.str().map(|s| s.chars().count() as u64)
    }

    fn equals_value(&self, expected: &Value) -> bool {
        match (self.kind, expected) {
            (Kind::Str, Value::String(s)) => self.str() == Some(s.as_str()),
            (Kind::Str, _) => false,
            _ => cmp::equal(&self.to_value(), expected),
        }
    }

    fn to_value(&self) -> Cow<'py, Value> {
        // The conversion every other entry point validates; a plain tree always converts.
        Cow::Owned(super::to_value(&self.value, 0).unwrap_or(Value::Null))
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(self.value.as_ptr() as usize))
    }
}

/// A member name (always a `str` in a [`plain`] tree).
pub struct PyKey<'py>(Bound<'py, PyAny>);

impl AsRef<str> for PyKey<'_> {
    fn as_ref(&self) -> &str {
        self.0
            .cast::<PyString>()
            .ok()
            .and_then(|s| s.to_str().ok())
            .unwrap_or_default()
    }
}

impl<'py> From<PyKey<'py>> for Cow<'py, str> {
    fn from(key: PyKey<'py>) -> Self {
        Cow::Owned(key.as_ref().to_owned())
    }
}

type Members<'py> = std::iter::Map<
    pyo3::types::iter::BoundDictIterator<'py>,
    fn((Bound<'py, PyAny>, Bound<'py, PyAny>)) -> (PyKey<'py>, PyNode<'py>),
>;

fn member<'py>((key, value): (Bound<'py, PyAny>, Bound<'py, PyAny>)) -> (PyKey<'py>, PyNode<'py>) {
    (PyKey(key), PyNode::new(value))
}

/// A `dict` node.
pub struct PyObject<'py>(Bound<'py, PyDict>);

impl<'py> Object<'py, Objects> for PyObject<'py> {
    type Node = PyNode<'py>;
    type MemberName = PyKey<'py>;
    type MembersIter = Members<'py>;

    fn len(&self) -> usize {
        self.0.len()
    }

    fn get(&self, key: &Py<PyString>) -> Option<PyNode<'py>> {
        self.0
            .get_item(key.bind(self.0.py()))
            .ok()
            .flatten()
            .map(PyNode::new)
    }

    fn members(&self) -> Members<'py> {
        self.0.clone().into_iter().map(member)
    }
}

/// A `list` node.
pub struct PyArray<'py>(Bound<'py, PyList>);

impl<'py> Array<'py, Objects> for PyArray<'py> {
    type Node = PyNode<'py>;
    type ElementsIter = std::iter::Map<
        pyo3::types::iter::BoundListIterator<'py>,
        fn(Bound<'py, PyAny>) -> PyNode<'py>,
    >;

    fn len(&self) -> usize {
        self.0.len()
    }

    fn elements(&self) -> Self::ElementsIter {
        self.0.clone().into_iter().map(PyNode::new)
    }
}
