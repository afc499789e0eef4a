//! Schema functions and `SchemaValidator` for Python: Python JSON values <-> [`serde_json::Value`].

use pyo3::exceptions::{PyTypeError, PyUnicodeEncodeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple, PyType,
};
use serde_json::{Map, Number, Value};

use crate::schema::{self, dialect, validate, MAX_DEPTH};

mod objects;
mod plan;

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

/// A Python JSON value (dict/Mapping, list/tuple, str, int, float, bool, None) -> `Value`.
pub(crate) fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "JSON value nested deeper than {MAX_DEPTH} levels"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::Number(u.into()));
        }
        return Err(PyValueError::new_err(
            "integer out of the 64-bit range cannot be used in a JSON Schema value",
        ));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| PyValueError::new_err("NaN and infinity are not JSON values"));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            map.insert(key_of(&k)?, to_value(&v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for item in obj.try_iter()? {
            out.push(to_value(&item?, depth + 1)?);
        }
        return Ok(Value::Array(out));
    }
    if let Ok(m) = obj.cast::<PyMapping>() {
        let mut map = Map::new();
        for item in m.items()?.iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            map.insert(key_of(&k)?, to_value(&v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    Err(PyTypeError::new_err(format!(
        "{} is not a JSON value (expected dict, list, str, int, float, bool or None)",
        type_name(obj)
    )))
}

/// [`to_value`] of a whole `what` (`"schema"`, `"instance"`, `"root_defs"`): a string or key holding a lone
/// surrogate (which UTF-8, so JSON text, cannot carry) is refused with a `ValueError` naming its JSON pointer
/// (twin: `toolweave._reference.schema.value._json_value`).
fn value_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    to_value(obj, 0).map_err(|e| {
        if e.is_instance_of::<PyUnicodeEncodeError>(obj.py()) {
            let mut path = Vec::new();
            if let Some(found) = find_surrogate(obj, &mut path, 0) {
                return PyValueError::new_err(surrogate_message(&found, &path.concat(), what));
            }
        }
        e
    })
}

/// A lone surrogate [`find_surrogate`] found: in a string value, or in a key of an object.
enum Surrogate {
    Value(u32),
    Key(u32),
}

fn surrogate_message(found: &Surrogate, pointer: &str, what: &str) -> String {
    let (code, place) = match found {
        Surrogate::Value(code) => (code, format!("the {what} string")),
        Surrogate::Key(code) => (code, format!("a key of the {what} object")),
    };
    format!(
        "lone surrogate U+{code:04X} in {place} at JSON pointer \"{pointer}\" (JSON text cannot carry it)"
    )
}

/// The first lone surrogate in `obj`, in [`to_value`]'s order; `path` ends as the pointer's segments
/// (`/`-prefixed, RFC 6901 escaped) of the string, or of the object whose key holds it.
fn find_surrogate(
    obj: &Bound<'_, PyAny>,
    path: &mut Vec<String>,
    depth: usize,
) -> Option<Surrogate> {
    if depth > MAX_DEPTH {
        return None;
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return lone_surrogate(s).map(Surrogate::Value);
    }
    let members: Vec<(Option<Bound<'_, PyAny>>, Bound<'_, PyAny>)> =
        if let Ok(d) = obj.cast::<PyDict>() {
            d.iter().map(|(k, v)| (Some(k), v)).collect()
        } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
            let items = obj.try_iter().ok()?.collect::<PyResult<Vec<_>>>().ok()?;
            items.into_iter().map(|v| (None, v)).collect()
        } else if let Ok(m) = obj.cast::<PyMapping>() {
            let items = m.items().ok()?;
            let pairs = items.iter().map(|item| item.extract());
            let pairs = pairs.collect::<PyResult<Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)>>>();
            pairs.ok()?.into_iter().map(|(k, v)| (Some(k), v)).collect()
        } else {
            return None;
        };
    for (i, (key, v)) in members.into_iter().enumerate() {
        let name = match key {
            None => i.to_string(),
            Some(k) => {
                let k = k.cast_into::<PyString>().ok()?;
                if let Some(code) = lone_surrogate(&k) {
                    return Some(Surrogate::Key(code));
                }
                k.to_str().ok()?.replace('~', "~0").replace('/', "~1")
            }
        };
        path.push(format!("/{name}"));
        if let Some(found) = find_surrogate(&v, path, depth + 1) {
            return Some(found);
        }
        path.pop();
    }
    None
}

/// The first surrogate code point of `s`, if UTF-8 cannot encode it (every surrogate in a `str` is lone).
fn lone_surrogate(s: &Bound<'_, PyString>) -> Option<u32> {
    if s.to_str().is_ok() {
        return None;
    }
    let units = s
        .call_method1(intern!(s.py(), "encode"), ("utf-32-le", "surrogatepass"))
        .ok()?;
    let bytes = units.cast::<PyBytes>().ok()?.as_bytes().to_vec();
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .find(|c| (0xD800..=0xDFFF).contains(c))
}

fn key_of(k: &Bound<'_, PyAny>) -> PyResult<String> {
    match k.cast::<PyString>() {
        Ok(s) => Ok(s.to_str()?.to_owned()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "JSON object keys must be str, not {}",
            type_name(k)
        ))),
    }
}

/// `Value` -> Python (dict, list, str, int, float, bool, None).
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

fn to_object(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Map<String, Value>> {
    match value_of(obj, what)? {
        Value::Object(map) => Ok(map),
        _ => Err(PyTypeError::new_err(format!(
            "{what} must be a mapping, not {}",
            type_name(obj)
        ))),
    }
}

/// Move `schema['$defs']` into `root_defs`; returns `(schema_without_defs, new_root_defs)`.
#[pyfunction]
pub fn hoist_defs_to_root<'py>(
    py: Python<'py>,
    schema: &Bound<'py, PyAny>,
    root_defs: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let value = value_of(schema, "schema")?;
    let mut defs = to_object(root_defs, "root_defs")?;
    let out = schema::hoist_defs_to_root(value, &mut defs)?;
    Ok((to_py(py, &out)?, to_py(py, &Value::Object(defs))?))
}

/// A copy of `schema` with `additionalProperties: false` on every object node with `properties`.
#[pyfunction]
pub fn forbid_additional_properties<'py>(
    py: Python<'py>,
    schema: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut value = value_of(schema, "schema")?;
    schema::forbid_additional_properties(&mut value)?;
    to_py(py, &value)
}

/// A copy of `schema` with every `type` value upper-cased.
#[pyfunction]
pub fn upper_case_type_values<'py>(
    py: Python<'py>,
    schema: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut value = value_of(schema, "schema")?;
    schema::upper_case_type_values(&mut value)?;
    to_py(py, &value)
}

/// `schema` rewritten for a provider dialect.
#[pyfunction]
pub fn to_dialect<'py>(
    py: Python<'py>,
    schema: &Bound<'py, PyAny>,
    dialect: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let name = dialect.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!("dialect must be a str, not {}", type_name(dialect)))
    })?;
    let which = dialect::Dialect::parse(name.to_str()?)?;
    let value = value_of(schema, "schema")?;
    let out = py.detach(|| dialect::to_dialect(&value, which))?;
    to_py(py, &out)
}

/// `validate_json`'s parse: `parse_arguments` of a `str` or `bytes`.
/// `data` (`str` or `bytes`) parsed as `parse_arguments` does in strict mode, with whether the tree is
/// what [`objects::plain`] accepts (told by the parse: see [`super::json::parse_strict_plain`]).
fn parse_text<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyDict>, bool)> {
    super::json::with_text(data, |t| super::json::parse_strict_plain(py, t)).unwrap_or_else(|| {
        Err(PyTypeError::new_err(format!(
            "validate_json() expects str or bytes, got {}",
            type_name(data)
        )))
    })
}

/// One dict per issue: `pointer`, `keyword`, `message` (the keys interned: built per invalid call).
fn issue_dicts<'py>(py: Python<'py>, issues: &[validate::Issue]) -> PyResult<Bound<'py, PyList>> {
    let errors = PyList::empty(py);
    for issue in issues {
        let d = PyDict::new(py);
        d.set_item(intern!(py, "pointer"), &issue.pointer)?;
        d.set_item(intern!(py, "keyword"), &issue.keyword)?;
        d.set_item(intern!(py, "message"), &issue.message)?;
        errors.append(d)?;
    }
    Ok(errors)
}

static VALIDATION_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn validation_error(py: Python<'_>, issues: &[validate::Issue]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = VALIDATION_ERROR.get_or_try_init(py, || -> PyResult<Py<PyType>> {
            Ok(py
                .import("toolweave.exceptions")?
                .getattr("SchemaValidationError")?
                .cast_into::<PyType>()?
                .unbind())
        })?;
        let errors = issue_dicts(py, issues)?;
        let message = issues
            .iter()
            .map(|i| {
                let at = if i.pointer.is_empty() {
                    "/"
                } else {
                    &i.pointer
                };
                format!("{at}: {}", i.message)
            })
            .collect::<Vec<_>>()
            .join("; ");
        Ok(PyErr::from_value(cls.bind(py).call1((message, errors))?))
    };
    build().unwrap_or_else(|e| e)
}

/// A parsed value and the schema's verdict: the value when valid, else its issues.
type Judged<'py> = Result<Bound<'py, PyAny>, Vec<validate::Issue>>;

/// A compiled JSON Schema (`jsonschema` crate; no network or file access for `$ref`).
#[pyclass(module = "toolweave._core", frozen)]
pub struct SchemaValidator {
    inner: validate::Validator,
    /// The same schema over the Python objects `validate_json` parsed, compiled on first use
    /// (`None`: it did not compile, and the converting path answers).
    objects: std::sync::OnceLock<Option<validate::Validator<objects::Objects>>>,
    /// The accept plan of the schema, compiled on first use (`None`: the schema is outside the
    /// planned subset, and the crate answers alone).
    plan: PyOnceLock<Option<plan::Plan>>,
    schema: Value,
}

impl SchemaValidator {
    fn plan(&self, py: Python<'_>) -> Option<&plan::Plan> {
        self.plan
            .get_or_init(py, || plan::Plan::compile(py, &self.schema))
            .as_ref()
    }

    fn verdict(&self, py: Python<'_>, parsed: &Bound<'_, PyAny>) -> plan::Verdict {
        self.plan(py)
            .map_or(plan::Verdict::Unsure, |p| p.check(parsed))
    }

    /// The end of `validate_json` for a parsed dict (`plain`: as [`objects::plain`] finds it): the
    /// dict when valid, else the crate's issues. Accepted at once on the plan's `Accept`, else the
    /// crate decides (straight to its error list on `Reject`: no error means valid).
    fn validate_parsed<'py>(
        &self,
        parsed: Bound<'py, PyAny>,
        plain: bool,
        int64: bool,
        verdict: plan::Verdict,
    ) -> PyResult<Judged<'py>> {
        if verdict == plan::Verdict::Accept {
            return Ok(Ok(parsed));
        }
        // Parsed once: a plain tree (every int within i64, so `int64` has nothing to find) is
        // validated as it is; other numbers go through the conversion, which refuses or keeps them.
        if plain {
            if let Some(v) = self
                .objects
                .get_or_init(|| validate::Validator::new(&self.schema).ok())
            {
                let node = objects::PyNode::new(parsed.clone());
                if verdict == plan::Verdict::Unsure && v.is_valid(node.clone()) {
                    return Ok(Ok(parsed));
                }
                let issues = v.issues(node);
                return Ok(if issues.is_empty() {
                    Ok(parsed)
                } else {
                    Err(issues)
                });
            }
        }
        let value = value_of(&parsed, "instance")?;
        if int64 && validate::beyond_int64(&value) {
            return Err(PyValueError::new_err(validate::BEYOND_INT64));
        }
        Ok(if self.inner.is_valid(&value) {
            Ok(parsed)
        } else {
            Err(self.inner.issues(&value))
        })
    }

    /// `validate_json`'s work, with the accept plan's verdict first when `planned` (else the crate alone).
    fn parse_and_validate<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        int64: bool,
        planned: bool,
    ) -> PyResult<Judged<'py>> {
        let (parsed, plain) = parse_text(py, data)?;
        let verdict = if planned {
            self.verdict(py, parsed.as_any())
        } else {
            plan::Verdict::Unsure
        };
        self.validate_parsed(parsed.into_any(), plain, int64, verdict)
    }

    fn check(&self, py: Python<'_>, value: &Value) -> PyResult<()> {
        if self.inner.is_valid(value) {
            return Ok(());
        }
        Err(validation_error(py, &self.inner.issues(value)))
    }
}

#[pymethods]
impl SchemaValidator {
    #[new]
    fn new(schema: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value = value_of(schema, "schema")?;
        if !value.is_object() && !value.is_boolean() {
            return Err(PyTypeError::new_err(format!(
                "schema must be a mapping or a bool, not {}",
                type_name(schema)
            )));
        }
        Ok(SchemaValidator {
            inner: validate::Validator::new(&value)?,
            objects: std::sync::OnceLock::new(),
            plan: PyOnceLock::new(),
            schema: value,
        })
    }

    /// A copy of the schema.
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.schema)
    }

    fn is_valid(&self, instance: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.is_valid(&value_of(instance, "instance")?))
    }

    fn errors<'py>(
        &self,
        py: Python<'py>,
        instance: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let value = value_of(instance, "instance")?;
        issue_dicts(py, &self.inner.issues(&value))
    }

    fn validate(&self, py: Python<'_>, instance: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check(py, &value_of(instance, "instance")?)
    }

    /// Parse `data` as `parse_arguments` does (a JSON object, blank = `{}`), check its numbers as
    /// the conversion to a JSON Schema value does (with `int64`, also none above `i64::MAX`), and
    /// validate it; returns the parsed dict.
    #[pyo3(signature = (data, *, int64 = false))]
    fn validate_json<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        int64: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.parse_and_validate(py, data, int64, true)?
            .map_err(|issues| validation_error(py, &issues))
    }

    /// `validate_json` that returns the failures (the list `SchemaValidationError.errors` would hold)
    /// instead of raising them: the parsed dict when valid, else that list (never empty).
    #[pyo3(signature = (data, *, int64 = false))]
    fn check_json<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        int64: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self.parse_and_validate(py, data, int64, true)? {
            Ok(parsed) => Ok(parsed),
            Err(issues) => Ok(issue_dicts(py, &issues)?.into_any()),
        }
    }

    /// `validate_json` without the accept plan: the crate alone (for tests comparing both).
    #[pyo3(signature = (data, *, int64 = false))]
    fn _validate_json_crate<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        int64: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.parse_and_validate(py, data, int64, false)?
            .map_err(|issues| validation_error(py, &issues))
    }

    /// The accept plan's verdict on a parsed value (`'accept'`, `'reject'` or `'unsure'`), or
    /// `None` when the schema has no plan (for tests).
    fn _plan_verdict(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> Option<&'static str> {
        self.plan(py).map(|p| p.check(value).name())
    }

    fn __repr__(&self) -> String {
        let text = self.schema.to_string();
        let short: String = text.chars().take(60).collect();
        if short.len() < text.len() {
            format!("SchemaValidator({short}...)")
        } else {
            format!("SchemaValidator({short})")
        }
    }
}

/// Deepest container level [`numbers_fine`] looks into (deeper: `False`, the caller looks closer).
const NUMBERS_DEPTH: i32 = 32;

/// Whether every number inside `value` is surely fine for a tool: each exact `int` within the
/// signed 64-bit range, each exact `float` finite, looking into exact dicts (keys exact `str`),
/// lists and tuples, instances of `model_type` (their `__dict__` values and `__pydantic_extra__`),
/// with `str`, `bool`, `None` and instances of `enum_type` fine as they are. `False` means "look
/// closer" (anything else, or containers nested deeper than 32 levels), not "invalid". The
/// pure-Python twin is `toolweave._reference.numbers.numbers_fine`.
#[pyfunction]
pub fn numbers_fine(
    value: &Bound<'_, PyAny>,
    model_type: &Bound<'_, PyType>,
    enum_type: &Bound<'_, PyType>,
) -> PyResult<bool> {
    let types = (model_type, enum_type);
    all_fine(std::iter::once(Ok(value.clone())), -1, types)
}

type Kinds<'a, 'py> = (&'a Bound<'py, PyType>, &'a Bound<'py, PyType>);

fn all_fine<'py>(
    items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
    depth: i32,
    types: Kinds<'_, 'py>,
) -> PyResult<bool> {
    for item in items {
        let item = item?;
        if item.is_none()
            || item.is_exact_instance_of::<PyString>()
            || item.is_exact_instance_of::<PyBool>()
        {
            continue;
        }
        if item.is_exact_instance_of::<PyInt>() {
            if item.extract::<i64>().is_err() {
                return Ok(false);
            }
            continue;
        }
        if let Ok(f) = item.cast_exact::<PyFloat>() {
            if !f.value().is_finite() {
                return Ok(false);
            }
            continue;
        }
        if depth >= NUMBERS_DEPTH || !container_fine(&item, depth + 1, types)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn container_fine(item: &Bound<'_, PyAny>, depth: i32, types: Kinds<'_, '_>) -> PyResult<bool> {
    if let Ok(d) = item.cast_exact::<PyDict>() {
        return dict_fine(d, true, depth, types);
    }
    if let Ok(l) = item.cast_exact::<PyList>() {
        return all_fine(l.iter().map(Ok), depth, types);
    }
    if let Ok(t) = item.cast_exact::<PyTuple>() {
        return all_fine(t.iter().map(Ok), depth, types);
    }
    if item.is_instance(types.0)? {
        let fields = item.getattr(intern!(item.py(), "__dict__"))?;
        if !dict_fine(fields.cast::<PyDict>()?, false, depth, types)? {
            return Ok(false);
        }
        let extra = item.getattr(intern!(item.py(), "__pydantic_extra__"))?;
        return match extra.cast::<PyDict>() {
            Ok(e) => dict_fine(e, false, depth, types),
            Err(_) => Ok(!extra.is_truthy()?),
        };
    }
    item.is_instance(types.1)
}

/// [`all_fine`] of the values of `d`; with `str_keys`, each key must be an exact `str` too.
fn dict_fine(
    d: &Bound<'_, PyDict>,
    str_keys: bool,
    depth: i32,
    types: Kinds<'_, '_>,
) -> PyResult<bool> {
    for (key, value) in d.iter() {
        if str_keys && !key.is_exact_instance_of::<PyString>() {
            return Ok(false);
        }
        if !all_fine(std::iter::once(Ok(value)), depth, types)? {
            return Ok(false);
        }
    }
    Ok(true)
}
