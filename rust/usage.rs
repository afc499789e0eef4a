//! Summing provider usage objects over the rounds of a conversation.
//!
//! Numbers are summed key-wise, recursively through nested mappings (`prompt_tokens_details`);
//! an integer plus a float gives a float. `None` leaves stay `None` until some round has a number
//! there. Strings keep the last value. A key that holds a mapping in one round and a scalar in
//! another is an error. Integers must fit in 64 bits (sums are kept in 128 bits).

use crate::errors::CoreError;

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

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn merge_map(into: &mut UsageMap, add: UsageMap, path: &str) -> Result<(), CoreError> {
    for (key, value) in add {
        match into.iter_mut().find(|(k, _)| *k == key) {
            Some((_, old)) => merge_value(old, value, &join(path, &key))?,
            None => {
                let mut fresh = match value {
                    UsageValue::Map(_) => UsageValue::Map(Vec::new()),
                    _ => UsageValue::Null,
                };
                merge_value(&mut fresh, value, &join(path, &key))?;
                into.push((key, fresh));
            }
        }
    }
    Ok(())
}

fn merge_value(old: &mut UsageValue, new: UsageValue, path: &str) -> Result<(), CoreError> {
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
        (Map(a), Map(b)) => merge_map(a, b, path)?,
        (Null, Map(b)) => {
            let mut m = Vec::new();
            merge_map(&mut m, b, path)?;
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
    pub fn add(&mut self, usage: Option<UsageMap>) -> Result<(), CoreError> {
        let Some(usage) = usage else { return Ok(()) };
        let mut total = self.total.clone().unwrap_or_default();
        merge_map(&mut total, usage, "")?;
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
}
