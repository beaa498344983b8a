//! Resolution: fail-closed validation of one `StepInput` against schema v1 and the run's
//! timing profile, into a [`Resolved`] record (docs/contract/step.md "Fail-closed validation").
//!
//! The registry is closed; retired and legacy tags, reserved
//! reward terms, logger-owned tags passed through `metrics`, and phases the profile does not
//! have are rejected with an error naming the key. Validation never mutates logger state, so
//! a rejected step loses nothing already logged.

use crate::error::Error;
use crate::input::{OutsideKeys, StepInput, SystemInfo};
use crate::tag::{FamilyInterner, Tag};
use crate::values::StepValues;
use rustc_hash::FxHashMap as HashMap;
use std::sync::OnceLock;
use tally_schema::{input_spec, FamilySpec, Input, MetricSpec, Profile, FAMILIES, METRICS};

pub(crate) mod bounds;
mod maps;
mod memo;

pub use bounds::MAX_COUNT;
use bounds::{check_count, check_duration, check_nonneg, err};
use memo::SpecMemo;

/// A validated step: every value resolved to its canonical tag and converted to its unit.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The learner iteration.
    pub iteration: u64,
    /// The backend step: env steps when > 0, else the iteration.
    pub step: i64,
    /// Whether env steps are the step axis.
    pub env_axis: bool,
    /// Cumulative env steps.
    pub env_steps: u64,
    /// Canonical values in persisted units, in submission order and by spec.
    pub values: StepValues,
    /// The measured Iter Wall in seconds (None when not measured or zero).
    pub iteration_time: Option<f64>,
    /// Collector recent-100-episode mean return.
    pub episode_return: Option<f64>,
    /// Env steps collected this iteration.
    pub steps_this_iter: Option<f64>,
    /// Replay rows consumed this iteration.
    pub replay_rows_this_iter: Option<f64>,
    /// System facts.
    pub system: SystemInfo,
}

/// The step-axis state a new step must advance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Axis {
    /// The last accepted iteration.
    pub last_iteration: Option<u64>,
    /// The last accepted env-step count.
    pub last_env_steps: u64,
    /// Where a resumed run stopped (or was rewound to), no step accepted since: a step that
    /// does not advance past it is told how to go on from an earlier checkpoint.
    pub resumed: bool,
}

impl Axis {
    /// The axis once `r` is accepted.
    pub fn after(r: &Resolved) -> Axis {
        Axis {
            last_iteration: Some(r.iteration),
            last_env_steps: r.env_steps,
            resumed: false,
        }
    }

    /// What a refusal adds on a resumed run's first step: the run stopped there, and a job
    /// restarting from an earlier checkpoint rewinds to it (docs/contract/run-artifacts.md
    /// "Resume").
    fn resume_hint(&self) -> &'static str {
        if self.resumed {
            " (the resumed run's last step; a job restarting from a checkpoint of an earlier \
             iteration passes it as resume_from= to rewind the run to it)"
        } else {
            ""
        }
    }
}

/// The most values the dedicated `StepInput` fields add (iteration_time, episode_return,
/// episode_length, timeout_rate, Train/iteration).
const DEDICATED_FIELDS: usize = 5;

/// The most values the terminal adds to a step's own: Iter Wall, the env-step rate, Rows/s
/// (`StepRecord::derive` appends them to the resolved values, so resolution makes room).
pub const TERMINAL_EXTRA: usize = 3;

/// Add a registry value given through `field['key']`; a second value for its spec is refused.
#[inline]
fn push_spec(
    out: &mut StepValues,
    iteration: u64,
    field: &'static str,
    key: &str,
    m: &'static MetricSpec,
    v: f64,
) -> Result<(), Error> {
    match out.push_spec(m, v) {
        Ok(()) => Ok(()),
        Err(_) => Err(duplicate_spec(iteration, field, key, m)),
    }
}

/// The refusal of a spec given twice (out of line: every value passes through `push_spec`).
#[cold]
#[inline(never)]
fn duplicate_spec(iteration: u64, field: &'static str, key: &str, m: &MetricSpec) -> Error {
    err(
        iteration,
        field,
        key,
        format!("duplicate: {} was already given in this step", m.tag),
    )
}

/// The interner slot of the `rft` profile's free keys (after the families').
fn rft_slot() -> usize {
    FAMILIES.len()
}

/// The interner slot of user metric tags (after the rft keys').
fn user_slot() -> usize {
    FAMILIES.len() + 1
}

/// Add a user metric's value; a tag given twice is refused.
fn push_user(
    out: &mut StepValues,
    iteration: u64,
    key: &str,
    tag: std::sync::Arc<str>,
    v: f64,
) -> Result<(), Error> {
    out.push_named(Tag::User(tag), v).map_err(|_| {
        err(
            iteration,
            "metrics",
            key,
            "duplicate: given twice in this step",
        )
    })
}

/// Add the value of a dedicated `StepInput` field.
fn push_field(
    out: &mut StepValues,
    iteration: u64,
    field: &'static str,
    m: &'static MetricSpec,
    v: f64,
) -> Result<(), Error> {
    push_spec(out, iteration, field, field, m, v)
}

/// The keys of `input` kind that the profile accepts, for error messages.
fn keys_for(profile: Profile, pick: impl Fn(&Input) -> Option<&'static str>) -> String {
    METRICS
        .iter()
        .filter(|m| m.profiles.contains(profile))
        .filter_map(|m| pick(&m.input))
        .collect::<Vec<_>>()
        .join(", ")
}

fn profiles_text(m: &MetricSpec) -> String {
    m.profiles
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join("/")
}

fn dedicated(m: &MetricSpec) -> String {
    match m.input {
        Input::Learner(k) => format!("the learner map as '{k}' (seconds)"),
        Input::Collector(k) => format!("the collector map as '{k}' (seconds)"),
        Input::CollectorInference(k) => format!("the collector_inference map as '{k}'"),
        Input::Field(f) => format!("the dedicated '{f}' input"),
        Input::Derived | Input::Metrics => "no input: the logger derives it".to_owned(),
    }
}

/// The spec fed by `key` of a phase map (`learner`, `collector`, `collector_inference`).
fn phase_spec(field: &str, key: &str) -> Option<&'static MetricSpec> {
    type ByKey = HashMap<&'static str, &'static MetricSpec>;
    static MAPS: OnceLock<[ByKey; 3]> = OnceLock::new();
    let maps = MAPS.get_or_init(|| {
        let mut maps: [ByKey; 3] = Default::default();
        for m in METRICS {
            match m.input {
                Input::Learner(k) => maps[0].insert(k, m),
                Input::Collector(k) => maps[1].insert(k, m),
                Input::CollectorInference(k) => maps[2].insert(k, m),
                _ => None,
            };
        }
        maps
    });
    maps[phase_slot(field)].get(key).copied()
}

/// The place of phase map `field` (`learner`, `collector`, `collector_inference`) in per-map
/// arrays.
fn phase_slot(field: &str) -> usize {
    match field {
        "learner" => 0,
        "collector" => 1,
        _ => 2,
    }
}

/// The registry's key for learner phase `name` of `profile`, or why it is not one, listing the
/// profile's phases (a phase timer is checked when made: docs/contract/step.md "Input bounds").
pub fn learner_phase(profile: Profile, name: &str) -> Result<&'static str, String> {
    let known = || {
        keys_for(profile, |i| match i {
            Input::Learner(k) => Some(*k),
            _ => None,
        })
    };
    let spec = phase_spec("learner", name);
    if let Some(Input::Learner(k)) = spec
        .filter(|m| m.profiles.contains(profile))
        .map(|m| m.input)
    {
        return Ok(k);
    }
    match spec {
        _ if known().is_empty() => Err(format!(
            "'{name}': the {profile} profile has no learner phases"
        )),
        Some(m) => Err(format!(
            "learner phase '{name}' ({}) is not emitted by the {profile} profile (only {}); \
             its learner phases: {}",
            m.tag,
            profiles_text(m),
            known()
        )),
        None => Err(format!(
            "unknown learner phase '{name}' for the {profile} profile (known: {})",
            known()
        )),
    }
}

fn family_index(f: &FamilySpec) -> usize {
    FAMILIES
        .iter()
        .position(|g| std::ptr::eq(g, f))
        .unwrap_or(0)
}

/// Resolves step inputs for one profile; owns the family-tag interner.
#[derive(Debug)]
pub struct Resolver {
    profile: Profile,
    max_iterations: Option<u64>,
    /// The `rft` profile's keys outside its namespace: refused, or user metrics.
    outside_keys: OutsideKeys,
    families: FamilyInterner,
    /// Family members given through `metrics` (`Episode_Termination/<cause>`) once accepted:
    /// a repeat skips the full schema lookup and the term's validation.
    metric_families: HashMap<Box<str>, (&'static FamilySpec, std::sync::Arc<str>)>,
    /// The duplicate check's set of a step with many named values, kept between steps.
    named_seen: rustc_hash::FxHashSet<usize>,
    /// Last step's registry lookups by position in `metrics` and in each phase map.
    metric_memo: SpecMemo,
    phase_memo: [SpecMemo; 3],
}

impl Resolver {
    /// A resolver for `profile`; a known `max_iterations` is the last iteration accepted.
    pub fn new(profile: Profile, max_iterations: Option<u64>) -> Self {
        Resolver {
            profile,
            max_iterations,
            outside_keys: OutsideKeys::Refuse,
            families: FamilyInterner::default(),
            metric_families: HashMap::default(),
            named_seen: Default::default(),
            metric_memo: SpecMemo::default(),
            phase_memo: Default::default(),
        }
    }

    /// This resolver with `outside_keys` for the `rft` profile's keys outside its namespace.
    pub fn with_outside_keys(mut self, outside_keys: OutsideKeys) -> Self {
        self.outside_keys = outside_keys;
        self
    }

    /// The profile validated against.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    #[inline]
    fn spec_in_profile(
        &self,
        it: u64,
        field: &'static str,
        key: &str,
        m: &'static MetricSpec,
    ) -> Result<(), Error> {
        if m.profiles.contains(self.profile) {
            Ok(())
        } else {
            self.not_in_profile(it, field, key, m)
        }
    }

    #[cold]
    #[inline(never)]
    fn not_in_profile(
        &self,
        it: u64,
        field: &'static str,
        key: &str,
        m: &'static MetricSpec,
    ) -> Result<(), Error> {
        Err(err(
            it,
            field,
            key,
            format!(
                "{} is not emitted by the {} profile (only {})",
                m.tag,
                self.profile,
                profiles_text(m)
            ),
        ))
    }

    /// Validate `input` against the profile and the step `axis`; nothing is mutated on error.
    /// The values are collected in `buf` (emptied first: a spare buffer of an earlier step),
    /// which also leaves room for the values the terminal adds.
    pub fn resolve(
        &mut self,
        input: &StepInput,
        axis: Axis,
        buf: Vec<(Tag, f64)>,
    ) -> Result<Resolved, Error> {
        let it = input.iteration;
        // Bounds first: an accepted step past them could never be advanced past again.
        check_count(it, "iteration", it)?;
        check_count(it, "env_steps", input.env_steps)?;
        if let Some(max) = self.max_iterations.filter(|&m| it > m) {
            return Err(err(
                it,
                "iteration",
                "iteration",
                format!(
                    "iteration {it} is past max_iterations {max}, the run's last iteration \
                     (raise max_iterations, or leave it unset when unknown)"
                ),
            ));
        }
        if let Some(last) = axis.last_iteration {
            if it <= last {
                return Err(err(
                    it,
                    "iteration",
                    "iteration",
                    format!(
                        "iteration {it} does not advance past {last}{}",
                        axis.resume_hint()
                    ),
                ));
            }
        }
        // Off-policy runs use env steps as the axis when known; on-policy runs always use the
        // (zero-based) iteration (docs/contract/step.md, the step axis).
        let env_axis = input.env_steps > 0 && !self.profile.iteration_axis();
        if axis.last_env_steps > 0 && input.env_steps == 0 && !self.profile.iteration_axis() {
            return Err(err(
                it,
                "env_steps",
                "env_steps",
                format!(
                    "env_steps fell from {} to 0; the step axis cannot switch back to iterations",
                    axis.last_env_steps
                ),
            ));
        }
        if env_axis && input.env_steps <= axis.last_env_steps {
            return Err(err(
                it,
                "env_steps",
                "env_steps",
                format!(
                    "env step axis collision: {} does not advance past {}{}",
                    input.env_steps,
                    axis.last_env_steps,
                    axis.resume_hint()
                ),
            ));
        }
        let step = if env_axis { input.env_steps } else { it };
        // Below MAX_COUNT (checked above), so within TensorBoard's int64 step.
        let step = step as i64;

        // Every map, the dedicated fields, and the terminal-only values (TERMINAL_EXTRA).
        let mut values = StepValues::with_buffer(
            buf,
            input.metrics.len()
                + input.learner.len()
                + input.collector.len()
                + input.collector_inference.len()
                + input.rewards.len()
                + DEDICATED_FIELDS
                + TERMINAL_EXTRA,
        );
        values.lend_seen(std::mem::take(&mut self.named_seen));
        if self.profile == Profile::Rft {
            self.rft(input, &mut values)?;
            self.named_seen = values.take_seen();
            return Ok(Resolved {
                iteration: it,
                step,
                env_axis,
                env_steps: input.env_steps,
                values,
                iteration_time: None,
                episode_return: None,
                steps_this_iter: None,
                replay_rows_this_iter: None,
                system: input.system,
            });
        }
        self.metrics(it, &input.metrics, &mut values)?;
        self.phases(it, "learner", &input.learner, &mut values, |i| {
            matches!(i, Input::Learner(_))
        })?;
        self.phases(it, "collector", &input.collector, &mut values, |i| {
            matches!(i, Input::Collector(_))
        })?;
        self.phases(
            it,
            "collector_inference",
            &input.collector_inference,
            &mut values,
            |i| matches!(i, Input::CollectorInference(_)),
        )?;
        self.rewards(it, &input.rewards, &mut values)?;

        let field = |name: &'static str| {
            input_spec(Input::Field(name)).expect("dedicated field in registry")
        };
        let iteration_time = match input.iteration_time {
            Some(t) => {
                check_duration(it, "iteration_time", "iteration_time", t)?;
                (t > 0.0).then_some(t)
            }
            None => None,
        };
        if let Some(t) = iteration_time {
            let m = field("iteration_time");
            if m.profiles.contains(self.profile) {
                push_field(&mut values, it, "iteration_time", m, t)?;
            }
        }
        if let Some(r) = input.episode_return {
            push_field(
                &mut values,
                it,
                "episode_return",
                field("episode_return"),
                r,
            )?;
        }
        if let Some(l) = input.episode_length {
            check_nonneg(it, "episode_length", "episode_length", l)?;
            if l > 0.0 {
                push_field(
                    &mut values,
                    it,
                    "episode_length",
                    field("episode_length"),
                    l,
                )?;
            }
        }
        if let Some(r) = input.timeout_rate {
            if !(0.0..=1.0).contains(&r) {
                return Err(err(
                    it,
                    "timeout_rate",
                    "timeout_rate",
                    format!("{r} is not a ratio in [0, 1]"),
                ));
            }
            push_field(&mut values, it, "timeout_rate", field("timeout_rate"), r)?;
        }
        if env_axis {
            let m = field("iteration");
            if m.profiles.contains(self.profile) {
                push_field(&mut values, it, "iteration", m, it as f64)?;
            }
        }
        for (name, v) in [
            ("steps_this_iter", input.steps_this_iter),
            ("replay_rows_this_iter", input.replay_rows_this_iter),
        ] {
            if let Some(v) = v {
                check_nonneg(it, name, name, v)?;
            }
        }
        self.named_seen = values.take_seen();
        Ok(Resolved {
            iteration: it,
            step,
            env_axis,
            env_steps: input.env_steps,
            values,
            iteration_time,
            episode_return: input.episode_return,
            steps_this_iter: input.steps_this_iter,
            replay_rows_this_iter: input.replay_rows_this_iter,
            system: input.system,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(r: Result<Resolved, Error>) -> String {
        match r {
            Err(Error::InvalidStep { key, reason, .. }) => format!("{key}: {reason}"),
            other => panic!("expected an invalid step, got {other:?}"),
        }
    }

    #[test]
    fn one_tag_named_two_ways_is_a_duplicate_whichever_key_came_first() {
        // Duplicates are found by interned pointer: a bare and a prefixed term share one tag.
        let mut r = Resolver::new(Profile::SacFamily, None);
        let axis = Axis::default();
        let step =
            |a: &'static str, b: &'static str| StepInput::new(1).reward(a, 1.0).reward(b, 2.0);
        for (a, b) in [
            ("tracking", "reward/tracking"),
            ("reward/air", "air"),
            ("reward/tracking", "tracking"),
        ] {
            let why = reason(r.resolve(&step(a, b), axis, Vec::new()));
            assert!(why.starts_with(&format!("{b}: duplicate")), "{why}");
        }
        // Distinct terms still go through, each once.
        let ok = r
            .resolve(&step("tracking", "air"), axis, Vec::new())
            .unwrap();
        let tags: Vec<&str> = ok
            .values
            .entries()
            .iter()
            .map(|(t, _)| t.as_str())
            .collect();
        assert_eq!(tags, ["reward/tracking", "reward/air"]);
    }

    #[test]
    fn a_family_member_through_metrics_seen_before_resolves_alike_and_is_still_checked() {
        // The second and third steps take the cached path of a key accepted in the first.
        let mut r = Resolver::new(Profile::SacFamily, None);
        let axis = Axis::default();
        let key = "Episode_Termination/time_out";
        let one = |i| StepInput::new(i).metric(key, 0.25);
        let first = r.resolve(&one(1), axis, Vec::new()).unwrap();
        let again = r.resolve(&one(2), axis, Vec::new()).unwrap();
        for got in [&first, &again] {
            let (tag, v) = &got.values.entries()[0];
            assert!(matches!(tag, Tag::Family(f, _) if f.prefix == "Episode_Termination/"));
            assert_eq!((tag.as_str(), *v), (key, 0.25));
        }
        assert!(first.values.entries()[0]
            .0
            .same_interned(&again.values.entries()[0].0));
        let twice = StepInput::new(3).metric(key, 0.25).metric(key, 0.5);
        let why = reason(r.resolve(&twice, axis, Vec::new()));
        assert!(why.starts_with(&format!("{key}: duplicate")), "{why}");
        // A profile without the family still refuses it, cache or not.
        let mut rft = Resolver::new(Profile::Rft, None);
        assert!(rft.resolve(&one(1), axis, Vec::new()).is_err());
    }
}
