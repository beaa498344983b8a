//! Running figures for `run_summary.json`, updated on every step (cheap, no I/O).
//!
//! docs/contract/run-artifacts.md "Reward smoothing": the last 10 collector reports (each already
//! a 100-episode mean) are kept; during the run final/best track the mean of those 10; at
//! shutdown final is the last report and best = max(best, final). The tail throughput is
//! Σsteps/Σtime over the last ≤ 20 measured iterations.

use crate::record::StepFigures;
use crate::tag::Tag;
use crate::timeline::LearnerTimeline;
use crate::values::{OddValues, Stored};
use std::collections::VecDeque;
use tally_schema::artifacts::RunSummary;

/// Reports the in-loop reward smoothing averages over.
pub const REWARD_REPORTS: usize = 10;
/// Measured iterations the tail throughput covers.
pub const TAIL_ITERATIONS: usize = 20;

/// The running state behind the summary's figures.
#[derive(Debug, Clone, Default)]
pub struct SummaryState {
    recent_returns: VecDeque<f64>,
    last_return: Option<f64>,
    best: Option<f64>,
    tail: VecDeque<(f64, f64)>,
    /// Completed iterations.
    pub completed_iterations: u64,
    /// Cumulative env steps.
    pub total_env_steps: u64,
    mean_episode_length: Option<f64>,
    final_fps: Option<f64>,
    final_rows: Option<f64>,
    final_wall_ms: Option<f64>,
    final_inference: [Option<f64>; 4],
    odd: OddValues,
    /// Tags already flagged on the panel for a non-finite value (each once a run).
    flagged: Vec<String>,
}

/// A figure given this step replaces the last one, as null when the file holds it non-finite.
fn latest(given: Option<f64>, last: Option<f64>) -> Option<f64> {
    match given {
        Some(v) => Stored::finite(v),
        None => last,
    }
}

impl SummaryState {
    /// The state a resumed run continues from: its counters, last and best reward and episode
    /// length (the smoothing window and tail start empty: their reports are not persisted).
    pub fn resumed_from(s: &RunSummary) -> Self {
        SummaryState {
            completed_iterations: s.completed_iterations,
            total_env_steps: s.total_env_steps,
            last_return: s.final_mean_reward,
            best: s.best_mean_reward,
            mean_episode_length: s.mean_episode_length,
            odd: OddValues {
                nonfinite: s.nonfinite_values,
                underflow: s.underflow_values,
            },
            ..Default::default()
        }
    }

    /// Fold in one accepted step's figures.
    pub fn update(&mut self, f: &StepFigures) {
        self.completed_iterations = f.iteration;
        self.total_env_steps = f.env_steps;
        self.odd.nonfinite += f.odd.nonfinite;
        self.odd.underflow += f.odd.underflow;
        if let Some(ret) = f.episode_return {
            // The last report is what the file's last point holds, NaN included.
            self.last_return = Some(ret);
        }
        if let Some(ret) = f.episode_return.and_then(Stored::finite) {
            if self.recent_returns.len() == REWARD_REPORTS {
                self.recent_returns.pop_front();
            }
            self.recent_returns.push_back(ret);
            let smoothed =
                self.recent_returns.iter().sum::<f64>() / self.recent_returns.len() as f64;
            self.best = Some(self.best.map_or(smoothed, |b| b.max(smoothed)));
        }
        if let Some(l) = f.mean_episode_length {
            self.mean_episode_length = Some(l);
        }
        if let (Some(steps), Some(t)) = (f.steps_this_iter, f.iteration_time) {
            if self.tail.len() == TAIL_ITERATIONS {
                self.tail.pop_front();
            }
            self.tail.push_back((steps, t));
        }
        self.final_fps = latest(f.env_steps_per_sec, self.final_fps);
        self.final_rows = latest(f.rows_per_sec, self.final_rows);
        self.final_wall_ms = latest(f.iteration_time.map(|t| t * 1000.0), self.final_wall_ms);
        for (slot, v) in self.final_inference.iter_mut().zip(f.inference_ms) {
            *slot = latest(v, *slot);
        }
    }

    /// The panel's warning for the tags of `values` that the file holds as NaN or ±inf for the
    /// first time this run; `None` when every one was flagged before.
    pub fn flag_nonfinite(&mut self, iteration: u64, values: &[(Tag, f64)]) -> Option<String> {
        let mut new = Vec::new();
        for (tag, v) in values {
            if Stored::of(*v) == Stored::NonFinite
                && !self.flagged.iter().any(|t| t == tag.as_str())
            {
                self.flagged.push(tag.as_str().to_owned());
                new.push(if v.is_finite() {
                    format!("{} = {v:e} (beyond float32: stored as inf)", tag.as_str())
                } else {
                    format!("{} = {v}", tag.as_str())
                });
            }
        }
        (!new.is_empty()).then(|| {
            format!(
                "non-finite value at iteration {iteration}: {}; persisted as is and counted in \
                 run_summary.json nonfinite_values",
                new.join(", ")
            )
        })
    }

    /// The smoothed (in-loop) final reward: the mean of the last 10 reports.
    pub fn smoothed_reward(&self) -> Option<f64> {
        (!self.recent_returns.is_empty())
            .then(|| self.recent_returns.iter().sum::<f64>() / self.recent_returns.len() as f64)
    }

    /// Write the figures into `s`; `closing` applies the shutdown rule for final/best.
    pub fn fill(&self, s: &mut RunSummary, closing: bool) {
        s.completed_iterations = self.completed_iterations;
        s.total_env_steps = self.total_env_steps;
        s.nonfinite_values = self.odd.nonfinite;
        s.underflow_values = self.odd.underflow;
        // A last report the file holds as NaN/inf is null here, never the report before it.
        let last = self.last_return.and_then(Stored::finite);
        let last_odd = self.last_return.is_some() && last.is_none();
        if closing {
            s.final_mean_reward = last;
            s.best_mean_reward = match (self.best, last) {
                (Some(b), Some(f)) => Some(b.max(f)),
                (b, f) => b.or(f),
            };
        } else {
            s.final_mean_reward = if last_odd {
                None
            } else {
                self.smoothed_reward().or(last)
            };
            s.best_mean_reward = self.best;
        }
        s.mean_episode_length = self.mean_episode_length;
        s.final_env_steps_per_sec = self.final_fps;
        let (steps, time) = self
            .tail
            .iter()
            .fold((0.0, 0.0), |(a, b), (s, t)| (a + s, b + t));
        s.tail_env_steps_per_sec = (time > 0.0).then(|| steps / time);
        s.tail_iteration_count = self.tail.len() as u64;
        s.final_learner_replay_rows_per_sec = self.final_rows;
        s.final_cycle_wall_ms = self.final_wall_ms;
        [
            s.final_inference_ms,
            s.final_inference_h2d_ms,
            s.final_inference_forward_ms,
            s.final_inference_d2h_ms,
        ] = self.final_inference;
    }
}

/// The text of a learner-timeline contract warning.
pub fn contract_warning(iteration: u64, t: &LearnerTimeline) -> String {
    format!(
        "contract warning: learner phases account for {:.1}% of Iter Wall at iteration {iteration} \
         ({:.1} ms of {:.1} ms); exclusive phases overlap or the clock is wrong",
        t.accounted_pct(),
        t.accounted_ms,
        t.iter_wall_ms
    )
}
