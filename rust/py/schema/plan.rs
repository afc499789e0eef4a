//! The accept plan: a fast check of the Python objects `validate_json` parsed against the common
//! subset of JSON Schema 2020-12 that tool schemas use, before (and mostly instead of) the
//! `jsonschema` crate.
//!
//! A [`Plan`] answers [`Verdict::Accept`] only when the crate surely accepts the instance (and every
//! value in it is what [`super::objects::plain`] accepts), [`Verdict::Reject`] only when the crate
//! surely rejects it, and [`Verdict::Unsure`] otherwise; the caller then asks the crate, whose
//! answer and error list stay the only ones a user sees. Planned keywords: `type` (a name or a
//! list), `enum`/`const` of scalars, `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum`,
//! `minLength`/`maxLength`, `required`, `properties`, `additionalProperties`, `minProperties`/
//! `maxProperties`, `prefixItems`, `items`, `minItems`/`maxItems`, `allOf`/`anyOf`/`oneOf`, local
//! `$ref` (JSON pointers into the document, recursion included) and annotations (`title`,
//! `description`, `default`, `examples`, `$comment`, `deprecated`, `readOnly`, `writeOnly`,
//! `format`, which 2020-12 only annotates by default, `discriminator`, which the crate does not
//! know). A subschema with any other keyword is unplanned (it answers `Unsure`), as is a whole
//! schema of another draft or with `$id`, anchors or dynamic references.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use serde_json::{Map, Value};

use super::objects::plain;
use crate::py::json;

/// What the plan knows about an instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The crate accepts it (and the tree is plain).
    Accept,
    /// The crate rejects it.
    Reject,
    /// Ask the crate.
    Unsure,
}

impl Verdict {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Verdict::Accept => "accept",
            Verdict::Reject => "reject",
            Verdict::Unsure => "unsure",
        }
    }
}

const STRING: u8 = 1;
const INTEGER: u8 = 2;
const NUMBER: u8 = 4;
const BOOLEAN: u8 = 8;
const NULL: u8 = 16;
const OBJECT: u8 = 32;
const ARRAY: u8 = 64;
const ANY: u8 = 127;

/// Plan evaluations deeper than this answer `Unsure` (a `$ref` cycle that consumes no instance).
const MAX_EVAL_DEPTH: u32 = 400;

/// Subschema evaluations one check may make before it answers `Unsure` (`anyOf` of `$ref` cycles
/// would otherwise branch exponentially; a 178 KB argument table needs about 30 000).
const MAX_STEPS: u32 = 200_000;

/// Integers up to this magnitude are exact as `f64`: mixed comparisons below it are exact.
const EXACT_F64: f64 = 9_007_199_254_740_992.0;

/// A number of the schema (a bound or an `enum`/`const` value).
#[derive(Clone, Copy, Debug)]
enum Num {
    Int(i64),
    Float(f64),
}

/// A scalar `enum`/`const` value; `Other` stands for what the plan does not compare (containers,
/// integers beyond `i64`).
#[derive(Debug)]
enum Scalar {
    /// The text and the same as an interned `str` (an instance that is this very object is equal).
    Str(Box<str>, Py<PyString>),
    Bool(bool),
    Null,
    Num(Num),
    Other,
}

#[derive(Clone, Copy, Debug)]
enum Limit {
    Min,
    Max,
    ExclusiveMin,
    ExclusiveMax,
}

#[derive(Debug)]
enum Additional {
    /// Absent or `true`: other members are not looked at.
    Any,
    False,
    Schema(usize),
}

/// A compiled subschema.
#[derive(Debug)]
enum Node {
    True,
    False,
    Unplanned,
    Schema(Box<Schema>),
}

/// One entry of `properties`.
#[derive(Debug)]
struct Property {
    name: Box<str>,
    /// The name as an interned `str`, to look the member up.
    key: Py<PyString>,
    node: usize,
    /// Whether `required` names it (counted as the properties are found).
    required: bool,
}

#[derive(Debug)]
struct Schema {
    types: u8,
    limits: Vec<(Limit, Num)>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    /// Each list must hold a value equal to the instance (`enum`; `const` is a list of one).
    choices: Vec<Vec<Scalar>>,
    /// Required names that are not in `properties` (looked up in the dict).
    required: Vec<Py<PyString>>,
    properties: Vec<Property>,
    /// How many names of `properties` are required.
    required_properties: usize,
    /// The names of `properties`, for schemas with many.
    property_names: Option<HashSet<Box<str>>>,
    additional: Additional,
    /// `properties` or `additionalProperties` present: the members are walked.
    walks_members: bool,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    prefix_items: Vec<usize>,
    items: Option<usize>,
    walks_items: bool,
    min_items: Option<u64>,
    max_items: Option<u64>,
    /// `allOf` members and the `$ref` target.
    all_of: Vec<usize>,
    any_of: Vec<usize>,
    one_of: Vec<usize>,
    /// Only a `$ref` (or one `allOf` member): references to the node go to its target.
    alias: Option<usize>,
    /// Any of `enum`, `const`, the numeric limits, `minLength`, `maxLength`.
    checks_scalars: bool,
    /// Any of `allOf`, `anyOf`, `oneOf`, `$ref`.
    applies: bool,
    /// An `Accept` here implies the members of a dict instance were checked (else `plain` runs).
    covers_objects: bool,
    covers_arrays: bool,
}

impl Schema {
    fn empty() -> Self {
        Schema {
            types: ANY,
            limits: Vec::new(),
            min_length: None,
            max_length: None,
            choices: Vec::new(),
            required: Vec::new(),
            properties: Vec::new(),
            required_properties: 0,
            property_names: None,
            additional: Additional::Any,
            walks_members: false,
            min_properties: None,
            max_properties: None,
            prefix_items: Vec::new(),
            items: None,
            walks_items: false,
            min_items: None,
            max_items: None,
            all_of: Vec::new(),
            any_of: Vec::new(),
            one_of: Vec::new(),
            alias: None,
            checks_scalars: true,
            applies: true,
            covers_objects: false,
            covers_arrays: false,
        }
    }

    fn is_property(&self, name: &str) -> bool {
        match &self.property_names {
            Some(names) => names.contains(name),
            None => self.properties.iter().any(|p| p.name.as_ref() == name),
        }
    }

    /// Whether a dict (or list, with `arrays`) instance is never accepted here.
    fn excludes(&self, bit: u8) -> bool {
        self.types & bit == 0
            || self
                .choices
                .iter()
                .any(|c| !c.iter().any(|s| matches!(s, Scalar::Other)))
    }
}

const ANNOTATIONS: [&str; 12] = [
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "discriminator",
    "$defs",
    "definitions",
];

/// Keys that make the whole schema unplanned wherever they appear (base URIs, anchors, dynamic
/// scopes, vocabularies, embedded dialects).
const UNPLANNED_ANYWHERE: [&str; 8] = [
    "$id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "$schema",
];

const DRAFT_2020_12: [&str; 2] = [
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2020-12/schema#",
];

/// Checks between two seedings of the parser's string cache with a plan's strings.
const RESEED_EVERY: u32 = 64;

/// A compiled accept plan of one schema.
#[derive(Debug)]
pub(crate) struct Plan {
    nodes: Vec<Node>,
    root: usize,
    /// Checks made (for [`RESEED_EVERY`]).
    checks: AtomicU32,
}

impl Plan {
    /// The plan of `schema`, or `None` when the schema is not 2020-12 (by `$schema`, else the
    /// default) or uses identifiers, anchors or dynamic references anywhere.
    pub(crate) fn compile(py: Python<'_>, schema: &Value) -> Option<Plan> {
        if let Value::Object(map) = schema {
            match map.get("$schema") {
                None => {}
                Some(Value::String(s)) if DRAFT_2020_12.contains(&s.as_str()) => {}
                Some(_) => return None,
            }
            let nested = map
                .iter()
                .filter(|(k, _)| k.as_str() != "$schema")
                .any(|(_, v)| has_unplanned_key(v, 0));
            if nested
                || map
                    .keys()
                    .any(|k| k != "$schema" && UNPLANNED_ANYWHERE.contains(&k.as_str()))
            {
                return None;
            }
        }
        let mut compiler = Compiler {
            py,
            root: schema,
            nodes: Vec::new(),
            seen: HashMap::new(),
        };
        compiler.node(schema, 0);
        let mut plan = Plan {
            nodes: compiler.nodes,
            root: 0,
            checks: AtomicU32::new(0),
        };
        plan.settle_aliases();
        plan.settle_coverage();
        plan.seed(py);
        Some(plan)
    }

    /// The plan's property names and `enum`/`const` strings put in the parser's string cache
    /// ([`json::seed_str_cache`]): parses then hand out these very objects, so a member is found by a
    /// pointer comparison (no text comparison, no hashing) and an `enum` string matches by identity.
    fn seed(&self, py: Python<'_>) {
        let schemas = self.nodes.iter().filter_map(|node| match node {
            Node::Schema(s) => Some(s),
            _ => None,
        });
        let names = schemas.flat_map(|s| {
            let properties = s.properties.iter().map(|p| (p.name.as_ref(), &p.key));
            let choices = s.choices.iter().flatten().filter_map(|c| match c {
                Scalar::Str(text, key) => Some((text.as_ref(), key)),
                _ => None,
            });
            properties.chain(choices)
        });
        json::seed_str_cache(py, names);
    }

    /// The verdict on `instance` (the root node is the first). Every [`RESEED_EVERY`] checks the
    /// plan's strings go back into the parser's cache, where other strings may have taken their slots.
    pub(crate) fn check(&self, instance: &Bound<'_, PyAny>) -> Verdict {
        if self.checks.fetch_add(1, Ordering::Relaxed) % RESEED_EVERY == RESEED_EVERY - 1 {
            self.seed(instance.py());
        }
        self.eval(self.root, instance, 0, &Cell::new(MAX_STEPS))
    }

    /// Each reference to a node that is only a `$ref` (an alias) made to its final target, and the
    /// node flags the evaluation reads set.
    fn settle_aliases(&mut self) {
        let targets: Vec<usize> = (0..self.nodes.len()).map(|n| self.target(n)).collect();
        let to = |n: &mut usize| *n = targets[*n];
        for node in &mut self.nodes {
            if let Node::Schema(s) = node {
                s.properties.iter_mut().for_each(|p| to(&mut p.node));
                if let Additional::Schema(n) = &mut s.additional {
                    to(n);
                }
                s.prefix_items.iter_mut().for_each(to);
                s.items.iter_mut().for_each(to);
                s.all_of.iter_mut().for_each(to);
                s.any_of.iter_mut().for_each(to);
                s.one_of.iter_mut().for_each(to);
                s.checks_scalars = !(s.choices.is_empty()
                    && s.limits.is_empty()
                    && s.min_length.is_none()
                    && s.max_length.is_none());
                s.applies = !(s.all_of.is_empty() && s.any_of.is_empty() && s.one_of.is_empty());
            }
        }
        self.root = targets[self.root];
    }

    /// The node `n` stands for: the end of its alias chain (`n` itself on a cycle).
    fn target(&self, n: usize) -> usize {
        let mut at = n;
        for _ in 0..self.nodes.len() {
            match &self.nodes[at] {
                Node::Schema(s) if s.alias.is_some() => at = s.alias.unwrap_or(at),
                _ => return at,
            }
        }
        n
    }

    /// Least fixpoint of the `covers_*` flags over the (possibly cyclic) node graph.
    fn settle_coverage(&mut self) {
        loop {
            let mut changed = false;
            for i in 0..self.nodes.len() {
                let (objects, arrays) = match &self.nodes[i] {
                    Node::Schema(s) => (
                        s.walks_members || s.excludes(OBJECT) || self.some_covers(s, true),
                        s.walks_items || s.excludes(ARRAY) || self.some_covers(s, false),
                    ),
                    _ => continue,
                };
                if let Node::Schema(s) = &mut self.nodes[i] {
                    if (objects && !s.covers_objects) || (arrays && !s.covers_arrays) {
                        s.covers_objects |= objects;
                        s.covers_arrays |= arrays;
                        changed = true;
                    }
                }
            }
            if !changed {
                return;
            }
        }
    }

    fn covers(&self, node: usize, objects: bool) -> bool {
        match &self.nodes[node] {
            Node::True => false,
            Node::False | Node::Unplanned => true,
            Node::Schema(s) if objects => s.covers_objects,
            Node::Schema(s) => s.covers_arrays,
        }
    }

    fn some_covers(&self, s: &Schema, objects: bool) -> bool {
        let all =
            |nodes: &[usize]| !nodes.is_empty() && nodes.iter().all(|&n| self.covers(n, objects));
        s.all_of.iter().any(|&n| self.covers(n, objects)) || all(&s.any_of) || all(&s.one_of)
    }

    fn eval(
        &self,
        node: usize,
        instance: &Bound<'_, PyAny>,
        depth: u32,
        steps: &Cell<u32>,
    ) -> Verdict {
        if depth > MAX_EVAL_DEPTH || steps.get() == 0 {
            return Verdict::Unsure;
        }
        steps.set(steps.get() - 1);
        let schema = match &self.nodes[node] {
            Node::True => {
                return if plain(instance) {
                    Verdict::Accept
                } else {
                    Verdict::Unsure
                }
            }
            Node::False => return Verdict::Reject,
            Node::Unplanned => return Verdict::Unsure,
            Node::Schema(s) => s,
        };
        let Some(value) = Instance::of(instance) else {
            return Verdict::Unsure;
        };
        let mut out = Conjunction::default();
        if out.rejects(type_verdict(schema.types, &value)) {
            return Verdict::Reject;
        }
        let own = schema.checks_scalars || matches!(value, Instance::Dict(_) | Instance::List(_));
        if own && out.rejects(self.own(schema, &value, depth, steps)) {
            return Verdict::Reject;
        }
        if schema.applies {
            out.add(self.applicators(schema, instance, depth, steps));
        }
        let verdict = out.verdict();
        if verdict == Verdict::Accept {
            let uncovered = match value {
                Instance::Dict(_) => !schema.covers_objects,
                Instance::List(_) => !schema.covers_arrays,
                _ => false,
            };
            if uncovered && !plain(instance) {
                return Verdict::Unsure;
            }
        }
        verdict
    }

    /// The keywords of the instance's own kind.
    fn own(
        &self,
        schema: &Schema,
        value: &Instance<'_, '_>,
        depth: u32,
        steps: &Cell<u32>,
    ) -> Verdict {
        let mut out = Conjunction::default();
        for choices in &schema.choices {
            out.add(choice_verdict(choices, value));
        }
        match value {
            Instance::Int(_) | Instance::Float(_) => {
                for (limit, bound) in &schema.limits {
                    out.add(limit_verdict(*limit, *bound, value));
                }
            }
            Instance::Str(s) if schema.min_length.is_some() || schema.max_length.is_some() => {
                out.add(length_verdict(schema, s));
            }
            Instance::Dict(d) => out.add(self.dict(schema, d, depth, steps)),
            Instance::List(l) => out.add(self.list(schema, l, depth, steps)),
            _ => {}
        }
        out.verdict()
    }

    fn dict(
        &self,
        schema: &Schema,
        d: &Bound<'_, PyDict>,
        depth: u32,
        steps: &Cell<u32>,
    ) -> Verdict {
        let len = d.len();
        let count = len as u64;
        if schema.min_properties.is_some_and(|m| count < m)
            || schema.max_properties.is_some_and(|m| count > m)
        {
            return Verdict::Reject;
        }
        let mut out = Conjunction::default();
        for key in &schema.required {
            match d.contains(key.bind(d.py())) {
                Ok(true) => {}
                Ok(false) => return Verdict::Reject,
                Err(_) => out.add(Verdict::Unsure),
            }
        }
        if !schema.walks_members {
            return out.verdict();
        }
        // Each property looked up by its interned name (which the parse's keys mostly are, see
        // [`Plan::seed`]); the other members only when there are some.
        let (mut found, mut required) = (0, 0);
        for property in &schema.properties {
            match d.get_item(property.key.bind(d.py())) {
                Ok(Some(member)) => {
                    found += 1;
                    required += usize::from(property.required);
                    if out.rejects(self.eval(property.node, &member, depth + 1, steps)) {
                        return Verdict::Reject;
                    }
                }
                Ok(None) => {}
                Err(_) => return Verdict::Unsure,
            }
        }
        if required < schema.required_properties {
            return Verdict::Reject;
        }
        if found < len {
            out.add(self.other_members(schema, d, depth, steps));
        }
        out.verdict()
    }

    /// The members of `d` that are not in `properties`, under `additionalProperties`.
    fn other_members(
        &self,
        schema: &Schema,
        d: &Bound<'_, PyDict>,
        depth: u32,
        steps: &Cell<u32>,
    ) -> Verdict {
        if matches!(schema.additional, Additional::False) {
            return Verdict::Reject;
        }
        let mut out = Conjunction::default();
        for (key, member) in d.iter() {
            let Some(name) = key
                .cast_exact::<PyString>()
                .ok()
                .and_then(|k| k.to_str().ok())
            else {
                return Verdict::Unsure;
            };
            if schema.is_property(name) {
                continue;
            }
            let verdict = match schema.additional {
                Additional::Schema(n) => self.eval(n, &member, depth + 1, steps),
                _ => leaf(&member),
            };
            if out.rejects(verdict) {
                return Verdict::Reject;
            }
        }
        out.verdict()
    }

    fn list(
        &self,
        schema: &Schema,
        l: &Bound<'_, PyList>,
        depth: u32,
        steps: &Cell<u32>,
    ) -> Verdict {
        let len = l.len() as u64;
        if schema.min_items.is_some_and(|m| len < m) || schema.max_items.is_some_and(|m| len > m) {
            return Verdict::Reject;
        }
        if !schema.walks_items {
            return Verdict::Accept;
        }
        all(l.iter().enumerate().map(|(i, item)| {
            match schema.prefix_items.get(i).or(schema.items.as_ref()) {
                Some(n) => self.eval(*n, &item, depth + 1, steps),
                None => leaf(&item),
            }
        }))
    }

    fn applicators(
        &self,
        schema: &Schema,
        instance: &Bound<'_, PyAny>,
        depth: u32,
        steps: &Cell<u32>,
    ) -> Verdict {
        let mut out = Conjunction::default();
        let eval = |n: &usize| self.eval(*n, instance, depth + 1, steps);
        if out.rejects(all(schema.all_of.iter().map(eval))) {
            return Verdict::Reject;
        }
        if !schema.any_of.is_empty() {
            let mut unsure = false;
            let mut accepted = false;
            for &n in &schema.any_of {
                match self.eval(n, instance, depth + 1, steps) {
                    Verdict::Accept => {
                        accepted = true;
                        break;
                    }
                    Verdict::Unsure => unsure = true,
                    Verdict::Reject => {}
                }
            }
            out.add(if accepted {
                Verdict::Accept
            } else if unsure {
                Verdict::Unsure
            } else {
                Verdict::Reject
            });
        }
        if !schema.one_of.is_empty() {
            let mut accepted = 0;
            let mut unsure = false;
            for &n in &schema.one_of {
                match self.eval(n, instance, depth + 1, steps) {
                    Verdict::Accept => accepted += 1,
                    Verdict::Unsure => unsure = true,
                    Verdict::Reject => {}
                }
            }
            out.add(match (accepted, unsure) {
                (2.., _) | (0, false) => Verdict::Reject,
                (1, false) => Verdict::Accept,
                _ => Verdict::Unsure,
            });
        }
        out.verdict()
    }
}

/// The verdict of keywords or members that must all hold, drawn lazily from `verdicts`: `Reject` as
/// soon as one rejects (the rest are not evaluated), else `Unsure` if one is, else `Accept`.
fn all(verdicts: impl Iterator<Item = Verdict>) -> Verdict {
    let mut out = Verdict::Accept;
    for verdict in verdicts {
        match verdict {
            Verdict::Reject => return Verdict::Reject,
            Verdict::Unsure => out = Verdict::Unsure,
            Verdict::Accept => {}
        }
    }
    out
}

/// A member or item no subschema applies to: accepted if plain.
fn leaf(value: &Bound<'_, PyAny>) -> Verdict {
    if plain(value) {
        Verdict::Accept
    } else {
        Verdict::Unsure
    }
}

/// The verdicts of several keywords that must all hold.
#[derive(Default)]
struct Conjunction {
    rejected: bool,
    unsure: bool,
}

impl Conjunction {
    fn add(&mut self, verdict: Verdict) {
        match verdict {
            Verdict::Reject => self.rejected = true,
            Verdict::Unsure => self.unsure = true,
            Verdict::Accept => {}
        }
    }

    /// Adds `verdict`; `true` when it rejects, so the caller answers `Reject` at once.
    fn rejects(&mut self, verdict: Verdict) -> bool {
        self.add(verdict);
        self.rejected
    }

    fn verdict(&self) -> Verdict {
        if self.rejected {
            Verdict::Reject
        } else if self.unsure {
            Verdict::Unsure
        } else {
            Verdict::Accept
        }
    }
}

/// A value of a parsed tree, its kind read once; `None` from [`Instance::of`] for what is not
/// plain (other types, integers beyond `i64`, non-finite floats).
enum Instance<'a, 'py> {
    Str(&'a Bound<'py, PyString>),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
    Dict(&'a Bound<'py, PyDict>),
    List(&'a Bound<'py, PyList>),
}

impl<'a, 'py> Instance<'a, 'py> {
    fn of(value: &'a Bound<'py, PyAny>) -> Option<Self> {
        if let Ok(s) = value.cast_exact::<PyString>() {
            return Some(Instance::Str(s));
        }
        if let Ok(d) = value.cast_exact::<PyDict>() {
            return Some(Instance::Dict(d));
        }
        if let Ok(l) = value.cast_exact::<PyList>() {
            return Some(Instance::List(l));
        }
        if value.is_exact_instance_of::<PyInt>() {
            return value.extract::<i64>().ok().map(Instance::Int);
        }
        if let Ok(f) = value.cast_exact::<PyFloat>() {
            let x = f.value();
            return x.is_finite().then_some(Instance::Float(x));
        }
        if let Ok(b) = value.cast_exact::<PyBool>() {
            return Some(Instance::Bool(b.is_true()));
        }
        value.is_none().then_some(Instance::Null)
    }
}

fn type_verdict(types: u8, value: &Instance<'_, '_>) -> Verdict {
    let fits = |bit: u8| types & bit != 0;
    let ok = match value {
        Instance::Str(_) => fits(STRING),
        Instance::Int(_) => fits(INTEGER | NUMBER),
        Instance::Float(x) => {
            if fits(NUMBER) {
                true
            } else if fits(INTEGER) && x.fract() == 0.0 {
                return Verdict::Unsure; // JSON Schema counts 1.0 as an integer; the crate decides
            } else {
                false
            }
        }
        Instance::Bool(_) => fits(BOOLEAN),
        Instance::Null => fits(NULL),
        Instance::Dict(_) => fits(OBJECT),
        Instance::List(_) => fits(ARRAY),
    };
    if ok {
        Verdict::Accept
    } else {
        Verdict::Reject
    }
}

/// Whether the instance number equals `n` mathematically; `None` when the plan does not decide.
fn equal_number(value: &Instance<'_, '_>, n: Num) -> Option<bool> {
    match (value, n) {
        (Instance::Int(i), Num::Int(j)) => Some(*i == j),
        (Instance::Float(x), Num::Float(y)) => Some(*x == y),
        (Instance::Int(i), Num::Float(y)) if (*i as f64).abs() < EXACT_F64 => Some(*i as f64 == y),
        (Instance::Float(x), Num::Int(j)) if (j as f64).abs() < EXACT_F64 => Some(*x == j as f64),
        _ => None,
    }
}

fn choice_verdict(choices: &[Scalar], value: &Instance<'_, '_>) -> Verdict {
    let text = match value {
        Instance::Str(s) => {
            let same = |c: &Scalar| matches!(c, Scalar::Str(_, k) if k.as_ptr() == s.as_ptr());
            if choices.iter().any(same) {
                return Verdict::Accept;
            }
            match s.to_str() {
                Ok(t) => Some(t),
                Err(_) => return Verdict::Unsure,
            }
        }
        _ => None,
    };
    let mut unsure = false;
    for choice in choices {
        let equal = match (choice, value) {
            (Scalar::Str(c, _), Instance::Str(_)) => Some(text == Some(c.as_ref())),
            (Scalar::Bool(c), Instance::Bool(b)) => Some(c == b),
            (Scalar::Null, Instance::Null) => Some(true),
            (Scalar::Num(n), Instance::Int(_) | Instance::Float(_)) => equal_number(value, *n),
            (
                Scalar::Other,
                Instance::Int(_) | Instance::Float(_) | Instance::Dict(_) | Instance::List(_),
            ) => None,
            _ => Some(false),
        };
        match equal {
            Some(true) => return Verdict::Accept,
            Some(false) => {}
            None => unsure = true,
        }
    }
    if unsure {
        Verdict::Unsure
    } else {
        Verdict::Reject
    }
}

/// `value <op> bound` as the crate compares numbers (mathematically); `Unsure` past exact `f64`.
fn limit_verdict(limit: Limit, bound: Num, value: &Instance<'_, '_>) -> Verdict {
    let order = match (value, bound) {
        (Instance::Int(i), Num::Int(j)) => i.cmp(&j),
        (Instance::Float(x), Num::Float(y)) => match x.partial_cmp(&y) {
            Some(o) => o,
            None => return Verdict::Unsure,
        },
        (Instance::Int(i), Num::Float(y))
            if (*i as f64).abs() < EXACT_F64 && y.abs() < EXACT_F64 =>
        {
            match (*i as f64).partial_cmp(&y) {
                Some(o) => o,
                None => return Verdict::Unsure,
            }
        }
        (Instance::Float(x), Num::Int(j))
            if x.abs() < EXACT_F64 && (j as f64).abs() < EXACT_F64 =>
        {
            match x.partial_cmp(&(j as f64)) {
                Some(o) => o,
                None => return Verdict::Unsure,
            }
        }
        _ => return Verdict::Unsure,
    };
    let ok = match limit {
        Limit::Min => order.is_ge(),
        Limit::Max => order.is_le(),
        Limit::ExclusiveMin => order.is_gt(),
        Limit::ExclusiveMax => order.is_lt(),
    };
    if ok {
        Verdict::Accept
    } else {
        Verdict::Reject
    }
}

/// `minLength`/`maxLength` in code points, as the crate counts them (`Unsure` for a `str` that is
/// not valid Unicode, which the crate does not read as a string there).
fn length_verdict(schema: &Schema, s: &Bound<'_, PyString>) -> Verdict {
    let Ok(text) = s.to_str() else {
        return Verdict::Unsure;
    };
    let len = text.chars().count() as u64;
    if schema.min_length.is_some_and(|m| len < m) || schema.max_length.is_some_and(|m| len > m) {
        Verdict::Reject
    } else {
        Verdict::Accept
    }
}

fn has_unplanned_key(value: &Value, depth: usize) -> bool {
    if depth > crate::schema::MAX_DEPTH {
        return true;
    }
    match value {
        Value::Object(map) => map.iter().any(|(k, v)| {
            UNPLANNED_ANYWHERE.contains(&k.as_str()) || has_unplanned_key(v, depth + 1)
        }),
        Value::Array(items) => items.iter().any(|v| has_unplanned_key(v, depth + 1)),
        _ => false,
    }
}

struct Compiler<'s, 'py> {
    py: Python<'py>,
    root: &'s Value,
    nodes: Vec<Node>,
    /// Subschema address -> node, so `$ref` cycles close.
    seen: HashMap<usize, usize>,
}

impl<'s> Compiler<'s, '_> {
    fn node(&mut self, schema: &'s Value, depth: usize) -> usize {
        let address = std::ptr::from_ref(schema) as usize;
        if let Some(&n) = self.seen.get(&address) {
            return n;
        }
        let n = self.nodes.len();
        self.nodes.push(Node::Unplanned);
        self.seen.insert(address, n);
        let node = match schema {
            Value::Bool(true) => Node::True,
            Value::Bool(false) => Node::False,
            Value::Object(map) if depth <= crate::schema::MAX_DEPTH => self
                .schema(map, depth)
                .map_or(Node::Unplanned, |s| Node::Schema(Box::new(s))),
            _ => Node::Unplanned,
        };
        self.nodes[n] = node;
        n
    }

    fn subschemas(&mut self, value: &'s Value, depth: usize) -> Option<Vec<usize>> {
        let items = value.as_array()?;
        Some(items.iter().map(|v| self.node(v, depth + 1)).collect())
    }

    /// The planned form of an object schema; `None` when a keyword is not planned.
    fn schema(&mut self, map: &'s Map<String, Value>, depth: usize) -> Option<Schema> {
        let mut s = Schema::empty();
        let mut required: Vec<&str> = Vec::new();
        for (key, value) in map {
            match key.as_str() {
                k if ANNOTATIONS.contains(&k) || k.starts_with("x-") => {}
                "$schema" if depth == 0 => {}
                "type" => s.types = types_of(value)?,
                "enum" => s.choices.push(
                    value
                        .as_array()?
                        .iter()
                        .map(|v| scalar(self.py, v))
                        .collect(),
                ),
                "const" => s.choices.push(vec![scalar(self.py, value)]),
                "minimum" => s.limits.push((Limit::Min, num(value)?)),
                "maximum" => s.limits.push((Limit::Max, num(value)?)),
                "exclusiveMinimum" => s.limits.push((Limit::ExclusiveMin, num(value)?)),
                "exclusiveMaximum" => s.limits.push((Limit::ExclusiveMax, num(value)?)),
                "minLength" => s.min_length = Some(value.as_u64()?),
                "maxLength" => s.max_length = Some(value.as_u64()?),
                "minItems" => s.min_items = Some(value.as_u64()?),
                "maxItems" => s.max_items = Some(value.as_u64()?),
                "minProperties" => s.min_properties = Some(value.as_u64()?),
                "maxProperties" => s.max_properties = Some(value.as_u64()?),
                "required" => {
                    for name in value.as_array()? {
                        let name = name.as_str()?;
                        if !required.contains(&name) {
                            required.push(name);
                        }
                    }
                }
                "properties" => {
                    s.walks_members = true;
                    for (name, sub) in value.as_object()? {
                        let n = self.node(sub, depth + 1);
                        s.properties.push(Property {
                            name: name.as_str().into(),
                            key: PyString::intern(self.py, name).unbind(),
                            node: n,
                            required: false,
                        });
                    }
                }
                "additionalProperties" => {
                    s.walks_members = true;
                    s.additional = match value {
                        Value::Bool(true) => Additional::Any,
                        Value::Bool(false) => Additional::False,
                        _ => Additional::Schema(self.node(value, depth + 1)),
                    };
                }
                "prefixItems" => {
                    s.walks_items = true;
                    s.prefix_items = self.subschemas(value, depth)?;
                }
                "items" => {
                    s.walks_items = true;
                    s.items = Some(self.node(value, depth + 1));
                }
                "allOf" => s.all_of.extend(self.subschemas(value, depth)?),
                "anyOf" => s.any_of = self.subschemas(value, depth)?,
                "oneOf" => s.one_of = self.subschemas(value, depth)?,
                "$ref" => {
                    let target = resolve(self.root, value.as_str()?)?;
                    s.all_of.push(self.node(target, depth + 1));
                }
                _ => return None,
            }
        }
        for name in required {
            match s.properties.iter_mut().find(|p| p.name.as_ref() == name) {
                Some(property) => {
                    property.required = true;
                    s.required_properties += 1;
                }
                None => s.required.push(PyString::intern(self.py, name).unbind()),
            }
        }
        let alone = s.types == ANY
            && s.limits.is_empty()
            && s.min_length.is_none()
            && s.max_length.is_none()
            && s.choices.is_empty()
            && s.required.is_empty()
            && !s.walks_members
            && s.min_properties.is_none()
            && s.max_properties.is_none()
            && !s.walks_items
            && s.min_items.is_none()
            && s.max_items.is_none()
            && s.any_of.is_empty()
            && s.one_of.is_empty();
        if alone && s.all_of.len() == 1 {
            s.alias = Some(s.all_of[0]);
        }
        if s.properties.len() > 16 {
            s.property_names = Some(s.properties.iter().map(|p| p.name.clone()).collect());
        }
        Some(s)
    }
}

/// The subschema a local `$ref` points at: `#` or `#/json/pointer` (no percent-encoding).
fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.contains('%') || !(pointer.is_empty() || pointer.starts_with('/')) {
        return None;
    }
    root.pointer(pointer)
}

fn types_of(value: &Value) -> Option<u8> {
    let one = |name: &str| match name {
        "string" => Some(STRING),
        "integer" => Some(INTEGER),
        "number" => Some(NUMBER),
        "boolean" => Some(BOOLEAN),
        "null" => Some(NULL),
        "object" => Some(OBJECT),
        "array" => Some(ARRAY),
        _ => None,
    };
    match value {
        Value::String(name) => one(name),
        Value::Array(names) => names
            .iter()
            .try_fold(0, |acc, v| Some(acc | one(v.as_str()?)?)),
        _ => None,
    }
}

fn num(value: &Value) -> Option<Num> {
    let n = value.as_number()?;
    if let Some(i) = n.as_i64() {
        Some(Num::Int(i))
    } else if n.is_f64() {
        n.as_f64().map(Num::Float)
    } else {
        None
    }
}

fn scalar(py: Python<'_>, value: &Value) -> Scalar {
    match value {
        Value::String(s) => Scalar::Str(s.as_str().into(), PyString::intern(py, s).unbind()),
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Null => Scalar::Null,
        Value::Number(_) => num(value).map_or(Scalar::Other, Scalar::Num),
        _ => Scalar::Other,
    }
}
