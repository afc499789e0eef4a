//! `parse_arguments` for Python: the readings of [`modes`] with Python objects built by jiter, and the
//! argument conversions (`str`, `bytes`, `dict`; `mode`; `max_depth`).

use jiter::{FloatMode, PartialMode, PythonParse, StringCacheMode};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString};

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard, TryLockError};

use crate::errors::CoreError;
use crate::json;
use crate::json::modes::{self, Build, Parsed};
use crate::json::onepass::{self, Sink, Top};
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

/// Python strings of 2 to 63 bytes (keys, short values) kept across parses, as jiter's string
/// cache keeps them for `jiter.from_json`: one slot per hash, a new string replaces the old one.
/// Each slot holds the string's bytes too, so a lookup compares them without asking Python.
struct StrCache(Vec<Option<Cached>>);

struct Cached {
    hash: u64,
    words: (u64, u64),
    len: usize,
    bytes: [u8; 64],
    string: Py<PyString>,
}

/// Slots in [`StrCache`]: `1 << CACHE_BITS`.
const CACHE_BITS: u32 = 12;
const CACHE_SLOTS: usize = 1 << CACHE_BITS;

/// The one [`StrCache`]; a parse holds it throughout (one lock per parse). A parse that finds it
/// held (another thread, free-threaded Python) builds its strings without it.
static STR_CACHE: Mutex<StrCache> = Mutex::new(StrCache(Vec::new()));

/// The first and last 8 bytes of `s` (4 and 4 below 8 bytes; bytes 0, n/2 and n-1 below 4): with
/// the length, they are the whole string up to 16 bytes, so such strings compare by these words.
fn words(s: &[u8]) -> (u64, u64) {
    let word = |at: usize, len: usize| {
        let mut w = [0u8; 8];
        w[..len].copy_from_slice(&s[at..at + len]);
        u64::from_le_bytes(w)
    };
    let n = s.len();
    match n {
        8.. => (word(0, 8), word(n - 8, 8)),
        4..=7 => (word(0, 4), word(n - 4, 4)),
        1..=3 => (
            u64::from(s[0]) | u64::from(s[n / 2]) << 8,
            u64::from(s[n - 1]),
        ),
        0 => (0, 0),
    }
}

impl StrCache {
    /// The slot of `b` (2 to 63 bytes), its hash and words.
    fn slot(&mut self, b: &[u8]) -> (&mut Option<Cached>, u64, (u64, u64)) {
        if self.0.is_empty() {
            self.0.resize_with(CACHE_SLOTS, || None);
        }
        let n = b.len();
        let (lo, hi) = words(b);
        let h = (lo ^ (n as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ hi.wrapping_mul(0x517C_C1B7_2722_0A95);
        // The high bits: a product's low bits depend only on its inputs' low bits.
        let slot = &mut self.0[usize::try_from(h >> (64 - CACHE_BITS)).unwrap_or(0)];
        (slot, h, (lo, hi))
    }

    /// The cached string of text `s` (2 to 63 bytes), made and cached on a miss; borrowed from the
    /// cache (a dict key needs no reference of its own).
    fn get<'a, 'py>(&'a mut self, py: Python<'py>, s: &str) -> &'a Bound<'py, PyString> {
        let b = s.as_bytes();
        let (slot, h, words) = self.slot(b);
        let hit = slot.as_ref().is_some_and(|c| {
            c.hash == h
                && c.len == b.len()
                && c.words == words
                && (b.len() <= 16 || c.bytes.get(..b.len()) == Some(b))
        });
        if !hit {
            *slot = None;
        }
        let cached =
            slot.get_or_insert_with(|| Cached::new(h, words, b, PyString::new(py, s).unbind()));
        cached.string.bind(py)
    }

    /// `string` (whose text is `s`, 2 to 63 bytes) in its slot, replacing what was there.
    fn put(&mut self, s: &str, string: Py<PyString>) {
        let b = s.as_bytes();
        let (slot, h, words) = self.slot(b);
        *slot = Some(Cached::new(h, words, b, string));
    }
}

impl Cached {
    fn new(hash: u64, words: (u64, u64), b: &[u8], string: Py<PyString>) -> Self {
        let mut bytes = [0; 64];
        bytes[..b.len()].copy_from_slice(b);
        Cached {
            hash,
            words,
            len: b.len(),
            bytes,
            string,
        }
    }
}

/// Whether the string cache keeps strings of text `s` (2 to 63 bytes).
pub(crate) fn cached_len(s: &str) -> bool {
    (2..64).contains(&s.len())
}

/// Puts `strings` (each with its text; those of 2 to 63 bytes) in the string cache, so the next parses
/// hand out these very objects for their text until another string takes a slot: the accept plan
/// finds a dict member by its key's identity this way. Nothing happens while another parse holds the
/// cache. Only which equal `str` object a parse returns changes, never its value.
pub(crate) fn seed_str_cache<'a>(
    py: Python<'_>,
    strings: impl IntoIterator<Item = (&'a str, &'a Py<PyString>)>,
) {
    let mut cache = match STR_CACHE.try_lock() {
        Ok(cache) => cache,
        Err(TryLockError::Poisoned(cache)) => cache.into_inner(),
        Err(TryLockError::WouldBlock) => return,
    };
    for (s, string) in strings {
        if cached_len(s) {
            cache.put(s, string.clone_ref(py));
        }
    }
}

/// Python objects for [`onepass`]; strings of 2 to 63 bytes from [`STR_CACHE`] when this parse holds it.
/// `plain` stays `true` while every number built is an `int` within `i64` or a finite `float` (what
/// [`crate::py::schema::objects::plain`] asks of a tree; the containers and strings built always are).
pub(crate) struct PyValues<'py, 'c> {
    py: Python<'py>,
    cache: Option<MutexGuard<'c, StrCache>>,
    pub(crate) plain: bool,
}

impl<'py> PyValues<'py, 'static> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        let cache = match STR_CACHE.try_lock() {
            Ok(cache) => Some(cache),
            Err(TryLockError::Poisoned(cache)) => Some(cache.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        PyValues {
            py,
            cache,
            plain: true,
        }
    }

    fn str(&mut self, s: &str) -> Bound<'py, PyString> {
        match &mut self.cache {
            Some(cache) if cached_len(s) => cache.get(self.py, s).clone(),
            _ => PyString::new(self.py, s),
        }
    }
}

impl<'py> Sink for PyValues<'py, 'static> {
    type Value = Bound<'py, PyAny>;
    type Object = Bound<'py, PyDict>;

    fn null(&mut self) -> Self::Value {
        self.py.None().into_bound(self.py)
    }

    fn boolean(&mut self, b: bool) -> Self::Value {
        PyBool::new(self.py, b).to_owned().into_any()
    }

    fn string(&mut self, s: &str) -> Self::Value {
        self.str(s).into_any()
    }

    fn number(&mut self, n: jiter::NumberAny) -> Option<Self::Value> {
        match &n {
            jiter::NumberAny::Int(jiter::NumberInt::BigInt(_)) => self.plain = false,
            jiter::NumberAny::Float(f) if !f.is_finite() => self.plain = false,
            _ => {}
        }
        n.into_pyobject(self.py).ok().map(Bound::into_any)
    }

    fn array(&mut self, items: std::vec::Drain<'_, Self::Value>) -> Self::Value {
        PyList::new(self.py, items)
            .expect("a list of Python objects")
            .into_any()
    }

    fn object(&mut self) -> Self::Object {
        PyDict::new(self.py)
    }

    fn insert(&mut self, object: &mut Self::Object, key: &str, value: Self::Value) {
        match &mut self.cache {
            Some(cache) if cached_len(key) => object.set_item(cache.get(self.py, key), value),
            _ => object.set_item(PyString::new(self.py, key), value),
        }
        .expect("a str key is hashable");
    }

    fn close(&mut self, object: Self::Object) -> Self::Value {
        object.into_any()
    }
}

/// The Python builder of [`modes`]: [`onepass`] straight to Python objects; text-only work on long
/// texts runs with the GIL released. `plain`: whether the last strict parse built only plain numbers
/// ([`PyValues`]).
struct Objects<'py>(Python<'py>, Cell<bool>);

impl<'py> Build for Objects<'py> {
    type Object = Bound<'py, PyDict>;

    fn parse(&self, text: &str) -> Result<Parsed<Self::Object>, usize> {
        let mut values = PyValues::new(self.0);
        let top = onepass::strict(&mut values, text);
        self.1.set(values.plain);
        Ok(match top? {
            Top::Object(v) => Parsed::Object(v.cast_into::<PyDict>().map_err(|_| 0usize)?),
            Top::Str(s) => Parsed::Str(s),
            Top::Other(kind) => Parsed::Other(kind),
        })
    }

    fn empty(&self) -> Self::Object {
        PyDict::new(self.0)
    }

    fn partial(&self, text: &str, max_depth: usize) -> Option<Self::Object> {
        onepass::partial(&mut PyValues::new(self.0), text, max_depth)?
            .cast_into::<PyDict>()
            .ok()
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
    modes::parse(&Objects(py, Cell::new(true)), text, mode, max_depth)
}

/// Strict mode ([`parse_mode`]) with whether every number in the object is an `int` within `i64` or
/// a finite `float` (then the tree is what [`crate::py::schema::objects::plain`] accepts).
pub(crate) fn parse_strict_plain<'py>(
    py: Python<'py>,
    text: &str,
) -> Result<(Bound<'py, PyDict>, bool), CoreError> {
    let objects = Objects(py, Cell::new(true));
    let parsed = modes::parse(&objects, text, Mode::Strict, json::MAX_DEPTH)?;
    Ok((parsed, objects.1.get()))
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

/// `f` of the text of `text` (a `str` or UTF-8 `bytes`); `None` when `text` is neither.
///
/// # Errors
/// `f`'s, or [`CoreError::InvalidArguments`] for a `str` with a lone surrogate or `bytes` that are
/// not UTF-8 (with the position).
pub(crate) fn with_text<T>(
    text: &Bound<'_, PyAny>,
    f: impl FnOnce(&str) -> Result<T, CoreError>,
) -> Option<PyResult<T>> {
    if let Ok(s) = text.cast::<PyString>() {
        return Some(str_text(s, f));
    }
    let data = text.cast::<PyBytes>().ok()?.as_bytes();
    Some(match std::str::from_utf8(data) {
        Ok(t) => f(t).map_err(PyErr::from),
        Err(e) => Err(json::invalid_utf8(data, e.valid_up_to()).into()),
    })
}

/// `f` of the text of `s`; a lone surrogate (not encodable as UTF-8) is an error at its position.
fn str_text<T>(
    s: &Bound<'_, PyString>,
    f: impl FnOnce(&str) -> Result<T, CoreError>,
) -> PyResult<T> {
    if let Ok(t) = s.to_str() {
        return Ok(f(t)?);
    }
    let raw = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
    let raw = raw.cast::<PyBytes>()?.as_bytes();
    let at = std::str::from_utf8(raw)
        .err()
        .map_or(raw.len(), |e| e.valid_up_to());
    let lossy = String::from_utf8_lossy(raw);
    Err(json::lone_surrogate(&lossy, at).into())
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
    if let Some(parsed) = with_text(text, |t| parse_mode(py, t, mode, max_depth)) {
        parsed
    } else {
        Err(PyTypeError::new_err(format!(
            "parse_arguments() expects str, bytes or dict, got {}",
            text.get_type().name()?
        )))
    }
}
