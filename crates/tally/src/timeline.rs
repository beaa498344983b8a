//! The learner and collector timelines (docs/contract/timelines.md).
//!
//! Only the learner's exclusive phases are "accounted"; `Other = max(Iter Wall − accounted, 0)`;
//! every learner percentage uses Iter Wall; nested diagnostics are never added to accounted; the
//! collector cycle is the sum of its cycle phases and is the denominator of collector
//! percentages; the two threads' clocks are never summed. An on-policy iteration is the one
//! exception: its rollout and its update run one after the other, so Iter Time is their sum
//! (docs/contract/timelines.md "On-policy: collect, then train").

use std::sync::OnceLock;
use tally_schema::{input_spec, Input, MetricSpec, Profile, Role};

/// Learner phase keys in display order (Collector Wait … Weight Publish).
pub const LEARNER_ORDER: [&str; 8] = [
    "collector_wait",
    "inference",
    "collector_release",
    "replay_batch_wait",
    "replay_stage",
    "replay_sample",
    "learning",
    "weight_publish",
];

/// Collector keys in display order; Env Step details sit under Env Step.
pub const COLLECTOR_ORDER: [&str; 14] = [
    "mlp_infer",
    "inference_request",
    "learner_action_wait",
    "env_step",
    "env_step_action_validate",
    "env_step_apply_action",
    "env_step_action_backend",
    "env_step_backend",
    "env_step_update_state",
    "env_step_reset_done",
    "transition_extract",
    "replay_write",
    "metrics_publish",
    "rollout",
];

/// Core collector cycle rows, always shown (docs/contract/timelines.md "Collector timeline (sac_family)").
pub const CORE_COLLECTOR: [&str; 3] = ["learner_action_wait", "env_step", "replay_write"];

/// A quiet collector row is shown only at or above this share of the cycle
/// (docs/contract/timelines.md "Collector timeline (sac_family)").
pub const SIGNIFICANCE_PCT: f64 = 1.0;

fn to_ms(spec: &MetricSpec, v: f64) -> f64 {
    v / spec.unit.per_second().unwrap_or(1000.0) * 1000.0
}

fn profile_slot(profile: Profile) -> usize {
    Profile::ALL.iter().position(|p| *p == profile).unwrap_or(0)
}

/// The exclusive learner phases of `profile`, in display order.
pub fn learner_phases(profile: Profile) -> &'static [&'static MetricSpec] {
    static CACHE: OnceLock<Vec<Vec<&'static MetricSpec>>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        Profile::ALL
            .iter()
            .map(|p| {
                LEARNER_ORDER
                    .iter()
                    .filter_map(|k| input_spec(Input::Learner(k)))
                    .filter(|m| m.role == Role::LearnerPhase && m.profiles.contains(*p))
                    .collect()
            })
            .collect()
    });
    &all[profile_slot(profile)]
}

/// The collector rows of `profile` as (key, spec), in display order.
pub fn collector_specs(profile: Profile) -> &'static [(&'static str, &'static MetricSpec)] {
    static CACHE: OnceLock<Vec<Vec<(&'static str, &'static MetricSpec)>>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        Profile::ALL
            .iter()
            .map(|p| {
                COLLECTOR_ORDER
                    .iter()
                    .filter_map(|k| input_spec(Input::Collector(k)).map(|m| (*k, m)))
                    .filter(|(_, m)| m.profiles.contains(*p))
                    .collect()
            })
            .collect()
    });
    &all[profile_slot(profile)]
}

/// The label of a timing row. On-policy, an iteration is Collect then Train
/// (docs/contract/timelines.md "On-policy: collect, then train"), not APPO's overlapping
/// Rollout Wall beside a learner's Learning.
pub fn phase_label(profile: Profile, spec: &MetricSpec) -> &'static str {
    match (profile, spec.tag) {
        (Profile::OnPolicy, "Perf/learning_time") => "Train",
        (Profile::OnPolicy, "Perf/collection_time") => "Collect",
        _ => spec.label,
    }
}

/// One row of the learner timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnerRow {
    /// The phase's spec (label, tag).
    pub spec: &'static MetricSpec,
    /// Milliseconds (0 when the phase was not reported).
    pub ms: f64,
    /// Share of Iter Wall in percent.
    pub pct: f64,
}

/// The learner main-thread timeline: exclusive phases, Other, Iter Wall.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnerTimeline {
    /// Exclusive phases of the profile, in display order.
    pub rows: Vec<LearnerRow>,
    /// Σ exclusive phases, ms (on-policy: the rollout included, though its row is the
    /// collector's).
    pub accounted_ms: f64,
    /// `max(Iter Wall − accounted, 0)`, ms.
    pub other_ms: f64,
    /// Other as a share of Iter Wall.
    pub other_pct: f64,
    /// The denominator: measured Iter Wall, else accounted (on-policy: always accounted,
    /// Iter Time = collect + train).
    pub iter_wall_ms: f64,
    /// Whether Iter Wall was measured (not inferred from the phases).
    pub measured: bool,
}

/// A learner phase's milliseconds (0 when not reported).
fn phase_ms(m: &'static MetricSpec, get: &impl Fn(&'static MetricSpec) -> Option<f64>) -> f64 {
    get(m).map(|v| to_ms(m, v)).unwrap_or(0.0)
}

/// The on-policy rollout's milliseconds (0 when not reported): a phase of the iteration
/// there, not a clock of its own.
fn rollout_ms(get: &impl Fn(&'static MetricSpec) -> Option<f64>) -> f64 {
    let spec = input_spec(Input::Collector("rollout")).expect("registry has Perf/collection_time");
    phase_ms(spec, get)
}

/// Σ exclusive phases and the measured Iter Wall (when measured), in ms.
///
/// On-policy, the phases are the rollout and the update and Iter Time is their sum: a wall the
/// runner measured is not persisted for that profile, so using it here would make the live
/// panel and a replay of the run disagree (docs/contract/timelines.md "On-policy: collect,
/// then train").
fn totals(
    profile: Profile,
    get: &impl Fn(&'static MetricSpec) -> Option<f64>,
) -> (f64, Option<f64>) {
    let accounted_ms: f64 = learner_phases(profile)
        .iter()
        .map(|m| phase_ms(m, get))
        .sum();
    if profile == Profile::OnPolicy {
        return (accounted_ms + rollout_ms(get), None);
    }
    let wall_spec =
        input_spec(Input::Field("iteration_time")).expect("registry has Perf/iteration_time");
    let wall = get(wall_spec).filter(|w| *w > 0.0).map(|s| s * 1000.0);
    (accounted_ms, wall)
}

/// Accounted above a measured Iter Wall (with a relative tolerance for rounding).
fn over(accounted_ms: f64, measured_wall_ms: Option<f64>) -> bool {
    measured_wall_ms.is_some_and(|w| accounted_ms > w * (1.0 + 1e-9))
}

impl LearnerTimeline {
    /// Build from canonical values (`get(tag)` in persisted units).
    pub fn from_values(profile: Profile, get: impl Fn(&str) -> Option<f64>) -> Self {
        Self::from_specs(profile, |m| get(m.tag))
    }

    /// Build from canonical values looked up by spec (the logger's allocation-free path).
    pub fn from_specs(profile: Profile, get: impl Fn(&'static MetricSpec) -> Option<f64>) -> Self {
        let phases: Vec<(&'static MetricSpec, f64)> = learner_phases(profile)
            .iter()
            .map(|m| (*m, phase_ms(m, &get)))
            .collect();
        let (accounted_ms, wall) = totals(profile, &get);
        let iter_wall_ms = wall.unwrap_or(accounted_ms);
        let pct = |ms: f64| {
            if iter_wall_ms > 0.0 {
                ms / iter_wall_ms * 100.0
            } else {
                0.0
            }
        };
        let other_ms = (iter_wall_ms - accounted_ms).max(0.0);
        LearnerTimeline {
            rows: phases
                .into_iter()
                .map(|(spec, ms)| LearnerRow {
                    spec,
                    ms,
                    pct: pct(ms),
                })
                .collect(),
            accounted_ms,
            other_ms,
            other_pct: pct(other_ms),
            iter_wall_ms,
            measured: wall.is_some(),
        }
    }

    /// Accounted above 100 % of a measured Iter Wall is a contract warning to fix, not a
    /// parallel share to explain (Other is still clamped to 0).
    pub fn over_accounted(&self) -> bool {
        over(
            self.accounted_ms,
            self.measured.then_some(self.iter_wall_ms),
        )
    }

    /// Whether the timeline [`Self::from_specs`] builds is [`Self::over_accounted`], without
    /// building it: the logger asks on every step, and steps allocate nothing.
    pub fn over_accounted_specs(
        profile: Profile,
        get: impl Fn(&'static MetricSpec) -> Option<f64>,
    ) -> bool {
        let (accounted_ms, wall) = totals(profile, &get);
        over(accounted_ms, wall)
    }

    /// Accounted as a share of Iter Wall.
    pub fn accounted_pct(&self) -> f64 {
        if self.iter_wall_ms > 0.0 {
            self.accounted_ms / self.iter_wall_ms * 100.0
        } else {
            0.0
        }
    }
}

/// One row of the collector timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectorRow {
    /// The phase's spec.
    pub spec: &'static MetricSpec,
    /// The collector key (`env_step`, ...).
    pub key: &'static str,
    /// Milliseconds, when reported.
    pub ms: Option<f64>,
    /// Share of the collector cycle, when a complete cycle exists; on-policy, the rollout's
    /// share of Iter Time.
    pub pct: Option<f64>,
    /// An Env Step detail (indented; not part of the cycle sum).
    pub detail: bool,
    /// Whether the terminal shows the row.
    pub visible: bool,
}

/// The terminal-derived tag of the collector cycle's total: shown on the panel, never
/// persisted (docs/contract/timelines.md "Collector timeline (sac_family)").
pub const CYCLE_TAG: &str = "Terminal/collector_cycle_ms";

/// The collector's own clock: its rows and, for sac_family, the cycle total.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectorTimeline {
    /// Rows in display order (hidden rows included, `visible == false`).
    pub rows: Vec<CollectorRow>,
    /// Σ cycle phases, only when every cycle phase of the profile was reported.
    pub cycle_ms: Option<f64>,
}

impl CollectorTimeline {
    /// Build from canonical values (`get(tag)` in persisted units).
    pub fn from_values(profile: Profile, get: impl Fn(&str) -> Option<f64>) -> Self {
        let by_spec = |m: &'static MetricSpec| get(m.tag);
        // On-policy the rollout is a share of Iter Time (collect + train), the learner's
        // denominator, not of a collector clock.
        let iter_ms = (profile == Profile::OnPolicy)
            .then(|| totals(profile, &by_spec).0)
            .filter(|ms| *ms > 0.0);
        let specs = collector_specs(profile);
        let cycle_phases: Vec<_> = specs
            .iter()
            .filter(|(_, m)| m.role == Role::CollectorCyclePhase)
            .collect();
        let cycle_ms = if profile == Profile::SacFamily && !cycle_phases.is_empty() {
            cycle_phases
                .iter()
                .map(|(_, m)| get(m.tag).map(|v| to_ms(m, v)))
                .sum::<Option<f64>>()
        } else {
            None
        };
        let rows = specs
            .iter()
            .map(|&(key, spec)| {
                let ms = get(spec.tag).map(|v| to_ms(spec, v));
                let pct = match (cycle_ms.or(iter_ms), ms) {
                    (Some(c), Some(ms)) if c > 0.0 => Some(ms / c * 100.0),
                    _ => None,
                };
                let core = CORE_COLLECTOR.contains(&key);
                let quiet = profile == Profile::SacFamily && !core;
                let visible = if core && profile == Profile::SacFamily {
                    true
                } else if quiet {
                    ms.is_some() && pct.is_none_or(|p| p >= SIGNIFICANCE_PCT)
                } else {
                    ms.is_some()
                };
                CollectorRow {
                    spec,
                    key,
                    ms,
                    pct,
                    detail: spec.role == Role::CollectorDetail,
                    visible,
                }
            })
            .collect();
        CollectorTimeline { rows, cycle_ms }
    }
}
