//! `StepRecord`: everything the logger derives from one accepted step, computed once — the
//! backend payload, the terminal sample, the learner timeline and the run-summary figures.
//! (docs/contract/step.md "The backend payload".)

use crate::input::SystemInfo;
use crate::reduce::Rates;
use crate::resolve::Resolved;
use crate::tag::Tag;
use crate::timeline::LearnerTimeline;
use crate::values::OddValues;
use std::sync::OnceLock;
use tally_schema::{metric, MetricSpec, Profile};

/// The registry specs the derivation reads by name, looked up once.
struct Specs {
    iteration_time: &'static MetricSpec,
    total_fps: &'static MetricSpec,
    rows_per_sec: &'static MetricSpec,
    mean_episode_length: &'static MetricSpec,
    inference: [&'static MetricSpec; 4],
}

fn specs() -> &'static Specs {
    static SPECS: OnceLock<Specs> = OnceLock::new();
    SPECS.get_or_init(|| {
        let m = |tag| metric(tag).expect("tag is in the registry");
        Specs {
            iteration_time: m("Perf/iteration_time"),
            total_fps: m("Perf/total_fps"),
            rows_per_sec: m("Terminal/rows_per_sec"),
            mean_episode_length: m("Train/mean_episode_length"),
            inference: [
                m("Perf/learner_inference_ms"),
                m("Perf/learner_inference_h2d_ms"),
                m("Perf/learner_inference_forward_ms"),
                m("Perf/learner_inference_d2h_ms"),
            ],
        }
    })
}

/// What `run_summary.json` folds in from one step.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepFigures {
    /// The learner iteration.
    pub iteration: u64,
    /// Cumulative env steps.
    pub env_steps: u64,
    /// Collector recent-100-episode mean return.
    pub episode_return: Option<f64>,
    /// `Train/mean_episode_length`, when given.
    pub mean_episode_length: Option<f64>,
    /// Env steps collected this iteration.
    pub steps_this_iter: Option<f64>,
    /// Measured Iter Wall in seconds.
    pub iteration_time: Option<f64>,
    /// Rank-summed env steps per second.
    pub env_steps_per_sec: Option<f64>,
    /// Rank-summed replay rows per second.
    pub rows_per_sec: Option<f64>,
    /// Learner inference, H2D, forward, D2H in ms, when given.
    pub inference_ms: [Option<f64>; 4],
    /// This step's values the event file holds as non-finite or underflowed, whether or not
    /// `log_interval` writes the step (docs/contract/step.md "Input bounds").
    pub odd: OddValues,
}

/// One accepted step, derived once.
#[derive(Debug, Clone)]
pub struct StepRecord {
    /// The learner iteration.
    pub iteration: u64,
    /// The backend step axis value.
    pub step: i64,
    /// Cumulative env steps.
    pub env_steps: u64,
    /// The persisted canonical tags, unsmoothed; `None` when `log_interval` skips this step.
    pub payload: Option<Vec<(Tag, f64)>>,
    /// Every canonical value plus the terminal-only ones, for the 2 s window.
    pub terminal: Vec<(Tag, f64)>,
    /// This step's learner timeline when it is over-accounted (a contract warning), else `None`:
    /// most steps never build it.
    pub over_accounted: Option<LearnerTimeline>,
    /// The run-summary figures.
    pub figures: StepFigures,
    /// System facts for the panel.
    pub system: SystemInfo,
    /// How many `terminal` entries are user metrics.
    pub user_metrics: usize,
}

/// Whether `a` and `b` are one tag: the same kind and text (one registry spec, or one family
/// member, free key or user metric, whose text names it).
fn same_tag(a: &Tag, b: &Tag) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b) && a == b
}

impl StepRecord {
    /// Derive the record of `r`; `persist` is the buffer to build the backend payload in (a
    /// spare one of an earlier step, still holding its values, overwritten here) when the
    /// backend writes this step.
    ///
    /// The payload holds the persisted values, plus `Perf/total_fps` from the rank-summed rate
    /// when the profile has it; `Perf/iteration_time` only when measured and `Train/iteration`
    /// only on the env-step axis were already decided by resolution. The terminal also gets
    /// Iter Wall, the rate and Rows/s whatever the profile persists.
    pub fn derive(
        profile: Profile,
        r: Resolved,
        rates: Rates,
        persist: Option<Vec<(Tag, f64)>>,
    ) -> StepRecord {
        let s = specs();
        let get = |m: &'static MetricSpec| {
            if std::ptr::eq(m, s.iteration_time) {
                r.iteration_time
            } else {
                r.values.get(m)
            }
        };
        let over_accounted = LearnerTimeline::over_accounted_specs(profile, get)
            .then(|| LearnerTimeline::from_specs(profile, get));
        let fps = rates.env_steps_per_sec;
        let fps_stored = fps.filter(|_| s.total_fps.profiles.contains(profile));
        let mut odd = OddValues::default();
        for v in r.values.entries().iter().map(|(_, v)| *v).chain(fps_stored) {
            odd.count(v);
        }
        let figures = StepFigures {
            iteration: r.iteration,
            env_steps: r.env_steps,
            episode_return: r.episode_return,
            mean_episode_length: r.values.get(s.mean_episode_length),
            steps_this_iter: r.steps_this_iter,
            iteration_time: r.iteration_time,
            env_steps_per_sec: rates.env_steps_per_sec,
            rows_per_sec: rates.rows_per_sec,
            inference_ms: s.inference.map(|m| r.values.get(m)),
            odd,
        };
        let payload = persist.map(|mut out| {
            // `out` holds a written step's values: a steady run's tags are the same, in the
            // same order, and are kept, their values overwritten (no reference count moves).
            let persisted = r.values.entries().iter().filter(|(t, _)| t.persisted());
            let fps = fps_stored.map(|fps| (Tag::Spec(s.total_fps), fps));
            // A fresh buffer (none came back from the writer yet) is made at once, not by
            // doubling as the values come: one allocation.
            let most = r.values.entries().len() + 1;
            out.reserve(most.saturating_sub(out.len()));
            let mut n = 0;
            for (t, v) in persisted.chain(fps.as_ref()) {
                match out.get_mut(n) {
                    Some(e) if same_tag(&e.0, t) => e.1 = *v,
                    Some(e) => *e = (t.clone(), *v),
                    None => out.push((t.clone(), *v)),
                }
                n += 1;
            }
            out.truncate(n);
            out
        });
        let wall_given = r.values.get(s.iteration_time).is_some();
        let user_metrics = r.values.user_count();
        let mut terminal = r.values.into_entries();
        if let Some(t) = r.iteration_time.filter(|_| !wall_given) {
            terminal.push((Tag::Spec(s.iteration_time), t));
        }
        if let Some(fps) = fps {
            terminal.push((Tag::Spec(s.total_fps), fps));
        }
        if let Some(rows) = rates.rows_per_sec {
            terminal.push((Tag::Spec(s.rows_per_sec), rows));
        }
        StepRecord {
            iteration: r.iteration,
            step: r.step,
            env_steps: r.env_steps,
            payload,
            terminal,
            over_accounted,
            figures,
            system: r.system,
            user_metrics,
        }
    }
}
