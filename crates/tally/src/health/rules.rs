//! The health rules, their parameters and defaults, and which tags each watches
//! (`docs/contract/health.md`: one section per rule, "Which tags the defaults watch").

use super::finding::RuleKind;
use tally_schema::health::{health_class, HealthClass};
use tally_schema::legacy::glob_match;

/// `divergence`: a value whose robust z-score against its trailing window passes `z`
/// (`docs/contract/health.md` "Divergence").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Divergence {
    /// Values in the trailing window.
    pub window: usize,
    /// Values the window holds before the rule may fire.
    pub min_history: usize,
    /// |z| above which a value has left its range.
    pub z: f64,
    /// The scale is at least this share of |median| (a near-constant series).
    pub rel_floor: f64,
    /// Values between two refreshes of the window's median and MAD.
    pub refresh: usize,
}

impl Default for Divergence {
    fn default() -> Self {
        Divergence {
            window: 200,
            min_history: 50,
            z: 50.0,
            rel_floor: 0.05,
            refresh: 100,
        }
    }
}

/// `collapse`: |value| ≤ `eps` for `for_values` consecutive values
/// (`docs/contract/health.md` "Collapse").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Collapse {
    /// How close to 0 is collapsed.
    pub eps: f64,
    /// Consecutive values it takes.
    pub for_values: u32,
}

impl Default for Collapse {
    fn default() -> Self {
        Collapse {
            eps: 1e-6,
            for_values: 20,
        }
    }
}

/// `flat_for`: a value exactly unchanged for `for_values` values while steps advance, below
/// the best it had (`docs/contract/health.md` "Flat reward").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlatFor {
    /// Values it takes (the first of the run included).
    pub for_values: u32,
}

impl Default for FlatFor {
    fn default() -> Self {
        FlatFor { for_values: 200 }
    }
}

/// `throughput`: a value below `fraction` × its running median for at least `for_seconds`
/// of wall time (`docs/contract/health.md` "Throughput").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throughput {
    /// Share of the running median below which it is slow.
    pub fraction: f64,
    /// Values the running median is taken over.
    pub window: usize,
    /// Values seen before the rule may fire.
    pub min_history: usize,
    /// Wall seconds it must stay slow.
    pub for_seconds: f64,
    /// Values between two refreshes of the median.
    pub refresh: usize,
}

impl Default for Throughput {
    fn default() -> Self {
        Throughput {
            fraction: 0.5,
            window: 200,
            min_history: 20,
            for_seconds: 60.0,
            refresh: 100,
        }
    }
}

/// `stall`: no new step for `k` × the median gap between steps (and at least `min_gap_s`)
/// (`docs/contract/health.md` "Stall").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stall {
    /// Multiple of the median gap.
    pub k: f64,
    /// A pause shorter than this is never a stall, seconds.
    pub min_gap_s: f64,
    /// Gaps seen before the rule may fire.
    pub min_history: usize,
    /// Gaps the median is taken over.
    pub window: usize,
    /// Gaps between two refreshes of the median.
    pub refresh: usize,
}

impl Default for Stall {
    fn default() -> Self {
        Stall {
            k: 10.0,
            min_gap_s: 60.0,
            min_history: 10,
            window: 200,
            refresh: 100,
        }
    }
}

/// A rule evaluated on each value of the tags it watches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// A NaN or ±inf value.
    Nonfinite,
    /// See [`Divergence`].
    Divergence(Divergence),
    /// See [`Collapse`].
    Collapse(Collapse),
    /// See [`FlatFor`].
    FlatFor(FlatFor),
    /// A value above `value`.
    Above {
        /// The threshold.
        value: f64,
    },
    /// A value below `value`.
    Below {
        /// The threshold.
        value: f64,
    },
    /// See [`Throughput`].
    Throughput(Throughput),
}

impl Rule {
    /// The rule's name.
    pub fn kind(&self) -> RuleKind {
        match self {
            Rule::Nonfinite => RuleKind::Nonfinite,
            Rule::Divergence(_) => RuleKind::Divergence,
            Rule::Collapse(_) => RuleKind::Collapse,
            Rule::FlatFor(_) => RuleKind::FlatFor,
            Rule::Above { .. } => RuleKind::Above,
            Rule::Below { .. } => RuleKind::Below,
            Rule::Throughput(_) => RuleKind::Throughput,
        }
    }
}

/// Which tags a rule watches.
#[derive(Debug, Clone, PartialEq)]
pub enum Tags {
    /// Every tag.
    All,
    /// The tags of one meaning (`tally_schema::health::HEALTH_TAGS`).
    Class(HealthClass),
    /// Tags matching any of these globs (`*` any run of characters).
    Globs(Vec<String>),
}

impl Tags {
    fn matches(&self, tag: &str, class: Option<HealthClass>) -> bool {
        match self {
            Tags::All => true,
            Tags::Class(c) => class == Some(*c),
            Tags::Globs(g) => g.iter().any(|g| glob_match(g, tag)),
        }
    }
}

/// A rule and the tags it watches.
#[derive(Debug, Clone, PartialEq)]
pub struct TagRule {
    /// The rule.
    pub rule: Rule,
    /// Its tags.
    pub tags: Tags,
}

/// The rules a run is checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSet {
    /// Rules on values.
    pub tag_rules: Vec<TagRule>,
    /// The run's stall rule, if on.
    pub stall: Option<Stall>,
}

impl Default for RuleSet {
    fn default() -> Self {
        RuleSet::defaults()
    }
}

impl RuleSet {
    /// No rule at all.
    pub fn empty() -> Self {
        RuleSet {
            tag_rules: Vec::new(),
            stall: None,
        }
    }

    /// The default rules: `nonfinite` on every tag, `divergence` on losses, `collapse` on
    /// entropies, stds, KL and clip fractions, `flat_for` on rewards, `throughput` on
    /// throughputs, and `stall` (`docs/contract/health.md` "Which tags the defaults watch").
    pub fn defaults() -> Self {
        RuleSet {
            tag_rules: vec![
                TagRule {
                    rule: Rule::Nonfinite,
                    tags: Tags::All,
                },
                TagRule {
                    rule: Rule::Divergence(Divergence::default()),
                    tags: Tags::Class(HealthClass::Loss),
                },
                TagRule {
                    rule: Rule::Collapse(Collapse::default()),
                    tags: Tags::Class(HealthClass::Collapsing),
                },
                TagRule {
                    rule: Rule::FlatFor(FlatFor::default()),
                    tags: Tags::Class(HealthClass::Reward),
                },
                TagRule {
                    rule: Rule::Throughput(Throughput::default()),
                    tags: Tags::Class(HealthClass::Throughput),
                },
            ],
            stall: Some(Stall::default()),
        }
    }

    /// Turns every rule of `kind` off (the defaults' and any added before).
    pub fn turn_off(&mut self, kind: RuleKind) {
        self.tag_rules.retain(|r| r.rule.kind() != kind);
        if kind == RuleKind::Stall {
            self.stall = None;
        }
    }

    /// The rules watching `tag`, in order.
    pub fn rules_for<'a>(&'a self, tag: &'a str) -> impl Iterator<Item = &'a Rule> + 'a {
        let class = health_class(tag);
        self.tag_rules
            .iter()
            .filter(move |r| r.tags.matches(tag, class))
            .map(|r| &r.rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(rules: &RuleSet, tag: &str) -> Vec<RuleKind> {
        rules.rules_for(tag).map(Rule::kind).collect()
    }

    #[test]
    fn defaults_follow_the_tags_meaning() {
        let d = RuleSet::defaults();
        use RuleKind::*;
        assert_eq!(kinds(&d, "Loss/critic"), [Nonfinite, Divergence]);
        assert_eq!(kinds(&d, "losses/entropy"), [Nonfinite, Collapse]);
        assert_eq!(kinds(&d, "rollout/ep_rew_mean"), [Nonfinite, FlatFor]);
        assert_eq!(kinds(&d, "time/fps"), [Nonfinite, Throughput]);
        assert_eq!(kinds(&d, "Perf/learning_time"), [Nonfinite]);
    }

    #[test]
    fn any_rule_turns_off() {
        let mut d = RuleSet::defaults();
        d.turn_off(RuleKind::Divergence);
        d.turn_off(RuleKind::Stall);
        assert_eq!(kinds(&d, "Loss/critic"), [RuleKind::Nonfinite]);
        assert_eq!(d.stall, None);
    }
}
