//! The health rules, their parameters and defaults, and which tags each watches
//! (`docs/contract/health.md`: one section per rule, "Which tags the defaults watch").

use super::finding::RuleKind;
use tally_schema::health::{health_class, HealthClass};
use tally_schema::legacy::glob_match;

/// `divergence`: values whose robust z-score against their trailing window passes `z`,
/// `for_values` in a row (`docs/contract/health.md` "Divergence").
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
    /// Values out of range in a row it takes (fewer are a spike).
    pub for_values: u32,
}

impl Default for Divergence {
    fn default() -> Self {
        Divergence {
            window: 200,
            min_history: 10,
            z: 50.0,
            rel_floor: 0.05,
            refresh: 100,
            for_values: 3,
        }
    }
}

/// `collapse`: a value fallen to `fraction` of its early level or past zero (the mean of its
/// first `early_values` values; a series starting at 0 never collapses), for `for_values`
/// consecutive values (`docs/contract/health.md` "Collapse").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Collapse {
    /// An early level within this of 0 is a metric that is 0 by design: never collapsed.
    pub eps: f64,
    /// Consecutive values it takes.
    pub for_values: u32,
    /// The share of its early level, toward zero, at or below which a value has collapsed.
    pub fraction: f64,
    /// Values the early level is the mean of.
    pub early_values: u32,
}

impl Default for Collapse {
    fn default() -> Self {
        Collapse {
            eps: 1e-6,
            for_values: 3,
            fraction: 0.05,
            early_values: 5,
        }
    }
}

/// `flat_for`: a value exactly unchanged for `for_values` values while steps advance, unless
/// it holds at a whole-number best (a solved task) (`docs/contract/health.md` "Flat reward").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlatFor {
    /// Values it takes (the first of the run included).
    pub for_values: u32,
}

impl Default for FlatFor {
    fn default() -> Self {
        FlatFor { for_values: 20 }
    }
}

/// `throughput`: the pace (steps per wall second between a throughput tag's values) below
/// `fraction` × its running median for at least `for_seconds` of wall time, from a loss's first
/// value on (`docs/contract/health.md` "Throughput").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throughput {
    /// Share of the running median pace below which it is slow.
    pub fraction: f64,
    /// Paces the running median is taken over.
    pub window: usize,
    /// Paces seen before the rule may fire.
    pub min_history: usize,
    /// Wall seconds it must stay slow.
    pub for_seconds: f64,
    /// Values between two refreshes of the median.
    pub refresh: usize,
}

impl Default for Throughput {
    fn default() -> Self {
        Throughput {
            fraction: 0.7,
            window: 200,
            min_history: 10,
            for_seconds: 20.0,
            refresh: 100,
        }
    }
}

/// `disk`: the filesystem of the run directory has less than `min_free_mb` free for the run
/// (`docs/contract/health.md` "Disk"). Checked by a live logger's writer thread only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Disk {
    /// Free space below which the rule fires, MiB (as `statvfs` gives it to an unprivileged
    /// writer: `f_bavail` blocks).
    pub min_free_mb: f64,
}

impl Default for Disk {
    fn default() -> Self {
        Disk {
            min_free_mb: 1024.0,
        }
    }
}

/// `ranks`: one rank's values disagreeing with the others' before they are reduced
/// (`docs/contract/health.md` "Ranks"): a rank-local non-finite value, or a straggler whose
/// iteration time is above `ratio` × the other ranks' mean, by at least `min_excess_s`, for
/// `for_steps` steps in a row. Judged by a logger given every rank's step (`step_ranks`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranks {
    /// A straggler's iteration time over the other ranks' mean, at least.
    pub ratio: f64,
    /// And over it by at least this, seconds (a fast loop's jitter is never a straggler).
    pub min_excess_s: f64,
    /// Steps in a row a rank must straggle before the rule fires.
    pub for_steps: u32,
}

impl Default for Ranks {
    fn default() -> Self {
        Ranks {
            ratio: 1.5,
            min_excess_s: 0.05,
            for_steps: 5,
        }
    }
}

/// `overhead`: tally's share of the iteration on the step's thread (the time inside `step()`
/// over the time from one `step()` to the next) above `budget`, judged over blocks of
/// `window` steps, for at least `for_seconds` (`docs/contract/health.md` "Overhead"). A live
/// logger only: a run's files do not say how long `step()` took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overhead {
    /// The share of the iteration above which tally costs too much.
    pub budget: f64,
    /// Steps a share is judged over.
    pub window: u32,
    /// Wall seconds it must stay above the budget.
    pub for_seconds: f64,
}

impl Default for Overhead {
    fn default() -> Self {
        Overhead {
            budget: 0.05,
            window: 100,
            for_seconds: 60.0,
        }
    }
}

/// `sink`: a remote sink (W&B, MLflow, trackio) whose oldest row not yet acknowledged has
/// waited more than `max_lag_s` since it was complete in the event file
/// (`docs/contract/health.md` "Sink"). Checked by a live logger's writer thread only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SinkLag {
    /// Seconds a complete row may wait for the sink's acknowledgement.
    pub max_lag_s: f64,
}

impl Default for SinkLag {
    fn default() -> Self {
        SinkLag { max_lag_s: 300.0 }
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
    /// Every tag but those NaN by design (`HealthClass::NanByDesign`).
    Defined,
    /// The tags of one meaning (`tally_schema::health::HEALTH_TAGS`).
    Class(HealthClass),
    /// Tags matching any of these globs (`*` any run of characters).
    Globs(Vec<String>),
}

impl Tags {
    fn matches(&self, tag: &str, class: Option<HealthClass>) -> bool {
        match self {
            Tags::All => true,
            Tags::Defined => class != Some(HealthClass::NanByDesign),
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

impl TagRule {
    fn on(rule: Rule, tags: &[&str]) -> TagRule {
        TagRule {
            rule,
            tags: Tags::Globs(tags.iter().map(|t| (*t).to_owned()).collect()),
        }
    }

    /// `above` on `tags` (globs): a value greater than `value`.
    pub fn above(tags: &[&str], value: f64) -> TagRule {
        TagRule::on(Rule::Above { value }, tags)
    }

    /// `below` on `tags`: a value less than `value`.
    pub fn below(tags: &[&str], value: f64) -> TagRule {
        TagRule::on(Rule::Below { value }, tags)
    }

    /// `nonfinite` on `tags`.
    pub fn nonfinite(tags: &[&str]) -> TagRule {
        TagRule::on(Rule::Nonfinite, tags)
    }

    /// `flat_for` on `tags`: unchanged for `for_values` values while steps advance.
    pub fn flat_for(tags: &[&str], for_values: u32) -> TagRule {
        TagRule::on(Rule::FlatFor(FlatFor { for_values }), tags)
    }

    /// `divergence` (`spike`) on `tags` with robust z-score `z`, the other parameters default.
    pub fn spike(tags: &[&str], z: f64) -> TagRule {
        let d = Divergence {
            z,
            ..Divergence::default()
        };
        TagRule::on(Rule::Divergence(d), tags)
    }

    /// Why this rule cannot be evaluated, if it cannot: the rules file's checks
    /// (docs/contract/health.md "The rules file").
    pub fn problem(&self) -> Option<String> {
        if let Tags::Globs(g) = &self.tags {
            if g.is_empty() || g.iter().any(String::is_empty) {
                return Some("tag: must be a non-empty tag glob or a list of them".into());
            }
            if let Some(g) = g.iter().find(|g| g.contains(['?', '[', ']', '{', '}'])) {
                return Some(format!("tag {g:?}: only `*` is a wildcard in a tag glob"));
            }
        }
        let bad = |ok: bool, what: &str| (!ok).then(|| what.to_owned());
        match self.rule {
            Rule::Nonfinite => None,
            Rule::Above { value } | Rule::Below { value } => {
                bad(!value.is_nan(), "value: must be a number")
            }
            Rule::Divergence(d) => bad(d.window >= 3, "window: must be at least 3")
                .or_else(|| {
                    bad(
                        d.min_history <= d.window,
                        "min_history: must not exceed window",
                    )
                })
                .or_else(|| bad(d.z > 0.0, "z: must be > 0"))
                .or_else(|| bad(d.rel_floor >= 0.0, "rel_floor: must be >= 0"))
                .or_else(|| bad(d.refresh >= 1, "refresh: must be at least 1"))
                .or_else(|| bad(d.for_values >= 1, "for_values: must be at least 1")),
            Rule::Collapse(c) => bad(c.eps >= 0.0, "eps: must be >= 0")
                .or_else(|| bad(c.for_values >= 1, "for_values: must be at least 1"))
                .or_else(|| {
                    bad(
                        c.fraction >= 0.0 && c.fraction < 1.0,
                        "fraction: must be in [0, 1)",
                    )
                })
                .or_else(|| bad(c.early_values >= 1, "early_values: must be at least 1")),
            Rule::FlatFor(f) => bad(f.for_values >= 1, "for_values: must be at least 1"),
            Rule::Throughput(t) => bad(
                t.fraction > 0.0 && t.fraction < 1.0,
                "fraction: must be in (0, 1)",
            )
            .or_else(|| {
                bad(
                    t.min_history <= t.window,
                    "min_history: must not exceed window",
                )
            })
            .or_else(|| bad(t.for_seconds >= 0.0, "for_seconds: must be >= 0")),
        }
    }
}

/// The rules a run is checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSet {
    /// Rules on values.
    pub tag_rules: Vec<TagRule>,
    /// The run's stall rule, if on.
    pub stall: Option<Stall>,
    /// The run directory's free-space rule, if on.
    pub disk: Option<Disk>,
    /// The per-rank rule, if on.
    pub ranks: Option<Ranks>,
    /// The rule on tally's own share of the iteration, if on.
    pub overhead: Option<Overhead>,
    /// The remote sinks' lag rule, if on.
    pub sink: Option<SinkLag>,
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
            disk: None,
            ranks: None,
            overhead: None,
            sink: None,
        }
    }

    /// The default rules: `nonfinite` on every tag but those NaN by design, `divergence` on losses, `collapse` on
    /// policy entropies and action stds, `flat_for` on rewards, `throughput` on
    /// throughputs, and `stall` (`docs/contract/health.md` "Which tags the defaults watch").
    pub fn defaults() -> Self {
        RuleSet {
            tag_rules: vec![
                TagRule {
                    rule: Rule::Nonfinite,
                    tags: Tags::Defined,
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
            disk: Some(Disk::default()),
            ranks: Some(Ranks::default()),
            overhead: Some(Overhead::default()),
            sink: Some(SinkLag::default()),
        }
    }

    /// Adds `rule` (after the defaults and any added before).
    pub fn with(mut self, rule: TagRule) -> Self {
        self.tag_rules.push(rule);
        self
    }

    /// Why these rules cannot be evaluated, naming the rule, if they cannot.
    pub fn problem(&self) -> Option<String> {
        for (i, r) in self.tag_rules.iter().enumerate() {
            if let Some(p) = r.problem() {
                return Some(format!("rule {i} ({}): {p}", r.rule.kind().as_str()));
            }
        }
        if let Some(d) = self.disk {
            if !(d.min_free_mb.is_finite() && d.min_free_mb > 0.0) {
                return Some(format!("disk: min_free_mb {} must be > 0", d.min_free_mb));
            }
        }
        if let Some(r) = self.ranks {
            if !(r.ratio > 1.0 && r.min_excess_s >= 0.0 && r.for_steps >= 1) {
                return Some(
                    "ranks: ratio must be > 1, min_excess_s >= 0, for_steps at least 1".to_owned(),
                );
            }
        }
        if let Some(o) = self.overhead {
            if !(o.budget > 0.0 && o.budget < 1.0 && o.window >= 1 && o.for_seconds >= 0.0) {
                return Some(
                    "overhead: budget must be in (0, 1), window at least 1, for_seconds >= 0"
                        .to_owned(),
                );
            }
        }
        if let Some(l) = self.sink {
            if !(l.max_lag_s.is_finite() && l.max_lag_s > 0.0) {
                return Some(format!("sink: max_lag_s {} must be > 0", l.max_lag_s));
            }
        }
        let s = self.stall?;
        (!(s.k > 1.0 && s.min_gap_s >= 0.0 && s.min_history >= 1))
            .then(|| "stall: k must be > 1, min_gap_s >= 0, min_history at least 1".to_owned())
    }

    /// Whether any rule of `kind` is on.
    pub fn has(&self, kind: RuleKind) -> bool {
        match kind {
            RuleKind::Stall => self.stall.is_some(),
            RuleKind::Disk => self.disk.is_some(),
            RuleKind::Ranks => self.ranks.is_some(),
            RuleKind::Overhead => self.overhead.is_some(),
            RuleKind::Sink => self.sink.is_some(),
            k => self.tag_rules.iter().any(|r| r.rule.kind() == k),
        }
    }

    /// Turns every rule of `kind` off (the defaults' and any added before).
    pub fn turn_off(&mut self, kind: RuleKind) {
        self.tag_rules.retain(|r| r.rule.kind() != kind);
        if kind == RuleKind::Stall {
            self.stall = None;
        }
        if kind == RuleKind::Disk {
            self.disk = None;
        }
        if kind == RuleKind::Ranks {
            self.ranks = None;
        }
        if kind == RuleKind::Overhead {
            self.overhead = None;
        }
        if kind == RuleKind::Sink {
            self.sink = None;
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
    fn rules_added_in_rust_are_checked() {
        let r = RuleSet::defaults().with(TagRule::above(&["charts/kl"], 0.05));
        assert_eq!(r.problem(), None);
        assert_eq!(
            kinds(&r, "charts/kl"),
            [RuleKind::Nonfinite, RuleKind::Above]
        );
        let bad = RuleSet::empty().with(TagRule::spike(&["losses/?"], 5.0));
        assert!(bad.problem().unwrap().contains("losses/?"), "{bad:?}");
        let bad = RuleSet::empty().with(TagRule::flat_for(&["x"], 0));
        assert!(bad.problem().unwrap().contains("for_values"));
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
