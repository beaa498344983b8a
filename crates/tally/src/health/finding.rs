//! What a health rule reports: which rule, on which tag, from which step to which, how often
//! (`docs/contract/health.md` "tally health").

use serde::Serialize;

/// The health rules, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// A NaN or ±inf value.
    Nonfinite,
    /// A value leaving its recent range (robust z-score); `spike` in a rules file.
    Divergence,
    /// |value| ≤ eps for N consecutive values.
    Collapse,
    /// A value exactly unchanged for N values while steps advance.
    FlatFor,
    /// A value above a threshold.
    Above,
    /// A value below a threshold.
    Below,
    /// No new step for k × the median gap between steps.
    Stall,
    /// A throughput below a fraction of its running median for a while.
    Throughput,
    /// Little free space left on the filesystem of the run directory (a live logger only).
    Disk,
    /// One rank disagreeing with the others before reduction: a rank-local non-finite value,
    /// or a straggler (a live logger given every rank's step only).
    Ranks,
    /// tally's share of the iteration on the step's thread above a budget (a live logger only).
    Overhead,
    /// A remote sink (W&B, MLflow, trackio) behind the event file for too long (a live logger
    /// only).
    Sink,
}

impl RuleKind {
    /// Every rule, in the order tables list them.
    pub const ALL: [RuleKind; 12] = [
        RuleKind::Nonfinite,
        RuleKind::Divergence,
        RuleKind::Collapse,
        RuleKind::FlatFor,
        RuleKind::Above,
        RuleKind::Below,
        RuleKind::Stall,
        RuleKind::Throughput,
        RuleKind::Disk,
        RuleKind::Ranks,
        RuleKind::Overhead,
        RuleKind::Sink,
    ];

    /// The snake_case name used in tables, JSON and rules files.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Nonfinite => "nonfinite",
            RuleKind::Divergence => "divergence",
            RuleKind::Collapse => "collapse",
            RuleKind::FlatFor => "flat_for",
            RuleKind::Above => "above",
            RuleKind::Below => "below",
            RuleKind::Stall => "stall",
            RuleKind::Throughput => "throughput",
            RuleKind::Disk => "disk",
            RuleKind::Ranks => "ranks",
            RuleKind::Overhead => "overhead",
            RuleKind::Sink => "sink",
        }
    }

    /// The rule a rules file names (`spike` is `divergence`).
    pub fn parse(name: &str) -> Option<RuleKind> {
        if name == "spike" {
            return Some(RuleKind::Divergence);
        }
        RuleKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// One rule firing on one tag (or, for `stall`, on the run), all its firings folded together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The rule.
    pub rule: RuleKind,
    /// The tag it fired on; empty for `stall`, a rule of the whole run; for `sink`, the
    /// sink's name.
    pub tag: String,
    /// The step of its first firing (for a rule that needs several values, where they began;
    /// for `stall`, the last step before the pause).
    pub first_step: i64,
    /// The step of its latest firing.
    pub last_step: i64,
    /// How many values it fired on (for `stall`, how many pauses).
    pub count: u64,
    /// The latest value it fired on (for `stall`, the pause in seconds).
    pub last_value: f64,
    /// What the first firing saw, in a short sentence.
    pub message: String,
}

/// A number in a finding's message: four significant digits, exponent when far from 1.
pub(crate) fn num(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) {
        format!("{v:.3e}")
    } else {
        let s = format!("{v:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_spike_is_divergence() {
        for k in RuleKind::ALL {
            assert_eq!(RuleKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(RuleKind::parse("spike"), Some(RuleKind::Divergence));
        assert_eq!(RuleKind::parse("nan"), None);
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(12.0), "12");
        assert_eq!(num(1.5e9), "1.500e9");
        assert_eq!(num(f64::NAN), "NaN");
    }
}
