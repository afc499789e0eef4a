//! `ArgumentDecoder.errors`: the errors pydantic-core's `validate_json` raises for arguments it surely refuses,
//! found without running it (the twin's `ArgumentDecoder.errors` and `_Node.judge`, rule for rule).
//!
//! The text is parsed as [`ArgumentDecoder::decode`]'s parse-then-check path parses it (the same strict reading),
//! into Rust values: no Python object is made but the errors. A repeated key anywhere answers None (pydantic sees
//! both pairs). Then each value is either CHECKed valid, or a certain failure of
//! pydantic's lax JSON mode with its error type: a string without an ASCII digit for an `int`, a number with a
//! fractional part for an `int`, a string without an ASCII digit, `inf` or `nan` for a `float`, a string no word
//! of `str_as_bool` could be or an integer other than 0 and 1 for a `bool`, a JSON type the node never takes, a
//! required field left out (one that takes None answers None: a tool fills it), an extra of a `forbid` typed dict
//! or model. Anything else answers None.

use std::borrow::Cow;
use std::collections::HashSet;

use jiter::{NumberAny, NumberInt};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use super::{ArgumentDecoder, Bounds, Default, Extra, Fields, Node, Table, MAX_DEPTH, MAX_STEPS};
use crate::json::onepass::{self, Sink, Top};

/// Strings up to this many characters are judged unparsable as numbers (pydantic has size errors for long ones).
const PARSED_LENGTH: usize = 1000;

/// What pydantic-core's `str_as_bool` reads as a bool, in any case.
const BOOL_WORDS: [&str; 12] = [
    "0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes",
];

/// A pydantic error type `errors` reports, with its message for JSON input (`ErrorType::message_template_json`).
#[derive(Clone, Copy)]
enum Kind {
    IntParsing,
    IntFromFloat,
    IntType,
    FloatParsing,
    FloatType,
    BoolParsing,
    BoolType,
    StringType,
    ListType,
    DictType,
    ModelType,
    Missing,
    ExtraForbidden,
}

impl Kind {
    /// The error type (an interned str: made once per process).
    fn name<'py>(self, py: Python<'py>) -> &'py Bound<'py, PyString> {
        match self {
            Kind::IntParsing => intern!(py, "int_parsing"),
            Kind::IntFromFloat => intern!(py, "int_from_float"),
            Kind::IntType => intern!(py, "int_type"),
            Kind::FloatParsing => intern!(py, "float_parsing"),
            Kind::FloatType => intern!(py, "float_type"),
            Kind::BoolParsing => intern!(py, "bool_parsing"),
            Kind::BoolType => intern!(py, "bool_type"),
            Kind::StringType => intern!(py, "string_type"),
            Kind::ListType => intern!(py, "list_type"),
            Kind::DictType => intern!(py, "dict_type"),
            Kind::ModelType => intern!(py, "model_type"),
            Kind::Missing => intern!(py, "missing"),
            Kind::ExtraForbidden => intern!(py, "extra_forbidden"),
        }
    }

    /// The message (interned).
    fn message<'py>(self, py: Python<'py>) -> &'py Bound<'py, PyString> {
        match self {
            Kind::IntParsing => intern!(
                py,
                "Input should be a valid integer, unable to parse string as an integer"
            ),
            Kind::IntFromFloat => intern!(
                py,
                "Input should be a valid integer, got a number with a fractional part"
            ),
            Kind::IntType => intern!(py, "Input should be a valid integer"),
            Kind::FloatParsing => intern!(
                py,
                "Input should be a valid number, unable to parse string as a number"
            ),
            Kind::FloatType => intern!(py, "Input should be a valid number"),
            Kind::BoolParsing => intern!(
                py,
                "Input should be a valid boolean, unable to interpret input"
            ),
            Kind::BoolType => intern!(py, "Input should be a valid boolean"),
            Kind::StringType => intern!(py, "Input should be a valid string"),
            Kind::ListType => intern!(py, "Input should be a valid array"),
            Kind::DictType | Kind::ModelType => intern!(py, "Input should be an object"),
            Kind::Missing => intern!(py, "Field required"),
            Kind::ExtraForbidden => intern!(py, "Extra inputs are not permitted"),
        }
    }
}

/// A parsed JSON value, its strings borrowed from the text where they need no unescaping.
enum JsonValue<'t> {
    Null,
    Bool(bool),
    Int(i64),
    BigInt,
    Float(f64),
    Str(Cow<'t, str>),
    Array(Vec<JsonValue<'t>>),
    Object(Vec<(Cow<'t, str>, JsonValue<'t>)>),
}

/// The sink of [`onepass::strict`] that makes [`JsonValue`]s of `text`, noting a repeated key.
struct Values<'t> {
    text: &'t str,
    repeated: bool,
}

impl<'t> Values<'t> {
    /// `s` borrowed from the text when it is a slice of it, else copied (an unescaped string).
    fn text(&self, s: &str) -> Cow<'t, str> {
        let start = (s.as_ptr() as usize).wrapping_sub(self.text.as_ptr() as usize);
        match self.text.get(start..start.saturating_add(s.len())) {
            Some(inner) if std::ptr::eq(inner.as_ptr(), s.as_ptr()) => Cow::Borrowed(inner),
            _ => Cow::Owned(s.to_owned()),
        }
    }
}

impl<'t> Sink for Values<'t> {
    type Value = JsonValue<'t>;
    type Object = Vec<(Cow<'t, str>, JsonValue<'t>)>;

    fn null(&mut self) -> Self::Value {
        JsonValue::Null
    }

    fn boolean(&mut self, b: bool) -> Self::Value {
        JsonValue::Bool(b)
    }

    fn string(&mut self, s: &str) -> Self::Value {
        JsonValue::Str(self.text(s))
    }

    fn number(&mut self, n: NumberAny) -> Option<Self::Value> {
        Some(match n {
            NumberAny::Int(NumberInt::Int(i)) => JsonValue::Int(i),
            NumberAny::Int(NumberInt::BigInt(_)) => JsonValue::BigInt,
            NumberAny::Float(f) => JsonValue::Float(f),
        })
    }

    fn array(&mut self, items: std::vec::Drain<'_, Self::Value>) -> Self::Value {
        JsonValue::Array(items.collect())
    }

    fn object(&mut self) -> Self::Object {
        Vec::new()
    }

    fn insert(&mut self, object: &mut Self::Object, key: &str, value: Self::Value) {
        object.push((self.text(key), value));
    }

    fn close(&mut self, object: Self::Object) -> Self::Value {
        self.repeated = self.repeated || repeats(&object);
        JsonValue::Object(object)
    }
}

/// A step of a location: a key, or a list index.
enum Part<'t> {
    Key(&'t str),
    Index(usize),
}

/// The failures found so far, each with its location.
struct Judge<'t> {
    dec: &'t ArgumentDecoder,
    loc: Vec<Part<'t>>,
    found: Vec<(Kind, Vec<Part<'t>>)>,
}

type Pairs<'t> = [(Cow<'t, str>, JsonValue<'t>)];

impl ArgumentDecoder {
    /// The `errors` of `text` (see the module), as a list of `{'type', 'loc', 'msg'}` dicts, or None.
    pub(super) fn judged<'py>(
        &self,
        py: Python<'py>,
        t: &str,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let mut values = Values {
            text: t,
            repeated: false,
        };
        let Ok(Top::Object(v)) = onepass::strict(&mut values, t) else {
            return Ok(None);
        };
        if values.repeated {
            return Ok(None);
        }
        let mut judge = Judge {
            dec: self,
            loc: Vec::new(),
            found: Vec::new(),
        };
        if !judge.judge(self.root, &v, 0, &mut 0) || judge.found.is_empty() {
            return Ok(None);
        }
        let errors = PyList::empty(py);
        for (kind, loc) in judge.found {
            let parts = loc.iter().map(|part| match part {
                Part::Key(k) => PyString::new(py, k).into_any(),
                Part::Index(at) => {
                    let Ok(at) = at.into_pyobject(py);
                    at.into_any()
                }
            });
            let error = PyDict::new(py);
            error.set_item(intern!(py, "type"), kind.name(py))?;
            error.set_item(intern!(py, "loc"), PyTuple::new(py, parts)?)?;
            error.set_item(intern!(py, "msg"), kind.message(py))?;
            errors.append(error)?;
        }
        Ok(Some(errors))
    }
}

impl<'t> Judge<'t> {
    /// Add the errors pydantic surely finds in `v` against node `i`; `false`: not certain.
    fn judge(&mut self, i: usize, v: &'t JsonValue<'t>, depth: usize, steps: &mut usize) -> bool {
        *steps += 1;
        if *steps > MAX_STEPS {
            return false;
        }
        let Some(node) = self.dec.nodes.get(i) else {
            return false;
        };
        match (node, v) {
            (Node::Nullable(_), JsonValue::Null) => true,
            (Node::Nullable(j) | Node::Ref(j), _) => self.descend(*j, v, depth, steps),
            (Node::List(j, min, max), JsonValue::Array(items)) => {
                if depth >= MAX_DEPTH || !fits(items.len(), *min, *max) {
                    return false;
                }
                items.iter().enumerate().all(|(at, item)| {
                    self.loc.push(Part::Index(at));
                    let certain = self.descend(*j, item, depth + 1, steps);
                    self.loc.pop();
                    certain
                })
            }
            (Node::List(..), _) => self.fail(Kind::ListType),
            (Node::Dict(j, min, max), JsonValue::Object(pairs)) => {
                if depth >= MAX_DEPTH || !fits(pairs.len(), *min, *max) {
                    return false;
                }
                pairs.iter().all(|(k, item)| {
                    self.loc.push(Part::Key(k));
                    let certain = self.descend(*j, item, depth + 1, steps);
                    self.loc.pop();
                    certain
                })
            }
            (Node::Dict(..) | Node::TypedDict(_), _) | (Node::Model(..), _)
                if !matches!(v, JsonValue::Object(_)) =>
            {
                self.fail(if matches!(node, Node::Model(..)) {
                    Kind::ModelType
                } else {
                    Kind::DictType
                })
            }
            (Node::TypedDict(f) | Node::Model(_, f), JsonValue::Object(pairs)) => {
                self.fields(f, pairs, depth, steps)
            }
            _ => {
                if leaf_fine(node, v) {
                    return true;
                }
                match failure(node, v) {
                    Some(kind) => self.fail(kind),
                    None => false,
                }
            }
        }
    }

    /// [`Self::judge`] one level down, with the path's step count restored afterwards (as CHECK's `walk`).
    fn descend(&mut self, i: usize, v: &'t JsonValue<'t>, depth: usize, steps: &mut usize) -> bool {
        let before = *steps;
        let certain = self.judge(i, v, depth, steps);
        *steps = before;
        certain
    }

    /// Whether node `i` takes JSON `null` (nullable, none, any, a literal or enum with None), following refs.
    fn takes_none(&self, mut i: usize) -> bool {
        for _ in 0..MAX_STEPS {
            match self.dec.nodes.get(i) {
                Some(Node::Ref(j)) => i = *j,
                Some(Node::Nullable(_) | Node::Null | Node::Any) => return true,
                Some(Node::Lookup(table)) => return table.none.is_some(),
                _ => return false,
            }
        }
        true
    }

    fn fail(&mut self, kind: Kind) -> bool {
        let loc = self
            .loc
            .iter()
            .map(|part| match part {
                Part::Key(k) => Part::Key(k),
                Part::Index(at) => Part::Index(*at),
            })
            .collect();
        self.found.push((kind, loc));
        true
    }

    /// A typed dict's or model's fields in schema order, then its extras in input order.
    fn fields(
        &mut self,
        f: &'t Fields,
        pairs: &'t Pairs<'t>,
        depth: usize,
        steps: &mut usize,
    ) -> bool {
        if depth >= MAX_DEPTH {
            return false;
        }
        for field in &f.fields {
            let before = self.found.len();
            self.loc.push(Part::Key(&field.key_str));
            let certain = match pairs.iter().find(|(k, _)| *k == *field.key_str) {
                Some((_, item)) => self.descend(field.node, item, depth + 1, steps),
                // a left-out field that takes None: the tool may fill it (its own rule), so not judged
                None if field.required && matches!(field.default, Default::Absent) => {
                    !self.takes_none(field.node) && self.fail(Kind::Missing)
                }
                None => true,
            };
            self.loc.pop();
            // located by key or by name, as the config's `loc_by_alias` says: not judged
            if !certain || (self.found.len() != before && field.renamed) {
                return false;
            }
        }
        pairs.iter().all(|(k, item)| {
            if f.fields.iter().any(|field| *field.key_str == **k) {
                return true;
            }
            match f.extra {
                Extra::Forbid => {
                    self.loc.push(Part::Key(k));
                    self.fail(Kind::ExtraForbidden);
                    self.loc.pop();
                    true
                }
                Extra::Ignore => true,
                Extra::Allow => numbers_fine(item, depth + 1),
            }
        })
    }
}

/// Whether a key of `pairs` comes twice (compared pairwise when few, else hashed).
fn repeats(pairs: &[(Cow<'_, str>, JsonValue<'_>)]) -> bool {
    if pairs.len() <= 16 {
        return pairs
            .iter()
            .enumerate()
            .any(|(i, (k, _))| pairs[..i].iter().any(|(seen, _)| seen == k));
    }
    let mut keys = HashSet::with_capacity(pairs.len());
    !pairs.iter().all(|(k, _)| keys.insert(&**k))
}

fn fits(n: usize, min: usize, max: Option<usize>) -> bool {
    n >= min && max.is_none_or(|m| n <= m)
}

/// CHECK of a parsed scalar (or an `any` value) against a leaf node, as the decoder checks the parsed objects.
fn leaf_fine(node: &Node, v: &JsonValue<'_>) -> bool {
    match (node, v) {
        (Node::Str(min, max), JsonValue::Str(s)) => {
            (*min == 0 && max.is_none()) || fits(s.chars().count(), *min, *max)
        }
        (Node::Int(bounds, multiple_of), JsonValue::Int(n)) => {
            let n = i128::from(*n);
            bounds.hold(n) && multiple_of.is_none_or(|m| n % m == 0)
        }
        (Node::Float(bounds), JsonValue::Float(f)) => f.is_finite() && bounds.hold(*f),
        #[allow(clippy::cast_precision_loss)]
        (Node::Float(bounds), JsonValue::Int(n)) => Bounds::hold(bounds, *n as f64),
        (Node::Bool, JsonValue::Bool(_)) | (Node::Null, JsonValue::Null) => true,
        (Node::Any, _) => numbers_fine(v, 0),
        (Node::Lookup(table), _) => table.has(v),
        _ => false,
    }
}

/// Whether every number in `v` is an int within 64 bits or a finite float (containers up to `MAX_DEPTH`).
fn numbers_fine(v: &JsonValue<'_>, depth: usize) -> bool {
    match v {
        JsonValue::BigInt => false,
        JsonValue::Float(f) => f.is_finite(),
        JsonValue::Array(items) => {
            depth < MAX_DEPTH && items.iter().all(|item| numbers_fine(item, depth + 1))
        }
        JsonValue::Object(pairs) => {
            depth < MAX_DEPTH && pairs.iter().all(|(_, item)| numbers_fine(item, depth + 1))
        }
        _ => true,
    }
}

impl Table {
    /// Whether the JSON scalar `v` is in the table (as `find` looks a parsed object up).
    fn has(&self, v: &JsonValue<'_>) -> bool {
        match v {
            JsonValue::Str(s) => self.strs.get(&**s).is_some(),
            JsonValue::Int(n) => self.ints.get(n).is_some(),
            JsonValue::Bool(b) => self.bools[usize::from(*b)].is_some(),
            JsonValue::Null => self.none.is_some(),
            _ => false,
        }
    }
}

/// The error pydantic surely gives the JSON scalar or container `v` (it failed CHECK against the leaf `node`).
fn failure(node: &Node, v: &JsonValue<'_>) -> Option<Kind> {
    let container = matches!(
        v,
        JsonValue::Null | JsonValue::Array(_) | JsonValue::Object(_)
    );
    match (node, v) {
        (Node::Str(..), _) => {
            (matches!(v, JsonValue::Bool(_)) || container).then_some(Kind::StringType)
        }
        (Node::Int(..), JsonValue::Str(s)) => no_digit(s).then_some(Kind::IntParsing),
        (Node::Int(..), JsonValue::Float(f)) => {
            (f.is_finite() && f.fract() != 0.0).then_some(Kind::IntFromFloat)
        }
        (Node::Int(..), _) => container.then_some(Kind::IntType),
        (Node::Float(_), JsonValue::Str(s)) => {
            let lowered = s.to_lowercase();
            (no_digit(s) && !lowered.contains("inf") && !lowered.contains("nan"))
                .then_some(Kind::FloatParsing)
        }
        (Node::Float(_), _) => container.then_some(Kind::FloatType),
        (Node::Bool, JsonValue::Str(s)) => {
            let word = s.is_ascii()
                && BOOL_WORDS.contains(
                    &s.trim_matches([' ', '\t', '\n', '\r'])
                        .to_ascii_lowercase()
                        .as_str(),
                );
            (!word).then_some(Kind::BoolParsing)
        }
        (Node::Bool, JsonValue::Int(n)) => (*n != 0 && *n != 1).then_some(Kind::BoolParsing),
        (Node::Bool, _) => container.then_some(Kind::BoolType),
        _ => None,
    }
}

/// Whether `s` (short enough to be judged) has no ASCII digit: no number parse of pydantic takes it.
fn no_digit(s: &str) -> bool {
    s.chars().count() <= PARSED_LENGTH && !s.bytes().any(|b| b.is_ascii_digit())
}
