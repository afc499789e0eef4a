//! `ArgumentDecoder`: tool arguments parsed, validated and converted in one step against a plan compiled once
//! from a pydantic core schema, with exactly the result of pydantic-core's `validate_json` or no answer.
//!
//! Plans whose result touches nothing but the call's own objects (no `default_factory`, no deep copy running
//! user code, no model class with `__del__`: `one_pass`) are decoded by a [`Reader`] driven by the plan while
//! reading the text: each value is read straight into its final object (a str from the parser's string cache,
//! an int, a float, an enum member, a list, a typed-dict dict in schema order, a model instance), and the first
//! value the plan is not certain of stops the read. Other plans keep two phases: the text is read by the strict
//! one-pass parser ([`onepass::strict`], as `parse_arguments` reads it), CHECK walks the parsed objects without
//! side effects, and only when every value is certain, BUILD makes the result (defaults and factories). Any
//! doubt (a value pydantic's lax mode might coerce, a repeated key where pydantic would validate both values, a
//! number outside the numbers rule) gives `None`, and the caller runs pydantic. Both ways decide as the parse
//! then CHECK: a text is accepted exactly as [`onepass::strict`] accepts it (a repeated key keeps its last
//! value), values nested as deep. The pure-Python twin, with the same decisions, is
//! `toolweave._reference.decode`.
//!
//! `errors(text)` ([`judge`]) lists, without pydantic, the errors `validate_json` raises for arguments it surely
//! refuses, so an invalid call is answered without running it either.

use std::borrow::Cow;
use std::collections::HashMap;

use jiter::{NumberAny, NumberInt};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyType};

use super::json::PyValues;
use super::model::{set_of, ModelClass};
use super::schema::numbers_fine;
use crate::json::onepass::{self, Sink, Top};

mod judge;

/// Deepest container nesting decoded (the top-level object is depth 0); deeper values answer None.
const MAX_DEPTH: usize = 100;
/// Plan nodes one CHECK path may pass through (containers, nullables, definition refs): hostile plans stop here.
const MAX_STEPS: usize = 4_000;
/// Schema nesting compiled (deeper: no plan), and schema nodes one plan may hold.
const MAX_SCHEMA_DEPTH: usize = 400;
const MAX_NODES: usize = 100_000;

/// How a typed dict or model treats keys that are not fields (pydantic-core's `ExtraBehavior`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Extra {
    Forbid,
    Ignore,
    /// Typed dicts only, without `extras_schema`: extra values are kept as parsed, after the fields.
    Allow,
}

/// What a missing field becomes (pydantic-core's `WithDefaultValidator`).
enum Default {
    /// No default: a required field is missing (None), an optional typed-dict field is left out.
    Absent,
    /// The default itself, deep-copied first when it is not hashable (`copy_default` in `with_default.rs`).
    Value(Py<PyAny>, bool),
    /// `default_factory()`, its result taken as it is (called once per use, as pydantic calls it; a typed dict's
    /// result is left to the caller's numbers rule, see [`ArgumentDecoder::typed_dict_factories`]).
    Factory(Py<PyAny>),
}

struct Field {
    /// The output key (the field name).
    name: Py<PyString>,
    /// The JSON key (the `validation_alias`, else the name).
    key: Py<PyString>,
    key_str: Box<str>,
    /// The JSON key is not the name (errors under it are located by either, as the config says).
    renamed: bool,
    node: usize,
    required: bool,
    default: Default,
}

/// Fields of a typed dict or of `model-fields`.
struct Fields {
    fields: Vec<Field>,
    extra: Extra,
    /// Every field's name (a model's fields set when every field is given).
    names: Py<PyFrozenSet>,
}

/// `ge`/`gt`/`le`/`lt` of a number node.
#[derive(Default)]
struct Bounds<T> {
    ge: Option<T>,
    gt: Option<T>,
    le: Option<T>,
    lt: Option<T>,
}

impl<T: PartialOrd + Copy> Bounds<T> {
    fn hold(&self, v: T) -> bool {
        self.ge.is_none_or(|b| v >= b)
            && self.gt.is_none_or(|b| v > b)
            && self.le.is_none_or(|b| v <= b)
            && self.lt.is_none_or(|b| v < b)
    }
}

/// A `literal` or `enum` table: a JSON scalar (by JSON type and value) -> the object pydantic returns for it.
#[derive(Default)]
struct Table {
    strs: Keys<String>,
    ints: Keys<i64>,
    bools: [Option<Py<PyAny>>; 2],
    none: Option<Py<PyAny>>,
}

/// Scalars -> objects: a short list searched in order (up to 8: faster than hashing), else a hash map.
enum Keys<K> {
    Few(Vec<(K, Py<PyAny>)>),
    Many(HashMap<K, Py<PyAny>>),
}

impl<K> std::default::Default for Keys<K> {
    fn default() -> Self {
        Keys::Few(Vec::new())
    }
}

impl<K: Eq + std::hash::Hash> Keys<K> {
    /// `self[k] = v` (a later value replaces an earlier one, as a dict assignment).
    fn insert(&mut self, k: K, v: Py<PyAny>) {
        match self {
            Keys::Few(list) => {
                if let Some(slot) = list.iter_mut().find(|(x, _)| *x == k) {
                    slot.1 = v;
                } else if list.len() < 8 {
                    list.push((k, v));
                } else {
                    let mut map: HashMap<K, Py<PyAny>> = list.drain(..).collect();
                    map.insert(k, v);
                    *self = Keys::Many(map);
                }
            }
            Keys::Many(map) => {
                map.insert(k, v);
            }
        }
    }

    fn get<Q>(&self, k: &Q) -> Option<&Py<PyAny>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + std::hash::Hash + ?Sized,
    {
        match self {
            Keys::Few(list) => list.iter().find(|(x, _)| x.borrow() == k).map(|(_, v)| v),
            Keys::Many(map) => map.get(k),
        }
    }
}

enum Node {
    Str(usize, Option<usize>),
    Int(Bounds<i128>, Option<i128>),
    Float(Bounds<f64>),
    Bool,
    Null,
    Any,
    Nullable(usize),
    Lookup(Table),
    List(usize, usize, Option<usize>),
    Dict(usize, usize, Option<usize>),
    TypedDict(Fields),
    Model(ModelClass, Fields),
    /// A `definition-ref` (its definition's node).
    Ref(usize),
}

/// Tool arguments parsed, validated and converted in one step, as pydantic-core's `validate_json` gives them.
///
/// `ArgumentDecoder.build(core_schema)` compiles `TypeAdapter(X).core_schema` (a `typed-dict` or `model`, possibly
/// under `definitions`) once; it returns None (never raises) when any reachable node, key or config is outside the
/// supported subset: str, int, float, bool, none, nullable, any, literal, str/int enum, list, dict with str keys,
/// typed-dict, model over model-fields, default (as a field's schema), definitions. `decode(text)` returns what
/// `validate_json(text)` returns (same types, the enum members themselves, model instances built as pydantic-core's
/// `ModelValidator` builds them: `object.__new__`, then `__dict__`, `__pydantic_extra__`, `__pydantic_private__`,
/// `__pydantic_fields_set__`) when pydantic would accept `text` and every number in the result (but a
/// `default_factory`'s, see `typed_dict_factories`) is an int within signed 64 bits or a finite float; otherwise None (not a str, not a strict JSON object, a value lax mode might
/// coerce, containers nested deeper than 100, anything uncertain). It raises only what a `default_factory` (or
/// `copy.deepcopy` of an unhashable default) raises. Immutable; safe from many threads. The pure-Python twin is
/// `toolweave._reference.decode.ArgumentDecoder`.
#[pyclass(frozen, module = "toolweave._core")]
pub struct ArgumentDecoder {
    nodes: Vec<Node>,
    /// Per node: BUILD gives back the parsed value unchanged.
    same: Vec<bool>,
    root: usize,
    /// The plan has a `dict` whose values are validated: a repeated key then answers None (pydantic validates
    /// each pair of the text, the parser keeps the last).
    counts_pairs: bool,
    /// A typed dict of the plan has a field with a `default_factory` (see the `typed_dict_factories` getter).
    typed_dict_factories: bool,
    /// BUILD has no effect beyond this call's own objects (no `default_factory`, deep copies of plain data only,
    /// no model class with `__del__`): the [`Reader`] decodes while reading, a failure halfway is unseen.
    one_pass: bool,
    deepcopy: Py<PyAny>,
}

/// Why a value was not given.
enum Stop {
    /// Not certain (a value pydantic's lax mode might coerce, a missing field, ...); the [`Reader`] is past the
    /// value.
    Unsure,
    /// Not certain, and not read: the [`Reader`] is still at its first byte (a JSON type the node never takes).
    Mismatch,
    /// No later text can make the call certain: the text is not strict JSON (or nests deeper than
    /// `parse_arguments` reads), or the plan counts pairs and a key repeats.
    Invalid,
    /// (The [`Reader`]) a member after the uncertain value may replace it: the parse-then-check path decides.
    Repeated,
    /// An error raised by a `default_factory` or `copy.deepcopy`, or by Python itself.
    Raised(PyErr),
}

impl From<PyErr> for Stop {
    fn from(e: PyErr) -> Self {
        Stop::Raised(e)
    }
}

type Built<'py> = Result<Bound<'py, PyAny>, Stop>;

#[pymethods]
impl ArgumentDecoder {
    /// The decoder of `core_schema` (a pydantic core schema mapping), or None when any reachable node, key or
    /// config is outside the supported subset, or the schema is malformed. Never raises.
    #[staticmethod]
    fn build(py: Python<'_>, core_schema: &Bound<'_, PyAny>) -> Option<ArgumentDecoder> {
        let builtins = py.import("builtins").ok()?;
        let object = builtins.getattr("object").ok()?;
        let enum_type = py
            .import("enum")
            .ok()?
            .getattr("Enum")
            .ok()?
            .cast_into::<PyType>()
            .ok()?;
        let model_type = py
            .import("pydantic")
            .ok()?
            .getattr("BaseModel")
            .ok()?
            .cast_into::<PyType>()
            .ok()?;
        let mut c = Compiler {
            py,
            nodes: Vec::new(),
            definitions: HashMap::new(),
            refs: HashMap::new(),
            queue: Vec::new(),
            counts_pairs: false,
            typed_dict_factories: false,
            object_new: object.getattr("__new__").ok()?,
            enum_type,
            model_type,
        };
        let root = c.node(core_schema, 0)?;
        while let Some((name, slot)) = c.queue.pop() {
            let definition = c.definitions.get(&name)?.clone();
            let target = c.node(&definition, 1)?;
            c.nodes[slot] = Node::Ref(target);
        }
        if !chains_end(&c.nodes) {
            return None;
        }
        Some(ArgumentDecoder {
            same: sameness(&c.nodes),
            one_pass: fusable(py, &c.nodes),
            nodes: c.nodes,
            root,
            counts_pairs: c.counts_pairs,
            typed_dict_factories: c.typed_dict_factories,
            deepcopy: py.import("copy").ok()?.getattr("deepcopy").ok()?.unbind(),
        })
    }

    /// Whether a typed dict of the plan has a field with a `default_factory`. Its result, in what `decode`
    /// returns, is not judged by the numbers rule (a model's is not judged by the tool's rule either): the caller
    /// judges the value as it judges `validate_json`'s. Judging it here would answer None after the factory ran,
    /// and pydantic would call it a second time.
    #[getter]
    fn typed_dict_factories(&self) -> bool {
        self.typed_dict_factories
    }

    /// What `validate_json(text)` returns, or None when the decoder is not certain of it (see the class).
    ///
    /// Raises only what a `default_factory` (or `copy.deepcopy` of an unhashable default) raises.
    fn decode<'py>(&self, text: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = text.py();
        let Some(t) = text
            .cast_exact::<PyString>()
            .ok()
            .and_then(|s| s.to_str().ok())
        else {
            return Ok(None);
        };
        if self.counts_pairs && (t.contains("\\u003a") || t.contains("\\u003A")) {
            return Ok(None);
        }
        let built = if self.one_pass {
            match Reader::new(self, py, t).top() {
                Err(Stop::Repeated) => self.parsed_then_built(py, t),
                read => read,
            }
        } else {
            self.parsed_then_built(py, t)
        };
        match built {
            Ok(v) => Ok(Some(v)),
            Err(Stop::Unsure | Stop::Mismatch | Stop::Invalid | Stop::Repeated) => Ok(None),
            Err(Stop::Raised(e)) => Err(e),
        }
    }

    /// The errors pydantic-core's `validate_json(text)` raises, when it surely refuses `text`, as
    /// `ValidationError.errors(include_url=False, include_context=False, include_input=False)` lists them (a
    /// `{'type', 'loc', 'msg'}` dict each); None when not certain (see `decode/judge.rs`). Never raises but
    /// MemoryError.
    fn errors<'py>(&self, text: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyList>>> {
        match text
            .cast_exact::<PyString>()
            .ok()
            .and_then(|s| s.to_str().ok())
        {
            Some(t) => self.judged(text.py(), t),
            None => Ok(None),
        }
    }
}

impl ArgumentDecoder {
    /// The decode of plans whose BUILD has effects beyond the call's own objects (a `default_factory`, a deep
    /// copy running user code, a model class with `__del__`), and of texts the [`Reader`] leaves undecided: the
    /// whole text parsed, CHECK of every value without side effects, and only then BUILD.
    fn parsed_then_built<'py>(&self, py: Python<'py>, t: &str) -> Built<'py> {
        let mut sink = Pairs {
            values: PyValues::new(py),
            repeated: false,
        };
        let parsed = onepass::strict(&mut sink, t);
        let repeated = sink.repeated;
        drop(sink);
        let Ok(Top::Object(v)) = parsed else {
            return Err(Stop::Invalid);
        };
        if self.counts_pairs && repeated {
            return Err(Stop::Invalid);
        }
        if self.check(self.root, &v, 0, &mut 0) {
            self.build_value(self.root, v)
        } else {
            Err(Stop::Unsure)
        }
    }
}

/// The decode of a one-pass plan, driven by the plan while reading the text: each value is read straight into
/// its final object (as [`PyValues`] builds the parsed values, then as BUILD makes the result), and the first
/// value the plan is not certain of stops the read. Texts are accepted exactly as [`onepass::strict`] accepts
/// them; the one case the read cannot decide, a later member with the key of one around the uncertain value
/// (the parser keeps the last of repeated keys, so it would replace that value), goes to the parse-then-check
/// path ([`Stop::Repeated`]).
struct Reader<'a, 'py> {
    dec: &'a ArgumentDecoder,
    py: Python<'py>,
    text: &'a str,
    t: &'a [u8],
    i: usize,
    /// Unescaped string content (reused).
    buf: String,
    values: PyValues<'py, 'static>,
    /// The items of the lists being read (one stack for the whole read).
    items: Vec<Bound<'py, PyAny>>,
    /// The field values of the typed dicts and models being read (one stack for the whole read).
    slots: Vec<Option<Bound<'py, PyAny>>>,
    /// Once a value is not certain: the containers around it, innermost first.
    around: Vec<Around<'a>>,
}

/// A container around the value that stopped a read.
enum Around<'a> {
    /// An object, and the key of its member holding that value.
    Object(Cow<'a, str>),
    List,
}

impl<'a, 'py> Reader<'a, 'py> {
    fn new(dec: &'a ArgumentDecoder, py: Python<'py>, text: &'a str) -> Self {
        Reader {
            dec,
            py,
            text,
            t: text.as_bytes(),
            i: 0,
            buf: String::new(),
            values: PyValues::new(py),
            // Room for most arguments at once (growing a stack step by step costs more than the read of a
            // small text).
            items: Vec::with_capacity(32),
            slots: Vec::with_capacity(32),
            around: Vec::new(),
        }
    }

    /// The whole text: one object (the root node), then only whitespace. A value not certain stops the read;
    /// when a later member may replace it ([`Self::replaced`]), [`Stop::Repeated`] hands the text to the
    /// parse-then-check path, which keeps the last of repeated keys before it judges a value.
    fn top(mut self) -> Built<'py> {
        if self.next()? != b'{' {
            return Err(Stop::Invalid);
        }
        match self.value(self.dec.root, 0, 0) {
            Ok(v) => {
                self.ws();
                if self.i < self.t.len() {
                    return Err(Stop::Invalid);
                }
                Ok(v)
            }
            Err(Stop::Unsure | Stop::Mismatch) if !self.dec.counts_pairs && self.replaced() => {
                Err(Stop::Repeated)
            }
            Err(e) => Err(e),
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.t.get(self.i) {
            self.i += 1;
        }
    }

    /// The next byte that is not whitespace (the reader moves to it); the end of the text is invalid here.
    fn next(&mut self) -> Result<u8, Stop> {
        self.ws();
        self.t.get(self.i).copied().ok_or(Stop::Invalid)
    }

    /// The string at `self.i` (its opening quote): its content, checked (escapes, surrogates).
    fn string(&mut self) -> Result<&str, Stop> {
        let from = self.i + 1;
        let (end, escaped) = onepass::string_end(self.t, from).ok_or(Stop::Invalid)?;
        self.i = end + 1;
        onepass::content(self.text, &mut self.buf, from, end, escaped).ok_or(Stop::Invalid)
    }

    /// The string at `self.i` as a Python str (from the string cache, as the parser makes it), when its length
    /// in code points is within `min ..= max`.
    fn py_string(&mut self, min: usize, max: Option<usize>) -> Built<'py> {
        let from = self.i + 1;
        let (end, escaped) = onepass::string_end(self.t, from).ok_or(Stop::Invalid)?;
        self.i = end + 1;
        let s =
            onepass::content(self.text, &mut self.buf, from, end, escaped).ok_or(Stop::Invalid)?;
        if min > 0 || max.is_some() {
            let n = s.chars().count();
            if n < min || max.is_some_and(|m| n > m) {
                return Err(Stop::Unsure);
            }
        }
        Ok(self.values.string(s))
    }

    /// A key at `self.i`, then its `:`; the reader is left at the value.
    fn key(&mut self) -> Result<Cow<'a, str>, Stop> {
        if self.t.get(self.i) != Some(&b'"') {
            return Err(Stop::Invalid);
        }
        let from = self.i + 1;
        let (end, escaped) = onepass::string_end(self.t, from).ok_or(Stop::Invalid)?;
        self.i = end + 1;
        let key = if escaped {
            let mut owned = String::new();
            onepass::content(self.text, &mut owned, from, end, true).ok_or(Stop::Invalid)?;
            Cow::Owned(owned)
        } else {
            Cow::Borrowed(self.text.get(from..end).ok_or(Stop::Invalid)?)
        };
        if self.next()? != b':' {
            return Err(Stop::Invalid);
        }
        self.i += 1;
        self.next()?;
        Ok(key)
    }

    /// The number token at `self.i`, as jiter reads it.
    fn number(&mut self) -> Result<NumberAny, Stop> {
        let from = self.i;
        self.i = onepass::number_end(self.t, from);
        let raw = self.t.get(from..self.i).ok_or(Stop::Invalid)?;
        NumberAny::from_bytes(raw, false).map_err(|_| Stop::Invalid)
    }

    /// The literal `word` at `self.i`.
    fn word(&mut self, word: &[u8]) -> Result<(), Stop> {
        if self
            .t
            .get(self.i..)
            .is_some_and(|rest| rest.starts_with(word))
        {
            self.i += word.len();
            Ok(())
        } else {
            Err(Stop::Invalid)
        }
    }

    /// The value at `self.i` against node `node`, at container depth `depth`, `steps` plan nodes down the path
    /// (CHECK's decisions and BUILD's result).
    fn value(&mut self, mut node: usize, depth: usize, mut steps: usize) -> Built<'py> {
        let dec = self.dec;
        let py = self.py;
        let b = self.next()?;
        loop {
            steps += 1;
            if steps > MAX_STEPS {
                return Err(Stop::Mismatch);
            }
            let Some(n) = dec.nodes.get(node) else {
                return Err(Stop::Mismatch);
            };
            return match (n, b) {
                (Node::Ref(j), _) => {
                    node = *j;
                    continue;
                }
                (Node::Nullable(_) | Node::Null, b'n') => {
                    self.word(b"null")?;
                    Ok(py.None().into_bound(py))
                }
                (Node::Nullable(j), _) => {
                    node = *j;
                    continue;
                }
                (Node::Str(min, max), b'"') => self.py_string(*min, *max),
                (Node::Int(bounds, multiple_of), b'-' | b'0'..=b'9') => match self.number()? {
                    NumberAny::Int(NumberInt::Int(i)) => {
                        let n = i128::from(i);
                        if bounds.hold(n) && multiple_of.is_none_or(|m| n % m == 0) {
                            self.values
                                .number(NumberAny::Int(NumberInt::Int(i)))
                                .ok_or(Stop::Invalid)
                        } else {
                            Err(Stop::Unsure)
                        }
                    }
                    _ => Err(Stop::Unsure),
                },
                (Node::Float(bounds), b'-' | b'0'..=b'9') => {
                    #[allow(clippy::cast_precision_loss)]
                    let f = match self.number()? {
                        NumberAny::Int(NumberInt::Int(i)) => i as f64,
                        NumberAny::Float(f) if f.is_finite() => f,
                        _ => return Err(Stop::Unsure),
                    };
                    if bounds.hold(f) {
                        Ok(PyFloat::new(py, f).into_any())
                    } else {
                        Err(Stop::Unsure)
                    }
                }
                (Node::Bool, b't') => {
                    self.word(b"true")?;
                    Ok(PyBool::new(py, true).to_owned().into_any())
                }
                (Node::Bool, b'f') => {
                    self.word(b"false")?;
                    Ok(PyBool::new(py, false).to_owned().into_any())
                }
                (Node::Lookup(table), _) => self.lookup(table, b),
                (Node::Any, _) => self.any(depth),
                (Node::List(j, min, max), b'[') if depth < MAX_DEPTH => {
                    let base = self.items(|r| r.value(*j, depth + 1, steps))?;
                    let n = self.items.len() - base;
                    if n < *min || max.is_some_and(|m| n > m) {
                        self.items.truncate(base);
                        return Err(Stop::Unsure);
                    }
                    Ok(PyList::new(py, self.items.drain(base..))?.into_any())
                }
                (Node::Dict(j, min, max), b'{') if depth < MAX_DEPTH => {
                    let d = self.pairs(|r| r.value(*j, depth + 1, steps))?;
                    let n = d.len();
                    if n < *min || max.is_some_and(|m| n > m) {
                        return Err(Stop::Unsure);
                    }
                    Ok(d.into_any())
                }
                (Node::TypedDict(f), b'{') if depth < MAX_DEPTH => {
                    Ok(self.fields(f, depth, steps, false)?.0.into_any())
                }
                (Node::Model(model, f), b'{') if depth < MAX_DEPTH => {
                    let (dict, names) = self.fields(f, depth, steps, true)?;
                    Ok(model.instance(&dict, names)?)
                }
                _ => Err(Stop::Mismatch),
            };
        }
    }

    /// The object a `literal` or `enum` table gives for the JSON scalar at `self.i` (first byte `b`).
    fn lookup(&mut self, table: &'a Table, b: u8) -> Built<'py> {
        let py = self.py;
        let found = match b {
            b'"' => table.strs.get(self.string()?),
            b'-' | b'0'..=b'9' => match self.number()? {
                NumberAny::Int(NumberInt::Int(i)) => table.ints.get(&i),
                _ => None,
            },
            b't' => {
                self.word(b"true")?;
                table.bools[1].as_ref()
            }
            b'f' => {
                self.word(b"false")?;
                table.bools[0].as_ref()
            }
            b'n' => {
                self.word(b"null")?;
                table.none.as_ref()
            }
            _ => return Err(Stop::Mismatch),
        };
        found.map(|x| x.bind(py).clone()).ok_or(Stop::Unsure)
    }

    /// Any JSON value, as parsed, when every number in it is an int within 64 bits or a finite float and no
    /// container in it is [`MAX_DEPTH`] deep.
    fn any(&mut self, depth: usize) -> Built<'py> {
        let py = self.py;
        match self.next()? {
            b'{' if depth < MAX_DEPTH => Ok(self.pairs(|r| r.any(depth + 1))?.into_any()),
            b'[' if depth < MAX_DEPTH => {
                let base = self.items(|r| r.any(depth + 1))?;
                Ok(PyList::new(py, self.items.drain(base..))?.into_any())
            }
            b'"' => self.py_string(0, None),
            b'-' | b'0'..=b'9' => {
                let n = self.number()?;
                let fine = match &n {
                    NumberAny::Int(NumberInt::Int(_)) => true,
                    NumberAny::Float(f) => f.is_finite(),
                    NumberAny::Int(NumberInt::BigInt(_)) => false,
                };
                if !fine {
                    return Err(Stop::Unsure);
                }
                self.values.number(n).ok_or(Stop::Invalid)
            }
            b't' => {
                self.word(b"true")?;
                Ok(self.values.boolean(true))
            }
            b'f' => {
                self.word(b"false")?;
                Ok(self.values.boolean(false))
            }
            b'n' => {
                self.word(b"null")?;
                Ok(self.values.null())
            }
            _ => Err(Stop::Mismatch),
        }
    }

    /// Check the value at `self.i` as strict JSON nested at most `json::MAX_DEPTH` deep (the top object being
    /// depth 0), building nothing (an ignored extra, or what is left of an object or list once uncertain).
    fn skip(&mut self, depth: usize) -> Result<(), Stop> {
        if depth > crate::json::MAX_DEPTH {
            return Err(Stop::Invalid);
        }
        match self.next()? {
            b'{' => {
                let mut keys: Vec<String> = Vec::new();
                self.members(|r, key| {
                    if r.dec.counts_pairs {
                        if keys.iter().any(|k| k == key) {
                            return Err(Stop::Invalid);
                        }
                        keys.push(key.to_owned());
                    }
                    r.skip(depth + 1)
                })
            }
            b'[' => {
                self.i += 1;
                if self.next()? == b']' {
                    self.i += 1;
                    return Ok(());
                }
                self.skip_items(depth)
            }
            b'"' => self.string().map(|_| ()),
            b'-' | b'0'..=b'9' => self.number().map(|_| ()),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => Err(Stop::Invalid),
        }
    }

    /// Skip the items of a list from `self.i` (an item) to its `]`.
    fn skip_items(&mut self, depth: usize) -> Result<(), Stop> {
        loop {
            self.skip(depth + 1)?;
            match self.next()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Stop::Invalid),
            }
        }
    }

    /// The items of the list at `self.i` (its `[`), each read by `item` and pushed on [`Self::items`]: the stack
    /// length before them. The first item not certain stops the read (the list is noted around it).
    fn items(&mut self, mut item: impl FnMut(&mut Self) -> Built<'py>) -> Result<usize, Stop> {
        let base = self.items.len();
        self.i += 1;
        if self.next()? == b']' {
            self.i += 1;
            return Ok(base);
        }
        loop {
            match item(self) {
                Ok(v) => self.items.push(v),
                Err(e) => {
                    if matches!(e, Stop::Unsure | Stop::Mismatch) {
                        self.around.push(Around::List);
                    }
                    return Err(e);
                }
            }
            match self.next()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Ok(base);
                }
                _ => return Err(Stop::Invalid),
            }
        }
    }

    /// The members of the object at `self.i` (its `{`) up to its `}`, each value read by `member(reader, key)`.
    /// The first member not certain stops the read (the object and that member's key are noted around it).
    fn members(
        &mut self,
        mut member: impl FnMut(&mut Self, &str) -> Result<(), Stop>,
    ) -> Result<(), Stop> {
        self.i += 1;
        if self.next()? == b'}' {
            self.i += 1;
            return Ok(());
        }
        loop {
            let key = self.key()?;
            if let Err(e) = member(self, &key) {
                if matches!(e, Stop::Unsure | Stop::Mismatch) {
                    self.around.push(Around::Object(key));
                }
                return Err(e);
            }
            match self.next()? {
                b',' => {
                    self.i += 1;
                    self.next()?;
                }
                b'}' => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Stop::Invalid),
            }
        }
    }

    /// The pairs of the object at `self.i` (its `{`) in a new dict, each value read by `read`, as the parser's
    /// dict holds them (keys from the string cache; a repeated key keeps its first place and its last value;
    /// when the plan counts pairs, a repeated key is [`Stop::Invalid`]).
    fn pairs(
        &mut self,
        mut read: impl FnMut(&mut Self) -> Built<'py>,
    ) -> Result<Bound<'py, PyDict>, Stop> {
        let mut d = self.values.object();
        self.members(|r, key| {
            let v = read(r)?;
            r.put(&mut d, key, v)
        })?;
        Ok(d)
    }

    /// `d[key] = v` as the parser's dict; a repeated key when the plan counts pairs is [`Stop::Invalid`].
    fn put(
        &mut self,
        d: &mut Bound<'py, PyDict>,
        key: &str,
        v: Bound<'py, PyAny>,
    ) -> Result<(), Stop> {
        let before = d.len();
        self.values.insert(d, key, v);
        if self.dec.counts_pairs && d.len() == before {
            Err(Stop::Invalid)
        } else {
            Ok(())
        }
    }

    /// Whether a member read after the stop may replace one that stopped it: some object around the uncertain
    /// value has, later in the text, another member with the key of the member that holds it (the parser keeps
    /// the last of repeated keys). Only the containers around it are followed, from where the read stopped, and
    /// only their keys are read; a text that turns out not to be JSON answers false (no value then).
    fn replaced(&mut self) -> bool {
        let t = self.t;
        let mut i = self.i;
        for around in &self.around {
            let mut depth = 0usize;
            let mut at_key = false;
            loop {
                let Some(&b) = t.get(i) else {
                    return false;
                };
                match b {
                    b'"' => {
                        let Some((end, escaped)) = onepass::string_end(t, i + 1) else {
                            return false;
                        };
                        if depth == 0 && at_key {
                            if let Around::Object(key) = around {
                                match onepass::content(
                                    self.text,
                                    &mut self.buf,
                                    i + 1,
                                    end,
                                    escaped,
                                ) {
                                    Some(k) if k == key => return true,
                                    Some(_) => {}
                                    None => return false,
                                }
                            }
                            at_key = false;
                        }
                        i = end + 1;
                    }
                    b'{' | b'[' => {
                        depth += 1;
                        i += 1;
                    }
                    b'}' | b']' => {
                        i += 1;
                        if depth == 0 {
                            break;
                        }
                        depth -= 1;
                    }
                    b',' => {
                        at_key = depth == 0;
                        i += 1;
                    }
                    _ => i += 1,
                }
            }
        }
        false
    }

    /// The output dict of the typed dict or model `f` at `self.i` (its `{`, at container depth `depth`) and,
    /// for a model, the set of the field names given ([`ArgumentDecoder::fill_fields`]); extras kept after
    /// the fields (`Extra::Allow`), checked as strict JSON (`Extra::Ignore`) or refused (`Extra::Forbid`).
    fn fields(
        &mut self,
        f: &'a Fields,
        depth: usize,
        steps: usize,
        model: bool,
    ) -> Result<(Bound<'py, PyDict>, Option<Bound<'py, PySet>>), Stop> {
        let dec = self.dec;
        let counts = dec.counts_pairs;
        let base = self.slots.len();
        self.slots.resize_with(base + f.fields.len(), || None);
        let mut next = 0;
        let mut extras: Option<Bound<'py, PyDict>> = None;
        let mut ignored: Vec<String> = Vec::new();
        let read = self.members(|r, key| match f.field_of(key, next) {
            Some(j) => {
                next = j + 1;
                let field = f.fields.get(j).ok_or(Stop::Mismatch)?;
                if counts && r.slots.get(base + j).is_some_and(Option::is_some) {
                    return Err(Stop::Invalid);
                }
                let v = r.value(field.node, depth + 1, steps)?;
                let slot = r.slots.get_mut(base + j).ok_or(Stop::Mismatch)?;
                *slot = Some(v);
                Ok(())
            }
            None => match f.extra {
                Extra::Forbid => Err(Stop::Mismatch),
                Extra::Ignore => {
                    if counts {
                        if ignored.iter().any(|k| k == key) {
                            return Err(Stop::Invalid);
                        }
                        ignored.push(key.to_owned());
                    }
                    r.skip(depth + 1)
                }
                Extra::Allow => {
                    let v = r.any(depth + 1)?;
                    let d = extras.get_or_insert_with(|| r.values.object());
                    r.put(d, key, v)
                }
            },
        });
        let missing = read.is_ok()
            && f.fields.iter().enumerate().any(|(j, field)| {
                field.required
                    && matches!(field.default, Default::Absent)
                    && self.slots.get(base + j).is_none_or(Option::is_none)
            });
        if read.is_err() || missing {
            self.slots.truncate(base);
            return Err(read.err().unwrap_or(Stop::Unsure));
        }
        let (out, names) = dec.fill_fields(self.py, f, self.slots.drain(base..).map(Ok), model)?;
        if let Some(extras) = extras {
            for (k, v) in extras.iter() {
                out.set_item(k, v)?;
            }
        }
        Ok((out, names))
    }
}

/// The parser's Python objects ([`PyValues`], as `parse_arguments` builds them), noting a repeated key.
struct Pairs<'py> {
    values: PyValues<'py, 'static>,
    repeated: bool,
}

impl<'py> Sink for Pairs<'py> {
    type Value = Bound<'py, PyAny>;
    type Object = (Bound<'py, PyDict>, usize);

    fn null(&mut self) -> Self::Value {
        self.values.null()
    }

    fn boolean(&mut self, b: bool) -> Self::Value {
        self.values.boolean(b)
    }

    fn string(&mut self, s: &str) -> Self::Value {
        self.values.string(s)
    }

    fn number(&mut self, n: NumberAny) -> Option<Self::Value> {
        self.values.number(n)
    }

    fn array(&mut self, items: std::vec::Drain<'_, Self::Value>) -> Self::Value {
        self.values.array(items)
    }

    fn object(&mut self) -> Self::Object {
        (self.values.object(), 0)
    }

    fn insert(&mut self, object: &mut Self::Object, key: &str, value: Self::Value) {
        self.values.insert(&mut object.0, key, value);
        object.1 += 1;
    }

    fn close(&mut self, object: Self::Object) -> Self::Value {
        self.repeated |= object.0.len() != object.1;
        self.values.close(object.0)
    }
}

/// Whether BUILD of this plan touches nothing but the call's own objects: no `default_factory`, unhashable
/// defaults of plain JSON data only (their deep copy runs no user code), no model class with `__del__`.
fn fusable(py: Python<'_>, nodes: &[Node]) -> bool {
    nodes.iter().all(|n| match n {
        Node::TypedDict(f) => fields_fusable(py, f),
        Node::Model(model, f) => {
            model.class(py).getattr("__del__").is_err() && fields_fusable(py, f)
        }
        _ => true,
    })
}

fn fields_fusable(py: Python<'_>, f: &Fields) -> bool {
    f.fields.iter().all(|field| match &field.default {
        Default::Absent | Default::Value(_, false) => true,
        Default::Value(x, true) => plain_data(x.bind(py), 0),
        Default::Factory(..) => false,
    })
}

/// Exact dicts (str keys), lists, str, int, float, bool and None, up to [`MAX_DEPTH`] levels.
fn plain_data(v: &Bound<'_, PyAny>, depth: usize) -> bool {
    if v.is_none()
        || v.is_exact_instance_of::<PyString>()
        || v.is_exact_instance_of::<PyInt>()
        || v.is_exact_instance_of::<PyFloat>()
        || v.is_exact_instance_of::<PyBool>()
    {
        true
    } else if let Ok(l) = v.cast_exact::<PyList>() {
        depth < MAX_DEPTH && l.iter().all(|x| plain_data(&x, depth + 1))
    } else if let Ok(d) = v.cast_exact::<PyDict>() {
        depth < MAX_DEPTH
            && d.iter()
                .all(|(k, x)| k.is_exact_instance_of::<PyString>() && plain_data(&x, depth + 1))
    } else {
        false
    }
}

/// Whether every chain of `nullable` and `definition-ref` nodes ends (no definition is only itself).
fn chains_end(nodes: &[Node]) -> bool {
    (0..nodes.len()).all(|start| {
        let mut i = start;
        for _ in 0..=nodes.len() {
            match nodes.get(i) {
                Some(Node::Nullable(j) | Node::Ref(j)) => i = *j,
                Some(_) => return true,
                None => return false,
            }
        }
        false
    })
}

/// Per node: whether BUILD gives back the parsed value unchanged (a fixpoint over definition cycles).
fn sameness(nodes: &[Node]) -> Vec<bool> {
    let mut same: Vec<bool> = nodes
        .iter()
        .map(|n| {
            matches!(
                n,
                Node::Str(..)
                    | Node::Int(..)
                    | Node::Bool
                    | Node::Null
                    | Node::Any
                    | Node::Nullable(_)
                    | Node::List(..)
                    | Node::Dict(..)
                    | Node::Ref(_)
            )
        })
        .collect();
    loop {
        let mut changed = false;
        for (i, n) in nodes.iter().enumerate() {
            let inner = match n {
                Node::Nullable(j) | Node::List(j, ..) | Node::Dict(j, ..) | Node::Ref(j) => *j,
                _ => continue,
            };
            if same[i] && !same.get(inner).copied().unwrap_or(false) {
                same[i] = false;
                changed = true;
            }
        }
        if !changed {
            return same;
        }
    }
}

/// An exact `int` within signed 64 bits.
fn int64(v: &Bound<'_, PyAny>) -> Option<i64> {
    if v.is_exact_instance_of::<PyInt>() {
        v.extract::<i64>().ok()
    } else {
        None
    }
}

/// A JSON number as pydantic-core's float validator reads it: a finite float, or an int within 64 bits.
fn number_f64(v: &Bound<'_, PyAny>) -> Option<f64> {
    if let Ok(f) = v.cast_exact::<PyFloat>() {
        let f = f.value();
        f.is_finite().then_some(f)
    } else {
        #[allow(clippy::cast_precision_loss)]
        int64(v).map(|i| i as f64)
    }
}

/// Whether every number in the parsed JSON `v` is an int within 64 bits or a finite float (containers up to
/// [`MAX_DEPTH`]).
fn json_numbers_fine(v: &Bound<'_, PyAny>, depth: usize) -> bool {
    if v.is_exact_instance_of::<PyInt>() {
        int64(v).is_some()
    } else if let Ok(f) = v.cast_exact::<PyFloat>() {
        f.value().is_finite()
    } else if let Ok(l) = v.cast_exact::<PyList>() {
        depth < MAX_DEPTH && l.iter().all(|item| json_numbers_fine(&item, depth + 1))
    } else if let Ok(d) = v.cast_exact::<PyDict>() {
        depth < MAX_DEPTH
            && d.iter()
                .all(|(_, item)| json_numbers_fine(&item, depth + 1))
    } else {
        true
    }
}

fn size_fits(v: &Bound<'_, PyAny>, min: usize, max: Option<usize>) -> bool {
    if min == 0 && max.is_none() {
        return true;
    }
    v.len()
        .is_ok_and(|n| n >= min && max.is_none_or(|m| n <= m))
}

impl Table {
    /// The object for the JSON scalar `v` (same JSON type, equal value).
    fn find(&self, v: &Bound<'_, PyAny>) -> Option<&Py<PyAny>> {
        if let Ok(s) = v.cast_exact::<PyString>() {
            self.strs.get(s.to_str().ok()?)
        } else if v.is_exact_instance_of::<PyInt>() {
            self.ints.get(&int64(v)?)
        } else if let Ok(b) = v.cast_exact::<PyBool>() {
            self.bools[usize::from(b.is_true())].as_ref()
        } else if v.is_none() {
            self.none.as_ref()
        } else {
            None
        }
    }
}

impl ArgumentDecoder {
    /// CHECK: whether `v` (at container depth `depth`) certainly validates against node `i`; no side effects.
    fn check(&self, i: usize, v: &Bound<'_, PyAny>, depth: usize, steps: &mut usize) -> bool {
        *steps += 1;
        if *steps > MAX_STEPS {
            return false;
        }
        let Some(node) = self.nodes.get(i) else {
            return false;
        };
        match node {
            Node::Str(min, max) => v.is_exact_instance_of::<PyString>() && size_fits(v, *min, *max),
            Node::Int(bounds, multiple_of) => int64(v).is_some_and(|n| {
                let n = i128::from(n);
                bounds.hold(n) && multiple_of.is_none_or(|m| n % m == 0)
            }),
            Node::Float(bounds) => number_f64(v).is_some_and(|f| bounds.hold(f)),
            Node::Bool => v.is_exact_instance_of::<PyBool>(),
            Node::Null => v.is_none(),
            Node::Any => json_numbers_fine(v, depth),
            Node::Nullable(j) => v.is_none() || self.walk(*j, v, depth, steps),
            Node::Ref(j) => self.walk(*j, v, depth, steps),
            Node::Lookup(t) => t.find(v).is_some(),
            Node::List(j, min, max) => v.cast_exact::<PyList>().is_ok_and(|l| {
                depth < MAX_DEPTH
                    && size_fits(v, *min, *max)
                    && l.iter().all(|item| self.walk(*j, &item, depth + 1, steps))
            }),
            Node::Dict(j, min, max) => v.cast_exact::<PyDict>().is_ok_and(|d| {
                depth < MAX_DEPTH
                    && size_fits(v, *min, *max)
                    && d.iter()
                        .all(|(_, item)| self.walk(*j, &item, depth + 1, steps))
            }),
            Node::TypedDict(f) | Node::Model(_, f) => self.check_fields(f, v, depth, steps),
        }
    }

    /// [`Self::check`] one level down, with the path's step count restored afterwards.
    fn walk(&self, i: usize, v: &Bound<'_, PyAny>, depth: usize, steps: &mut usize) -> bool {
        let before = *steps;
        let ok = self.check(i, v, depth, steps);
        *steps = before;
        ok
    }

    fn check_fields(
        &self,
        f: &Fields,
        v: &Bound<'_, PyAny>,
        depth: usize,
        steps: &mut usize,
    ) -> bool {
        let Ok(d) = v.cast_exact::<PyDict>() else {
            return false;
        };
        if depth >= MAX_DEPTH {
            return false;
        }
        // One pass over the parsed pairs (keys usually come in schema order), fields seen in a bit set.
        let mut seen = Seen::new(f.fields.len());
        let mut next = 0;
        for (k, item) in d.iter() {
            match key_text(&k).and_then(|k| f.field_of(k, next)) {
                Some(j) => {
                    seen.set(j);
                    next = j + 1;
                    if !self.walk(f.fields[j].node, &item, depth + 1, steps) {
                        return false;
                    }
                }
                None => match f.extra {
                    Extra::Forbid => return false,
                    Extra::Ignore => {}
                    Extra::Allow => {
                        if !json_numbers_fine(&item, depth + 1) {
                            return false;
                        }
                    }
                },
            }
        }
        f.fields.iter().enumerate().all(|(j, field)| {
            seen.has(j) || !field.required || !matches!(field.default, Default::Absent)
        })
    }

    /// BUILD: the validated value of `v` (already checked against node `i`). Lists and dicts of the parse are
    /// filled in place: they are this call's own, fresh objects, as pydantic's would be.
    fn build_value<'py>(&self, i: usize, v: Bound<'py, PyAny>) -> Built<'py> {
        if self.same.get(i).copied().unwrap_or(true) {
            return Ok(v);
        }
        let py = v.py();
        let Some(node) = self.nodes.get(i) else {
            return Ok(v);
        };
        Ok(match node {
            Node::Float(_) => match number_f64(&v) {
                Some(f) if !v.is_exact_instance_of::<PyFloat>() => PyFloat::new(py, f).into_any(),
                _ => v,
            },
            Node::Nullable(_) if v.is_none() => v,
            Node::Nullable(j) | Node::Ref(j) => self.build_value(*j, v)?,
            Node::Lookup(t) => match t.find(&v) {
                Some(x) => x.bind(py).clone(),
                None => return Err(Stop::Unsure),
            },
            Node::List(j, ..) => {
                let l = v.cast_exact::<PyList>().map_err(PyErr::from)?;
                for (at, item) in l.iter().enumerate() {
                    let built = self.build_value(*j, item.clone())?;
                    if !built.is(&item) {
                        l.set_item(at, built)?;
                    }
                }
                v
            }
            Node::Dict(j, ..) => {
                let d = v.cast_exact::<PyDict>().map_err(PyErr::from)?;
                let items: Vec<_> = d.iter().collect();
                for (k, item) in items {
                    let built = self.build_value(*j, item.clone())?;
                    if !built.is(&item) {
                        d.set_item(k, built)?;
                    }
                }
                v
            }
            Node::TypedDict(f) => self.build_fields(f, &v, false)?.0.into_any(),
            Node::Model(model, f) => {
                let (dict, names) = self.build_fields(f, &v, true)?;
                model.instance(&dict, names)?
            }
            _ => v,
        })
    }

    /// The output dict of a typed dict or model (fields in schema order, defaults filled, then with
    /// `Extra::Allow` the extras in input order) and, for a model, the set of the field names given, as
    /// pydantic-core's `typed_dict.rs` / `model_fields.rs` make them.
    fn build_fields<'py>(
        &self,
        f: &Fields,
        v: &Bound<'py, PyAny>,
        model: bool,
    ) -> Result<(Bound<'py, PyDict>, Option<Bound<'py, PySet>>), Stop> {
        let d = v.cast_exact::<PyDict>().map_err(PyErr::from)?;
        let mut sent = 0;
        // lazy: each given field is built and each missing one filled in schema order, as pydantic-core goes
        // field by field (a nested model's factories run between this one's, in that order)
        let given = f
            .fields
            .iter()
            .map(|field| match d.get_item(field.key.bind(v.py()))? {
                Some(item) => {
                    sent += 1;
                    Ok(Some(self.build_value(field.node, item)?))
                }
                None => Ok(None),
            });
        let (out, names) = self.fill_fields(v.py(), f, given, model)?;
        if f.extra == Extra::Allow && sent < d.len() {
            for (k, item) in d.iter() {
                if key_text(&k).and_then(|k| f.field_of(k, 0)).is_none() {
                    out.set_item(k, item)?;
                }
            }
        }
        Ok((out, names))
    }

    /// The output dict of a typed dict or model from the value `given` for each field (schema order, taken one
    /// at a time between the fills), the missing ones filled ([`Self::fill`]), and for a model the set of the
    /// names given.
    fn fill_fields<'py>(
        &self,
        py: Python<'py>,
        f: &Fields,
        given: impl IntoIterator<Item = Result<Option<Bound<'py, PyAny>>, Stop>>,
        model: bool,
    ) -> Result<(Bound<'py, PyDict>, Option<Bound<'py, PySet>>), Stop> {
        let out = PyDict::new(py);
        let mut seen = Seen::new(f.fields.len());
        let mut all = true;
        for (j, (field, value)) in f.fields.iter().zip(given).enumerate() {
            match value? {
                Some(value) => {
                    out.set_item(field.name.bind(py), value)?;
                    seen.set(j);
                }
                None => {
                    all = false;
                    self.fill(field, &out)?;
                }
            }
        }
        if !model {
            return Ok((out, None));
        }
        let names = if all {
            set_of(f.names.bind(py))?
        } else {
            let names = PySet::empty(py)?;
            for (j, field) in f.fields.iter().enumerate() {
                if seen.has(j) {
                    names.add(field.name.bind(py))?;
                }
            }
            names
        };
        Ok((out, Some(names)))
    }

    /// `out[field.name]` = the default of a missing field, if it has one (with_default.rs).
    fn fill(&self, field: &Field, out: &Bound<'_, PyDict>) -> Result<(), Stop> {
        let py = out.py();
        let name = field.name.bind(py);
        match &field.default {
            Default::Absent => {}
            Default::Value(x, copy) => {
                let x = x.bind(py);
                if *copy {
                    out.set_item(name, self.deepcopy.bind(py).call1((x,))?)?;
                } else {
                    out.set_item(name, x)?;
                }
            }
            Default::Factory(factory) => out.set_item(name, factory.bind(py).call0()?)?,
        }
        Ok(())
    }
}

/// The fields found in a parsed object (a bit set; no allocation up to 64 fields).
struct Seen {
    bits: u64,
    more: Vec<bool>,
}

impl Seen {
    fn new(n: usize) -> Self {
        Seen {
            bits: 0,
            more: if n > 64 { vec![false; n] } else { Vec::new() },
        }
    }

    fn set(&mut self, j: usize) {
        if j < 64 {
            self.bits |= 1 << j;
        } else if let Some(b) = self.more.get_mut(j) {
            *b = true;
        }
    }

    fn has(&self, j: usize) -> bool {
        if j < 64 {
            self.bits & (1 << j) != 0
        } else {
            self.more.get(j).copied().unwrap_or(false)
        }
    }
}

impl Fields {
    /// The index of the field read from JSON key `k`, looked for from `next` on first (keys usually come in
    /// schema order).
    fn field_of(&self, k: &str, next: usize) -> Option<usize> {
        let n = self.fields.len();
        (next..n)
            .chain(0..next.min(n))
            .find(|&j| self.fields.get(j).is_some_and(|f| &*f.key_str == k))
    }
}

/// A parsed key's text (a str without lone surrogates).
fn key_text<'a>(k: &'a Bound<'_, PyAny>) -> Option<&'a str> {
    k.cast_exact::<PyString>().ok()?.to_str().ok()
}

/// Compiles core schema dicts into [`Node`]s (the rules of the twin's `_Compiler`).
struct Compiler<'py> {
    py: Python<'py>,
    nodes: Vec<Node>,
    /// Every `definitions` entry met, by `ref` (a later one replaces an earlier one).
    definitions: HashMap<String, Bound<'py, PyAny>>,
    /// `definition-ref` name -> its (shared) [`Node::Ref`].
    refs: HashMap<String, usize>,
    /// Definitions referred to and not compiled yet, with their [`Node::Ref`].
    queue: Vec<(String, usize)>,
    counts_pairs: bool,
    typed_dict_factories: bool,
    object_new: Bound<'py, PyAny>,
    enum_type: Bound<'py, PyType>,
    model_type: Bound<'py, PyType>,
}

/// Keys any node may hold.
const COMMON: &[&str] = &["type", "ref", "metadata", "serialization"];
/// Core config keys that change nothing for the subset (JSON input, no instances, no patterns).
const CONFIG_FREE: &[&str] = &[
    "title",
    "extra_fields_behavior",
    "typed_dict_total",
    "loc_by_alias",
    "hide_input_in_errors",
    "validation_error_cause",
    "ser_json_timedelta",
    "ser_json_temporal",
    "ser_json_bytes",
    "ser_json_inf_nan",
    "val_json_bytes",
    "cache_strings",
    "serialize_by_alias",
    "from_attributes",
    "revalidate_instances",
    "allow_inf_nan",
    "coerce_numbers_to_str",
    "regex_engine",
    "url_preserve_empty_path",
    "ser_json_val_json",
];
/// Core config keys allowed only with the value that changes nothing.
const CONFIG_DEFAULTS: &[(&str, bool)] = &[
    ("validate_by_alias", true),
    ("validate_by_name", false),
    ("strict", false),
    ("validate_default", false),
    ("str_strip_whitespace", false),
    ("str_to_lower", false),
    ("str_to_upper", false),
];
const MODEL_KEYS: &[&str] = &[
    "cls",
    "schema",
    "config",
    "custom_init",
    "root_model",
    "post_init",
    "generic_origin",
    "frozen",
    "revalidate_instances",
    "extra_behavior",
];
const TD_FIELD_KEYS: &[&str] = &[
    "schema",
    "validation_alias",
    "serialization_alias",
    "serialization_exclude",
    "serialization_exclude_if",
    "required",
];
const MODEL_FIELD_KEYS: &[&str] = &[
    "schema",
    "validation_alias",
    "serialization_alias",
    "serialization_exclude",
    "serialization_exclude_if",
    "frozen",
];
const DEFAULT_KEYS: &[&str] = &[
    "schema",
    "default",
    "default_factory",
    "default_factory_takes_data",
    "on_error",
    "validate_default",
];

/// Whether `d`'s keys are all str, in [`COMMON`] or in one of `allowed`.
fn only(d: &Bound<'_, PyDict>, allowed: &[&str]) -> Option<()> {
    for k in d.keys() {
        let k = k.cast_exact::<PyString>().ok()?;
        let k = k.to_str().ok()?;
        if !COMMON.contains(&k) && !allowed.contains(&k) {
            return None;
        }
    }
    Some(())
}

fn item<'py>(d: &Bound<'py, PyDict>, key: &str) -> Option<Bound<'py, PyAny>> {
    d.get_item(key).ok().flatten()
}

/// `d.get(key)`, with None as absent.
fn given<'py>(d: &Bound<'py, PyDict>, key: &str) -> Option<Bound<'py, PyAny>> {
    item(d, key).filter(|v| !v.is_none())
}

fn text(v: &Bound<'_, PyAny>) -> Option<String> {
    v.cast_exact::<PyString>()
        .ok()?
        .to_str()
        .ok()
        .map(str::to_owned)
}

fn truthy(v: Option<Bound<'_, PyAny>>) -> Option<bool> {
    v.map_or(Some(false), |v| v.is_truthy().ok())
}

/// A length key: absent or None -> `default`; else a non-negative exact int.
fn length(d: &Bound<'_, PyDict>, key: &str) -> Option<Option<usize>> {
    match given(d, key) {
        None => Some(None),
        Some(v) if v.is_exact_instance_of::<PyInt>() => v.extract::<usize>().ok().map(Some),
        Some(_) => None,
    }
}

fn bounds<T>(
    d: &Bound<'_, PyDict>,
    read: impl Fn(&Bound<'_, PyAny>) -> Option<T>,
) -> Option<Bounds<T>> {
    let one = |key| given(d, key).map_or(Some(None), |v| read(&v).map(Some));
    Some(Bounds {
        ge: one("ge")?,
        gt: one("gt")?,
        le: one("le")?,
        lt: one("lt")?,
    })
}

fn int_bound(v: &Bound<'_, PyAny>) -> Option<i128> {
    if v.is_exact_instance_of::<PyInt>() {
        v.extract::<i128>().ok()
    } else {
        None
    }
}

/// A bound a float compares with as pydantic does (as a double): a finite float, or an int a double holds.
fn float_bound(v: &Bound<'_, PyAny>) -> Option<f64> {
    const EXACT: i64 = 1 << 53;
    if v.is_exact_instance_of::<PyFloat>() {
        number_f64(v)
    } else {
        #[allow(clippy::cast_precision_loss)]
        int64(v)
            .filter(|i| (-EXACT..=EXACT).contains(i))
            .map(|i| i as f64)
    }
}

/// A `config` mapping with only free keys and defaults ([`CONFIG_FREE`], [`CONFIG_DEFAULTS`]); None -> empty.
fn config_of<'py>(d: &Bound<'py, PyDict>) -> Option<Option<Bound<'py, PyDict>>> {
    let Some(c) = given(d, "config") else {
        return Some(None);
    };
    let c = c.cast_into_exact::<PyDict>().ok()?;
    for (k, v) in c.iter() {
        let k = text(&k)?;
        if let Some((_, default)) = CONFIG_DEFAULTS.iter().find(|(name, _)| *name == k) {
            let b = v.cast_exact::<PyBool>().ok()?;
            if b.is_true() != *default {
                return None;
            }
        } else if !CONFIG_FREE.contains(&k.as_str()) {
            return None;
        }
    }
    Some(Some(c))
}

/// `ExtraBehavior::from_schema_or_config` (`build_tools.rs`): the node's, else the config's, else 'ignore';
/// an `extras_schema` is not supported.
fn truthy_item<'py>(v: Option<Bound<'py, PyAny>>) -> Option<Bound<'py, PyAny>> {
    v.filter(|v| v.is_truthy().unwrap_or(true))
}

fn extra_of(d: &Bound<'_, PyDict>, config: Option<&Bound<'_, PyDict>>) -> Option<Extra> {
    if given(d, "extras_schema").is_some() {
        return None;
    }
    let name = match truthy_item(item(d, "extra_behavior")) {
        Some(v) => text(&v)?,
        None => match truthy_item(config.and_then(|c| item(c, "extra_fields_behavior"))) {
            Some(v) => text(&v)?,
            None => "ignore".to_owned(),
        },
    };
    match name.as_str() {
        "forbid" => Some(Extra::Forbid),
        "ignore" => Some(Extra::Ignore),
        "allow" => Some(Extra::Allow),
        _ => None,
    }
}

impl<'py> Compiler<'py> {
    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn node(&mut self, schema: &Bound<'py, PyAny>, depth: usize) -> Option<usize> {
        if depth > MAX_SCHEMA_DEPTH || self.nodes.len() >= MAX_NODES {
            return None;
        }
        let d = schema.cast_exact::<PyDict>().ok()?;
        let kind = text(&item(d, "type")?)?;
        match kind.as_str() {
            "definitions" => {
                only(d, &["schema", "definitions"])?;
                for definition in item(d, "definitions")?.try_iter().ok()? {
                    let definition = definition.ok()?;
                    let name = text(
                        &definition
                            .cast_exact::<PyDict>()
                            .ok()?
                            .get_item("ref")
                            .ok()??,
                    )?;
                    self.definitions.insert(name, definition);
                }
                self.node(&item(d, "schema")?, depth + 1)
            }
            "definition-ref" => {
                only(d, &["schema_ref"])?;
                let name = text(&item(d, "schema_ref")?)?;
                if !self.definitions.contains_key(&name) {
                    return None;
                }
                if let Some(slot) = self.refs.get(&name) {
                    return Some(*slot);
                }
                let slot = self.push(Node::Ref(usize::MAX));
                self.refs.insert(name.clone(), slot);
                self.queue.push((name, slot));
                Some(slot)
            }
            _ => {
                let node = self.kind(d, &kind, depth)?;
                Some(self.push(node))
            }
        }
    }

    /// `key`'s schema, or an `any` node when absent.
    fn sub(&mut self, d: &Bound<'py, PyDict>, key: &str, depth: usize) -> Option<usize> {
        match item(d, key) {
            Some(s) => self.node(&s, depth + 1),
            None => Some(self.push(Node::Any)),
        }
    }

    fn kind(&mut self, d: &Bound<'py, PyDict>, kind: &str, depth: usize) -> Option<Node> {
        Some(match kind {
            "str" => {
                only(d, &["min_length", "max_length"])?;
                Node::Str(
                    length(d, "min_length")?.unwrap_or(0),
                    length(d, "max_length")?,
                )
            }
            "int" => {
                only(d, &["ge", "gt", "le", "lt", "multiple_of"])?;
                let multiple_of = match given(d, "multiple_of") {
                    None => None,
                    Some(m) => Some(int64(&m).filter(|m| *m != 0)?),
                };
                Node::Int(bounds(d, int_bound)?, multiple_of.map(i128::from))
            }
            "float" => {
                only(d, &["ge", "gt", "le", "lt", "allow_inf_nan"])?;
                Node::Float(bounds(d, float_bound)?)
            }
            "bool" | "none" | "any" => {
                only(d, &[])?;
                match kind {
                    "bool" => Node::Bool,
                    "none" => Node::Null,
                    _ => Node::Any,
                }
            }
            "nullable" => {
                only(d, &["schema"])?;
                Node::Nullable(self.node(&item(d, "schema")?, depth + 1)?)
            }
            "literal" => {
                only(d, &["expected"])?;
                Node::Lookup(self.literal(&item(d, "expected")?)?)
            }
            "enum" => {
                only(d, &["cls", "members", "sub_type"])?;
                Node::Lookup(members(d)?)
            }
            "list" => {
                only(
                    d,
                    &["items_schema", "min_length", "max_length", "fail_fast"],
                )?;
                let item = self.sub(d, "items_schema", depth)?;
                Node::List(
                    item,
                    length(d, "min_length")?.unwrap_or(0),
                    length(d, "max_length")?,
                )
            }
            "dict" => {
                only(
                    d,
                    &[
                        "keys_schema",
                        "values_schema",
                        "min_length",
                        "max_length",
                        "fail_fast",
                    ],
                )?;
                if let Some(k) = item(d, "keys_schema") {
                    let k = self.node(&k, depth + 1)?;
                    if !matches!(self.nodes.get(k), Some(Node::Str(0, None))) {
                        return None;
                    }
                }
                let values = self.sub(d, "values_schema", depth)?;
                self.counts_pairs |= !matches!(self.nodes.get(values), Some(Node::Any));
                Node::Dict(
                    values,
                    length(d, "min_length")?.unwrap_or(0),
                    length(d, "max_length")?,
                )
            }
            "typed-dict" => {
                const KEYS: &[&str] = &[
                    "fields",
                    "cls",
                    "cls_name",
                    "computed_fields",
                    "extras_schema",
                    "extra_behavior",
                    "total",
                    "config",
                ];
                only(d, KEYS)?;
                // Typed dicts use their own config only (typed_dict.rs).
                let config = config_of(d)?;
                let total = match item(d, "total") {
                    Some(total) => Some(total),
                    None => config.as_ref().and_then(|c| item(c, "typed_dict_total")),
                };
                let extra = extra_of(d, config.as_ref())?;
                let fields = item(d, "fields")?.cast_into_exact::<PyDict>().ok()?;
                let mut out = Vec::with_capacity(fields.len());
                for (name, field) in fields.iter() {
                    let field = field.cast_into_exact::<PyDict>().ok()?;
                    only(&field, TD_FIELD_KEYS)?;
                    let required = match item(&field, "required") {
                        Some(r) => r.is_truthy().ok()?,
                        None => total.as_ref().map_or(Some(true), |t| t.is_truthy().ok())?,
                    };
                    out.push(self.field(&name, &field, required, depth, true)?);
                }
                Node::TypedDict(fields_of(self.py, out, extra)?)
            }
            "model" => self.model(d, depth)?,
            _ => return None,
        })
    }

    fn model(&mut self, d: &Bound<'py, PyDict>, depth: usize) -> Option<Node> {
        only(d, MODEL_KEYS)?;
        if truthy(item(d, "custom_init"))?
            || truthy(item(d, "root_model"))?
            || given(d, "post_init").is_some()
        {
            return None;
        }
        let cls = item(d, "cls")?.cast_into::<PyType>().ok()?;
        // Instances come from `object.__new__`, as pydantic-core's `create_class` calls `tp_new` (model.rs).
        if !cls.getattr("__new__").ok()?.is(&self.object_new) {
            return None;
        }
        // Models use their own config only (model.rs).
        let config = config_of(d)?;
        let inner = item(d, "schema")?.cast_into_exact::<PyDict>().ok()?;
        only(
            &inner,
            &[
                "fields",
                "model_name",
                "computed_fields",
                "extra_behavior",
                "extras_schema",
            ],
        )?;
        if text(&item(&inner, "type")?)? != "model-fields" {
            return None;
        }
        let extra = extra_of(&inner, config.as_ref())?;
        if extra == Extra::Allow {
            return None;
        }
        let fields = item(&inner, "fields")?.cast_into_exact::<PyDict>().ok()?;
        let mut out = Vec::with_capacity(fields.len());
        for (name, field) in fields.iter() {
            let field = field.cast_into_exact::<PyDict>().ok()?;
            only(&field, MODEL_FIELD_KEYS)?;
            out.push(self.field(&name, &field, true, depth, false)?);
        }
        Some(Node::Model(
            ModelClass::new(&cls)?,
            fields_of(self.py, out, extra)?,
        ))
    }

    /// A field: its JSON key (`validation_alias`, a plain str), its node, and a `default` wrapper taken apart here
    /// (the only place it is supported; with_default.rs).
    fn field(
        &mut self,
        name: &Bound<'py, PyAny>,
        field: &Bound<'py, PyDict>,
        required: bool,
        depth: usize,
        typed_dict: bool,
    ) -> Option<Field> {
        let py = self.py;
        let name = text(name)?;
        let key = match item(field, "validation_alias") {
            Some(alias) => text(&alias)?,
            None => name.clone(),
        };
        let mut schema = item(field, "schema")?;
        let mut default = Default::Absent;
        let wrapper = schema.cast_exact::<PyDict>().ok()?.clone();
        if text(&item(&wrapper, "type")?)? == "default" {
            only(&wrapper, DEFAULT_KEYS)?;
            if given(&wrapper, "on_error").is_some_and(|e| text(&e).as_deref() != Some("raise"))
                || truthy(item(&wrapper, "validate_default"))?
            {
                return None;
            }
            if item(&wrapper, "default").is_some() || item(&wrapper, "default_factory").is_some() {
                default = self.default(&wrapper)?;
                self.typed_dict_factories |= typed_dict && matches!(default, Default::Factory(_));
            }
            schema = item(&wrapper, "schema")?;
        }
        Some(Field {
            name: PyString::intern(py, &name).unbind(),
            key: PyString::intern(py, &key).unbind(),
            key_str: key.clone().into_boxed_str(),
            renamed: key != name,
            node: self.node(&schema, depth + 1)?,
            required,
            default,
        })
    }

    /// A missing field's value: the default (within the numbers rule; deep-copied per use when unhashable) or
    /// the factory's ([`Default::Factory`]).
    fn default(&self, wrapper: &Bound<'py, PyDict>) -> Option<Default> {
        match given(wrapper, "default_factory") {
            None => {
                let value =
                    item(wrapper, "default").unwrap_or_else(|| self.py.None().into_bound(self.py));
                if !numbers_fine(&value, &self.model_type, &self.enum_type).ok()? {
                    return None;
                }
                let copy = value.hash().is_err();
                Some(Default::Value(value.unbind(), copy))
            }
            Some(factory) => {
                if !factory.is_callable()
                    || item(wrapper, "default").is_some()
                    || truthy(item(wrapper, "default_factory_takes_data"))?
                {
                    return None;
                }
                Some(Default::Factory(factory.unbind()))
            }
        }
    }

    /// pydantic-core's `LiteralLookup` (literal.rs) for the JSON scalars an expected value stands for, as the
    /// twin's `_literal_table`: each expected bool, int (64 bits), str and None, and each enum member with an
    /// exact int or str value, found first among the expected values of its JSON type, then among the other
    /// expected objects, then among all primitives (Python dict equality: `1 == True`).
    fn literal(&self, expected: &Bound<'py, PyAny>) -> Option<Table> {
        let py = self.py;
        let items: Vec<Bound<'py, PyAny>> =
            expected.try_iter().ok()?.collect::<PyResult<_>>().ok()?;
        let (bools, ints, strs, objects, primitives) = (
            PyDict::new(py),
            PyDict::new(py),
            PyDict::new(py),
            PyDict::new(py),
            PyDict::new(py),
        );
        for (index, x) in items.iter().enumerate() {
            if x.is_exact_instance_of::<PyBool>() {
                bools.set_item(x, index).ok()?;
                primitives.set_item(x, index).ok()?;
            }
            if int64(x).is_some() {
                ints.set_item(x, index).ok()?;
                primitives.set_item(x, index).ok()?;
            } else if x.is_exact_instance_of::<PyString>() {
                strs.set_item(x, index).ok()?;
                primitives.set_item(x, index).ok()?;
            } else {
                objects.set_item(x, index).ok()?;
            }
        }
        let at = |lookup: &Bound<'py, PyDict>,
                  key: &Bound<'py, PyAny>|
         -> Option<Option<Bound<'py, PyAny>>> {
            match lookup.get_item(key).ok()? {
                Some(index) => Some(Some(items.get(index.extract::<usize>().ok()?)?.clone())),
                None => Some(None),
            }
        };
        let mut table = Table::default();
        for x in &items {
            if let Ok(b) = x.cast_exact::<PyBool>() {
                table.bools[usize::from(b.is_true())] = Some(at(&bools, x)??.unbind());
                continue;
            }
            let scalar = if x.is_instance(&self.enum_type).ok()? {
                x.getattr("value").ok()?
            } else {
                x.clone()
            };
            let is_int = int64(&scalar).is_some();
            let is_str = scalar.is_exact_instance_of::<PyString>();
            if !(is_int || is_str || scalar.is_none()) {
                continue;
            }
            let empty = PyDict::new(py);
            let first = if is_int {
                &ints
            } else if is_str {
                &strs
            } else {
                &empty
            };
            for lookup in [first, &objects, &primitives] {
                if let Some(found) = at(lookup, &scalar)? {
                    let found = found.unbind();
                    if let Some(i) = int64(&scalar) {
                        table.ints.insert(i, found);
                    } else if is_str {
                        // A lone surrogate never comes out of the parser: no entry needed.
                        if let Ok(s) = scalar.cast_exact::<PyString>().ok()?.to_str() {
                            table.strs.insert(s.to_owned(), found);
                        }
                    } else {
                        table.none = Some(found);
                    }
                    break;
                }
            }
        }
        Some(table)
    }
}

/// The fields of a typed dict or model; two fields reading the same JSON key: no plan.
fn fields_of(py: Python<'_>, fields: Vec<Field>, extra: Extra) -> Option<Fields> {
    let mut keys = std::collections::HashSet::new();
    for f in &fields {
        keys.insert(f.key.bind(py).to_str().ok()?.to_owned());
    }
    if keys.len() != fields.len() {
        return None;
    }
    // pydantic-core keeps no allowed extra whose key is a field's name (a renamed field's): outside the subset
    if extra == Extra::Allow
        && fields
            .iter()
            .any(|f| f.name.bind(py).as_any().ne(f.key.bind(py)).unwrap_or(true))
    {
        return None;
    }
    let names = PyFrozenSet::new(py, fields.iter().map(|f| f.name.bind(py)))
        .ok()?
        .unbind();
    Some(Fields {
        fields,
        extra,
        names,
    })
}

/// `enum` members by value, as enum_.rs with `sub_type` 'str' or 'int' (that JSON type only; the last member
/// for equal values); no `missing` hook.
fn members(d: &Bound<'_, PyDict>) -> Option<Table> {
    let sub_type = text(&item(d, "sub_type")?)?;
    let cls = item(d, "cls")?.cast_into::<PyType>().ok()?;
    let list = item(d, "members")?;
    if !list.is_truthy().ok()? {
        return None;
    }
    let mut t = Table::default();
    for m in list.try_iter().ok()? {
        let m = m.ok()?;
        let value = m.getattr("value").ok()?;
        if !m.is_instance(&cls).ok()? {
            return None;
        }
        match sub_type.as_str() {
            "str" => {
                let s = value.cast_exact::<PyString>().ok()?;
                if let Ok(s) = s.to_str() {
                    t.strs.insert(s.to_owned(), m.clone().unbind());
                }
            }
            "int" => {
                if !value.is_exact_instance_of::<PyInt>() {
                    return None;
                }
                if let Some(i) = int64(&value) {
                    t.ints.insert(i, m.clone().unbind());
                }
            }
            _ => return None,
        }
    }
    Some(t)
}
