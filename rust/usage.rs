//! Summing provider usage objects over the rounds of a conversation.
//!
//! Numbers are summed key-wise, recursively through nested mappings (`prompt_tokens_details`);
//! an integer plus a float gives a float. `None` leaves stay `None` until some round has a number
//! there. Strings keep the last value. A key that holds a mapping in one round and a scalar in
//! another is an error. Integers must fit in 64 bits (sums are kept in 128 bits). Mappings may
//! nest at most [`MAX_DEPTH`] levels (the top-level mapping is level 1; real usage objects have 2).

use std::collections::{HashMap, HashSet};

use crate::errors::CoreError;

/// Deepest level of nested mappings a usage object may have; the top-level mapping is level 1.
pub const MAX_DEPTH: usize = 32;

/// Maps with more keys than this are merged through a hash index instead of a linear scan.
const SCAN_LIMIT: usize = 16;

/// The error for a mapping at `path` that is nested deeper than [`MAX_DEPTH`] levels.
pub fn too_deep(path: &str) -> CoreError {
    CoreError::UsageType(format!(
        "usage value at '{path}' nests mappings deeper than {MAX_DEPTH} levels"
    ))
}

/// A usage leaf or subtree.
#[derive(Debug, Clone, PartialEq)]
pub enum UsageValue {
    /// JSON null / Python `None`.
    Null,
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// A string (kept as the last value).
    Str(String),
    /// A nested mapping, in first-seen key order.
    Map(UsageMap),
}

/// Ordered string-keyed mapping (usage objects are small: a linear scan beats hashing).
pub type UsageMap = Vec<(String, UsageValue)>;

impl UsageValue {
    fn kind(&self) -> &'static str {
        match self {
            UsageValue::Null => "None",
            UsageValue::Int(_) | UsageValue::Float(_) => "number",
            UsageValue::Str(_) => "string",
            UsageValue::Map(_) => "mapping",
        }
    }
}

/// Running total of usage objects.
#[derive(Debug, Default, Clone)]
pub struct UsageAccumulator {
    total: Option<UsageMap>,
    rounds: usize,
}

/// The path of `key` in the mapping at `path` (`""`: the top level), as error messages show it.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Merge `add` (a mapping at nesting level `depth`) into `into`. With a repeated key in `add`
/// the last value wins, as when building a Python dict.
fn merge_map(
    into: &mut UsageMap,
    add: UsageMap,
    path: &str,
    depth: usize,
) -> Result<(), CoreError> {
    if depth > MAX_DEPTH {
        return Err(too_deep(path));
    }
    // Small maps (every real usage object): a linear scan. Large ones: a key -> position index,
    // so merging stays linear in the number of keys.
    let mut index: Option<HashMap<String, usize>> =
        (into.len() + add.len() > SCAN_LIMIT).then(|| {
            into.iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect()
        });
    let add = if has_repeats(&add) { dedupe(add) } else { add };
    for (key, value) in add {
        let pos = match &index {
            Some(ix) => ix.get(&key).copied(),
            None => into.iter().position(|(k, _)| *k == key),
        };
        let key_path = join(path, &key);
        match pos {
            Some(p) => merge_value(&mut into[p].1, value, &key_path, depth)?,
            None => {
                let mut fresh = match value {
                    UsageValue::Map(_) => UsageValue::Map(Vec::new()),
                    _ => UsageValue::Null,
                };
                merge_value(&mut fresh, value, &key_path, depth)?;
                if let Some(ix) = &mut index {
                    ix.insert(key.clone(), into.len());
                }
                into.push((key, fresh));
            }
        }
    }
    Ok(())
}

/// True when some key occurs twice in `map`.
fn has_repeats(map: &UsageMap) -> bool {
    if map.len() <= SCAN_LIMIT {
        map.iter()
            .enumerate()
            .any(|(i, (k, _))| map[..i].iter().any(|(o, _)| o == k))
    } else {
        let mut keys = HashSet::with_capacity(map.len());
        !map.iter().all(|(k, _)| keys.insert(k.as_str()))
    }
}

/// Keep each key once, at its first position, with its last value.
fn dedupe(map: UsageMap) -> UsageMap {
    let mut at: HashMap<String, usize> = HashMap::with_capacity(map.len());
    let mut out: UsageMap = Vec::with_capacity(map.len());
    for (k, v) in map {
        match at.get(&k) {
            Some(&p) => out[p].1 = v,
            None => {
                at.insert(k.clone(), out.len());
                out.push((k, v));
            }
        }
    }
    out
}

/// Merge `new` into `old`; both are values of a mapping at nesting level `depth`.
fn merge_value(
    old: &mut UsageValue,
    new: UsageValue,
    path: &str,
    depth: usize,
) -> Result<(), CoreError> {
    use UsageValue::{Float, Int, Map, Null, Str};
    let mixed = |a: &UsageValue, b: &UsageValue| {
        CoreError::UsageType(format!(
            "usage value at '{path}' mixes a {} and a {} across rounds",
            a.kind(),
            b.kind()
        ))
    };
    match (&mut *old, new) {
        (_, Null) => {}
        (Map(a), Map(b)) => merge_map(a, b, path, depth + 1)?,
        (Null, Map(b)) => {
            let mut m = Vec::new();
            merge_map(&mut m, b, path, depth + 1)?;
            *old = Map(m);
        }
        (o @ Map(_), n) | (o @ (Int(_) | Float(_) | Str(_)), n @ Map(_)) => {
            return Err(mixed(o, &n))
        }
        (Int(a), Int(b)) => *a += b,
        (Int(a), Float(b)) => *old = Float(*a as f64 + b),
        (Float(a), Int(b)) => *a += b as f64,
        (Float(a), Float(b)) => *a += b,
        (_, n) => *old = n, // Null or Str before; a number or string now
    }
    Ok(())
}

impl UsageAccumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one round's usage; `None` is ignored. On error nothing changes.
    ///
    /// A key repeated within one mapping keeps its last value (as a Python dict would); mappings
    /// nested deeper than [`MAX_DEPTH`] levels are an error.
    pub fn add(&mut self, usage: Option<UsageMap>) -> Result<(), CoreError> {
        let Some(usage) = usage else { return Ok(()) };
        let mut total = self.total.clone().unwrap_or_default();
        merge_map(&mut total, usage, "", 1)?;
        self.total = Some(total);
        self.rounds += 1;
        Ok(())
    }

    /// The running total, `None` before the first non-`None` round.
    pub fn total(&self) -> Option<&UsageMap> {
        self.total.as_ref()
    }

    /// Number of non-`None` usages added.
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// Forget everything.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::UsageValue::{Float, Int, Map, Null, Str};
    use super::*;

    fn m(items: &[(&str, UsageValue)]) -> UsageMap {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn sums_nested() {
        let mut acc = UsageAccumulator::new();
        assert_eq!(acc.total(), None);
        acc.add(None).unwrap();
        assert_eq!(acc.rounds(), 0);
        acc.add(Some(m(&[
            ("in", Int(50)),
            ("d", Map(m(&[("c", Int(1))]))),
            ("x", Null),
            ("s", Str("a".into())),
        ])))
        .unwrap();
        acc.add(Some(m(&[
            ("in", Int(120)),
            ("d", Map(m(&[("c", Int(2)), ("e", Float(0.5))]))),
            ("s", Str("b".into())),
        ])))
        .unwrap();
        let want = m(&[
            ("in", Int(170)),
            ("d", Map(m(&[("c", Int(3)), ("e", Float(0.5))]))),
            ("x", Null),
            ("s", Str("b".into())),
        ]);
        assert_eq!(acc.total(), Some(&want));
        assert_eq!(acc.rounds(), 2);
        acc.add(Some(m(&[("x", Float(1.5)), ("in", Float(0.5))])))
            .unwrap();
        assert_eq!(acc.total().unwrap()[0], ("in".to_string(), Float(170.5)));
        assert_eq!(acc.total().unwrap()[2], ("x".to_string(), Float(1.5)));
        acc.reset();
        assert_eq!((acc.total(), acc.rounds()), (None, 0));
    }

    #[test]
    fn mixing_map_and_scalar_fails_atomically() {
        let mut acc = UsageAccumulator::new();
        acc.add(Some(m(&[("a", Int(1)), ("d", Map(m(&[("c", Int(1))])))])))
            .unwrap();
        let err = acc
            .add(Some(m(&[("a", Int(1)), ("d", Int(3))])))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "usage value at 'd' mixes a mapping and a number across rounds"
        );
        assert_eq!(acc.total().unwrap()[0], ("a".to_string(), Int(1)));
        assert_eq!(acc.rounds(), 1);
    }

    fn nested(depth: usize) -> UsageMap {
        let mut map = m(&[("n", Int(1))]);
        for _ in 1..depth {
            map = m(&[("k", Map(map))]);
        }
        map
    }

    #[test]
    fn depth_limit() {
        let mut acc = UsageAccumulator::new();
        acc.add(Some(nested(MAX_DEPTH))).unwrap();
        acc.add(Some(nested(MAX_DEPTH))).unwrap();
        let err = acc.add(Some(nested(MAX_DEPTH + 1))).unwrap_err();
        let path = vec!["k"; MAX_DEPTH].join(".");
        assert_eq!(
            err.to_string(),
            format!("usage value at '{path}' nests mappings deeper than 32 levels")
        );
        assert_eq!(acc.rounds(), 2);
    }

    #[test]
    fn repeated_keys_keep_last_value() {
        let mut acc = UsageAccumulator::new();
        acc.add(Some(m(&[
            ("a", Int(1)),
            ("b", Map(m(&[("x", Int(1))]))),
            ("a", Int(2)),
            ("b", Int(3)),
        ])))
        .unwrap();
        assert_eq!(acc.total(), Some(&m(&[("a", Int(2)), ("b", Int(3))])));
        let many: UsageMap = (0..100)
            .chain(0..100)
            .map(|i| (format!("k{i}"), Int(i)))
            .collect();
        acc.add(Some(many)).unwrap();
        let total = acc.total().unwrap();
        assert_eq!(total.len(), 102);
        assert_eq!(total[101], ("k99".to_string(), Int(99)));
    }

    #[test]
    fn large_maps_merge_by_key() {
        let big: UsageMap = (0..10_000).map(|i| (format!("k{i}"), Int(i))).collect();
        let mut acc = UsageAccumulator::new();
        acc.add(Some(big.clone())).unwrap();
        acc.add(Some(big)).unwrap();
        let total = acc.total().unwrap();
        assert_eq!(total.len(), 10_000);
        assert_eq!(total[9_999], ("k9999".to_string(), Int(19_998)));
    }
}
