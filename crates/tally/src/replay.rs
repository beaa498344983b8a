//! Replay: a run's persisted events back into terminal state, through the same
//! [`TerminalState`] calls a live [`crate::Logger`] makes, so `tally watch` shows what the live
//! panel showed (docs/contract/panel.md "tally watch").
//!
//! Event wall times are placed on the run's clock, so the 2 s window and the panel's "now"
//! agree. Values never persisted (Rows/s, buffer size, batch per rank, CUDA MPS) are not in an
//! event file and stay at their defaults.

use crate::input::SystemInfo;
use crate::tag::Tag;
use crate::terminal::{Level, TerminalState};
use crate::window::Sample;
use std::sync::Arc;
use tally_clock::Clock;
use tally_schema::{lookup, TagRef};
use tally_tfevents::ScalarEvent;

/// Feeds persisted events into a [`TerminalState`].
#[derive(Debug)]
pub struct Replay {
    clock: Arc<dyn Clock>,
    last_t: Option<f64>,
}

fn canonical(name: &str) -> Option<Tag> {
    match lookup(name).ok()? {
        TagRef::Metric(m) => Some(Tag::Spec(m)),
        TagRef::Family(f, _) => Some(Tag::Family(f, Arc::from(name))),
        TagRef::User(_) => Some(Tag::User(Arc::from(name))),
    }
}

impl Replay {
    /// A replay onto `clock` (the clock the panel reads "now" from).
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Replay {
            clock,
            last_t: None,
        }
    }

    /// Add one event: its step, wall time and scalars. Legacy, retired and unknown
    /// canonical-group tags are not shown.
    pub fn event(
        &mut self,
        state: &mut TerminalState,
        step: i64,
        wall: f64,
        scalars: &[ScalarEvent],
    ) {
        // A system sample is its own event: shown in the System column, never a step
        // (docs/contract/system-metrics.md "Where it shows").
        if !scalars.is_empty() && scalars.iter().all(|s| crate::system::is_system_tag(&s.tag)) {
            // The column shows rank 0's sample: other ranks' ("Ranks") leave it as it is.
            let values: Vec<(Arc<str>, f64)> = scalars
                .iter()
                .filter(|s| !crate::system::ranks::is_rank_tag(&s.tag))
                .map(|s| (Arc::from(s.tag.as_str()), s.value))
                .collect();
            if !values.is_empty() {
                state.system_sample(&values);
            }
            return;
        }
        let values: Vec<(Tag, f64)> = scalars
            .iter()
            .filter_map(|s| canonical(&s.tag).map(|t| (t, s.value)))
            .collect();
        let get = |tag: &str| scalars.iter().find(|s| s.tag == tag).map(|s| s.value);
        // Train/iteration is written only when env steps are the step axis
        // (docs/contract/step.md "The step axis").
        let (iteration, env_steps) = match get("Train/iteration") {
            Some(i) => (i.max(0.0) as u64, step.max(0) as u64),
            None => (step.max(0) as u64, 0),
        };
        let t = self.clock.monotonic_at(wall);
        self.last_t = Some(t);
        state.push(
            Sample {
                t,
                iteration,
                values,
            },
            get("Train/mean_reward"),
            SystemInfo::default(),
            env_steps,
        );
    }

    /// Show a status line now.
    pub fn message(&self, state: &mut TerminalState, level: Level, text: String) {
        state.message(self.clock.monotonic(), level, text);
    }

    /// Mark the run ended with `status`, at its last event (else now): elapsed time and ETA
    /// freeze there.
    pub fn finish(&self, state: &mut TerminalState, status: &str) {
        if state.finished_at.is_some() {
            return;
        }
        let t = self.last_t.unwrap_or_else(|| self.clock.monotonic());
        state.message(t, Level::Info, format!("Run {status}"));
        state.finish(t);
    }
}
