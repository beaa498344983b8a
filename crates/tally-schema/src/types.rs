//! The small closed vocabularies every metric spec is written in: unit, owner, role, reduction, profile.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Physical unit of a persisted (or terminal) value.
///
/// Millisecond timing fields end in `_ms`; `Perf/learning_time`, `Perf/collection_time` and
/// `Perf/iteration_time` are seconds (`docs/contract/schema.md`, units).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Unit {
    /// Milliseconds.
    #[serde(rename = "ms")]
    Ms,
    /// Seconds.
    #[serde(rename = "s")]
    S,
    /// Environment steps per second (summed over ranks).
    #[serde(rename = "env_steps/s")]
    EnvStepsPerS,
    /// Learner replay rows per second (summed over ranks).
    #[serde(rename = "rows/s")]
    RowsPerS,
    /// A fraction in `[0, 1]`.
    #[serde(rename = "ratio")]
    Ratio,
    /// A percentage of a denominator named by the metric.
    #[serde(rename = "%")]
    Percent,
    /// A count of events or items.
    #[serde(rename = "count")]
    Count,
    /// Learner iterations.
    #[serde(rename = "iterations")]
    Iterations,
    /// Episode return units.
    #[serde(rename = "reward")]
    Reward,
    /// Environment steps.
    #[serde(rename = "env_steps")]
    EnvSteps,
    /// Natural-log units (entropy, KL).
    #[serde(rename = "nats")]
    Nats,
    /// A gradient norm.
    #[serde(rename = "norm")]
    Norm,
    /// A learning rate.
    #[serde(rename = "lr")]
    LearningRate,
    /// Action-space units.
    #[serde(rename = "action_units")]
    ActionUnits,
    /// Return (Q-value) units.
    #[serde(rename = "return_units")]
    ReturnUnits,
    /// Ring-buffer or ingress slots.
    #[serde(rename = "slots")]
    Slots,
    /// Inference requests.
    #[serde(rename = "requests")]
    Requests,
    /// Collector ticks.
    #[serde(rename = "ticks")]
    Ticks,
    /// A dimensionless quantity (a loss, a ratio of likelihoods).
    #[serde(rename = "unitless")]
    Unitless,
}

impl Unit {
    /// The short text used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::S => "s",
            Unit::EnvStepsPerS => "env_steps/s",
            Unit::RowsPerS => "rows/s",
            Unit::Ratio => "ratio",
            Unit::Percent => "%",
            Unit::Count => "count",
            Unit::Iterations => "iterations",
            Unit::Reward => "reward",
            Unit::EnvSteps => "env_steps",
            Unit::Nats => "nats",
            Unit::Norm => "norm",
            Unit::LearningRate => "lr",
            Unit::ActionUnits => "action_units",
            Unit::ReturnUnits => "return_units",
            Unit::Slots => "slots",
            Unit::Requests => "requests",
            Unit::Ticks => "ticks",
            Unit::Unitless => "unitless",
        }
    }

    /// Factor that turns a duration in seconds (the API unit) into this unit, if it is a time unit.
    pub fn per_second(self) -> Option<f64> {
        match self {
            Unit::Ms => Some(1000.0),
            Unit::S => Some(1.0),
            _ => None,
        }
    }
}

/// The component that measures or computes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    /// The learner main thread or its update.
    Learner,
    /// The collector process (its own clock).
    Collector,
    /// The logger itself (derived from dedicated inputs).
    Logger,
    /// The algorithm runner (loop bookkeeping, DP sync, ring reads).
    Runner,
    /// The environment's managers (reward and termination terms).
    Env,
}

/// What a value means on its timeline; decides how the logger and the panel treat it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// An exclusive phase of the learner main thread; summed into "accounted".
    LearnerPhase,
    /// The learner's measured Iter Wall, the denominator of every learner percentage.
    LearnerTotal,
    /// A nested or background diagnostic; never added to "accounted".
    NestedDiagnostic,
    /// An exclusive phase of the collector's cycle (sac_family); summed into the cycle.
    CollectorCyclePhase,
    /// A detail nested under a collector phase (Env Step); not part of the cycle sum.
    CollectorDetail,
    /// A per-step EMA on the APPO collector (MLP Infer); not a share of anything.
    CollectorPerStep,
    /// A whole-rollout wall clock (APPO collector).
    RolloutTotal,
    /// An instantaneous level (queue depth, occupancy).
    Gauge,
    /// A cumulative or per-iteration count.
    Counter,
    /// A rate of the whole job.
    Throughput,
    /// A training statistic of the algorithm (loss, norm, temperature, reward).
    TrainingMetric,
    /// Derived in memory for the terminal only; never persisted.
    TerminalDerived,
}

impl Role {
    /// The snake_case name used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::LearnerPhase => "learner_phase",
            Role::LearnerTotal => "learner_total",
            Role::NestedDiagnostic => "nested_diagnostic",
            Role::CollectorCyclePhase => "collector_cycle_phase",
            Role::CollectorDetail => "collector_detail",
            Role::CollectorPerStep => "collector_per_step",
            Role::RolloutTotal => "rollout_total",
            Role::Gauge => "gauge",
            Role::Counter => "counter",
            Role::Throughput => "throughput",
            Role::TrainingMetric => "training_metric",
            Role::TerminalDerived => "terminal_derived",
        }
    }
}

/// How rank 0 combines one value across data-parallel ranks.
///
/// Learner metrics and timings are averaged across ranks; Steps/s and Rows/s are summed, so
/// both are the whole job's throughput (`docs/contract/ranks.md`, cross-rank reductions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reduction {
    /// Arithmetic mean over the ranks that reported the value.
    Mean,
    /// Sum over the ranks that reported the value.
    Sum,
    /// Largest value over the ranks (user metrics only).
    Max,
    /// Smallest value over the ranks (user metrics only).
    Min,
    /// The value of the highest rank that reported it (user metrics only).
    Last,
}

impl Reduction {
    /// Every reduction, in the order names are listed in messages.
    pub const ALL: [Reduction; 5] = [
        Reduction::Mean,
        Reduction::Sum,
        Reduction::Max,
        Reduction::Min,
        Reduction::Last,
    ];

    /// The name used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Reduction::Mean => "mean",
            Reduction::Sum => "sum",
            Reduction::Max => "max",
            Reduction::Min => "min",
            Reduction::Last => "last",
        }
    }
}

impl std::str::FromStr for Reduction {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Reduction::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("unknown reduction '{s}': expected mean, sum, max, min or last"))
    }
}

/// Which value of a user metric the run summary keeps (W&B's summary does the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SummaryStat {
    /// The last logged value.
    #[default]
    Last,
    /// The largest logged value.
    Max,
    /// The smallest logged value.
    Min,
    /// The mean of every logged value.
    Mean,
}

impl SummaryStat {
    /// Every statistic, in the order names are listed in messages.
    pub const ALL: [SummaryStat; 4] = [
        SummaryStat::Last,
        SummaryStat::Max,
        SummaryStat::Min,
        SummaryStat::Mean,
    ];

    /// The name used in the API and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryStat::Last => "last",
            SummaryStat::Max => "max",
            SummaryStat::Min => "min",
            SummaryStat::Mean => "mean",
        }
    }
}

impl std::str::FromStr for SummaryStat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SummaryStat::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("unknown summary '{s}': expected last, max, min or mean"))
    }
}

/// A timing profile: which learner and collector timelines a run has. Serialised as its
/// configuration name ([`Profile::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// SAC, FlashSAC, WarpSAC: learner-owned inference, per-tick collector cycle.
    SacFamily,
    /// APPO: ring buffer of rollouts, replay staging, weight publish.
    Appo,
    /// PPO and other on-policy runners: collect, then learn.
    OnPolicy,
    /// Trinity-RFT style runs: the hierarchical `{category}/...` key namespace
    /// (`docs/contract/rft.md`) instead of the closed RL registry.
    Rft,
}

impl Profile {
    /// Every profile, in table order.
    pub const ALL: [Profile; 4] = [
        Profile::SacFamily,
        Profile::Appo,
        Profile::OnPolicy,
        Profile::Rft,
    ];

    /// The first iteration a runner of this profile counts: on-policy runners count from 0
    /// (their iteration is the step axis), the others from 1; so the last iteration of
    /// `max_iterations` is `max_iterations - 1 + first_iteration`.
    pub fn first_iteration(self) -> u64 {
        match self {
            Profile::OnPolicy => 0,
            _ => 1,
        }
    }

    /// The configuration name (`sac_family`, `appo`, `onpolicy`).
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::SacFamily => "sac_family",
            Profile::Appo => "appo",
            Profile::OnPolicy => "onpolicy",
            Profile::Rft => "rft",
        }
    }

    /// Whether the run's step axis is always the iteration (on-policy and RFT runs).
    pub fn iteration_axis(self) -> bool {
        matches!(self, Profile::OnPolicy | Profile::Rft)
    }

    fn bit(self) -> u8 {
        match self {
            Profile::SacFamily => 1,
            Profile::Appo => 2,
            Profile::OnPolicy => 4,
            Profile::Rft => 8,
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Profile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Profile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for Profile {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Profile".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Profile::ALL.iter().map(|p| p.as_str()).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                format!("unknown timing profile '{s}': expected sac_family, appo, onpolicy or rft")
            })
    }
}

/// A set of profiles, as a bit set so specs stay `const`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Profiles(u8);

impl Profiles {
    /// sac_family only.
    pub const SAC: Profiles = Profiles(1);
    /// appo only.
    pub const APPO: Profiles = Profiles(2);
    /// onpolicy only.
    pub const ONPOLICY: Profiles = Profiles(4);
    /// sac_family and appo (the off-policy profiles).
    pub const OFFPOLICY: Profiles = Profiles(1 | 2);
    /// appo and onpolicy.
    pub const APPO_ONPOLICY: Profiles = Profiles(2 | 4);
    /// Every RL profile (the closed registry's; `rft` has its own namespace).
    pub const ALL: Profiles = Profiles(1 | 2 | 4);

    /// Whether `profile` is in the set.
    pub fn contains(self, profile: Profile) -> bool {
        self.0 & profile.bit() != 0
    }

    /// The member profiles in table order.
    pub fn iter(self) -> impl Iterator<Item = Profile> {
        Profile::ALL.into_iter().filter(move |p| self.contains(*p))
    }
}

impl Serialize for Profiles {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(Profile::as_str))
    }
}

/// Which field of a step submission feeds a value (the logger validates against this).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Input {
    /// The free `metrics` map of learner/runner-owned canonical tags.
    Metrics,
    /// The `learner` phase map (seconds), under this key.
    Learner(&'static str),
    /// The `collector` phase map (seconds), under this key.
    Collector(&'static str),
    /// The collector inference-flight gauges, under this key.
    CollectorInference(&'static str),
    /// A dedicated scalar field of the step submission (`episode_return`, `iteration_time`, ...).
    Field(&'static str),
    /// Computed by the logger; never accepted as input.
    Derived,
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Metrics => f.write_str("metrics"),
            Input::Learner(k) => write!(f, "learner.{k}"),
            Input::Collector(k) => write!(f, "collector.{k}"),
            Input::CollectorInference(k) => write!(f, "collector_inference.{k}"),
            Input::Field(k) => f.write_str(k),
            Input::Derived => f.write_str("derived"),
        }
    }
}

impl Serialize for Input {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
