//! Metric values as Trinity sees them (number / bool / str / other) and the ordered output map.

use indexmap::IndexMap;

/// One value of a metric dict, kept in the shape needed to reproduce Trinity's filter
/// (`docs/contract/rft.md` "Numeric values"): `isinstance(value, (int, float))` passes numbers
/// **and bools**, everything else is silently dropped for that dict.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A Python `int` or `float` (including `np.float64`), already passed through `float()`.
    Number(f64),
    /// A Python `bool`: numeric for Trinity, `True` → 1.0, `False` → 0.0.
    Bool(bool),
    /// A string: dropped by the numeric filter.
    Str(String),
    /// Anything else (`None`, lists, `np.float32`, tensors, …): dropped by the numeric filter.
    Other,
}

impl Value {
    /// The value Trinity aggregates (`float(value)`), or `None` when Trinity skips it.
    pub fn as_numeric(&self) -> Option<f64> {
        match self {
            Value::Number(x) => Some(*x),
            Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            Value::Str(_) | Value::Other => None,
        }
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Value::Number(x)
    }
}

impl From<i64> for Value {
    /// Like Python's `float(int)`: round to nearest, ties to even.
    fn from(x: i64) -> Self {
        Value::Number(x as f64)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.to_owned())
    }
}

/// An output dict with Python `dict` semantics: iteration in first-insertion order, and a
/// later write to an existing key replaces the value **in place**, keeping the key's first
/// position: that is how a key collision resolves in Trinity (`docs/contract/rft.md`
/// "Collisions and edge cases").
pub type MetricMap = IndexMap<String, f64>;
