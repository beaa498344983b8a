//! Aggregation-type suffixes: `parse_metric_key` and the canonical key
//! (`docs/contract/rft.md` "Aggregation suffixes").

use std::borrow::Cow;
use std::fmt;

/// How a metric key is aggregated across experiences, runs and tasks (the `:agg` suffix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggType {
    /// No suffix (or `:mean`): average; numpy statistics at the step level.
    Mean,
    /// `:sum`: builtin `sum`.
    Sum,
    /// `:max`: builtin `max` (first wins, strict comparison).
    Max,
    /// `:min`: builtin `min` (first wins, strict comparison).
    Min,
    /// `:last`: the last value seen.
    Last,
}

impl AggType {
    /// The suffix text, as in Trinity's `AggType.value`.
    pub fn as_str(self) -> &'static str {
        match self {
            AggType::Mean => "mean",
            AggType::Sum => "sum",
            AggType::Max => "max",
            AggType::Min => "min",
            AggType::Last => "last",
        }
    }

    /// Exactly `AggType(s)`: only the five lowercase names, no trimming, no case folding.
    pub fn from_suffix(s: &str) -> Option<AggType> {
        match s {
            "mean" => Some(AggType::Mean),
            "sum" => Some(AggType::Sum),
            "max" => Some(AggType::Max),
            "min" => Some(AggType::Min),
            "last" => Some(AggType::Last),
            _ => None,
        }
    }
}

impl fmt::Display for AggType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Splits a metric key into `(name, agg)` exactly like trinity's `parse_metric_key`:
/// only the **last** colon counts; the suffix must be exactly one of
/// `mean|sum|max|min|last`; anything else keeps the **whole key** with [`AggType::Mean`].
///
/// ```
/// use tally_aggregate::{parse_metric_key, AggType};
/// assert_eq!(parse_metric_key("ns:tokens:sum"), ("ns:tokens", AggType::Sum));
/// assert_eq!(parse_metric_key("a:Sum"), ("a:Sum", AggType::Mean));
/// assert_eq!(parse_metric_key(":sum"), ("", AggType::Sum));
/// ```
pub fn parse_metric_key(key: &str) -> (&str, AggType) {
    if let Some(pos) = key.rfind(':') {
        if let Some(agg) = AggType::from_suffix(&key[pos + 1..]) {
            return (&key[..pos], agg);
        }
    }
    (key, AggType::Mean)
}

/// The canonical key used by the run and task levels: `name` for mean, `name:agg` otherwise.
/// So `a:mean` and `a` merge, and `x:sum:mean` shares `x:sum` with `x:sum`; the first
/// aggregation seen then decides for the merged group (`docs/contract/rft.md` "Aggregation
/// suffixes", "Collisions and edge cases").
pub fn canonical_key(name: &str, agg: AggType) -> Cow<'_, str> {
    match agg {
        AggType::Mean => Cow::Borrowed(name),
        other => Cow::Owned(format!("{name}:{}", other.as_str())),
    }
}
