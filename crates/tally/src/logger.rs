//! `Logger`: one submission per iteration, fanned out to the backend and the terminal.
//!
//! A step is one pass (docs/contract/step.md): resolve the input into a validated record,
//! derive everything from it once ([`StepRecord`](crate::record::StepRecord)), then hand the
//! payload to the writer thread and the sample to the terminal state.

use crate::error::{Error, Result};
use crate::health::pace::PaceMeter;
use crate::health::stall_exit::LastSummary;
use crate::health::{Finding, LiveHealth};
use crate::input::LoggerConfig;
use crate::remote::RemoteSinks;
use crate::resolve::{Axis, Resolver};
use crate::resume::Carried;
use crate::room::Room;
use crate::runlock::RunLock;
use crate::summary::SummaryState;
use crate::tag::Tag;
use crate::terminal::{Level, TerminalState, TerminalView};
use crate::trace::Tracer;
use crate::user::{UserMetricSpec, UserMetrics};
use crate::writer::WriterThread;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tally_clock::Clock;
use tally_schema::artifacts::{RunConfig, RunStatus, RunSummary};

mod close;
mod failures;
mod producer;
mod sampler;
mod start;
mod step;
mod summary;

/// The training logger. Build one per run on rank 0; call [`Logger::step`] once per iteration.
pub struct Logger {
    config: LoggerConfig,
    run_dir: PathBuf,
    event_file: Option<PathBuf>,
    resolver: Resolver,
    axis: Axis,
    clock: Arc<dyn Clock>,
    started_at: f64,
    terminal: Arc<Mutex<TerminalState>>,
    state: SummaryState,
    summary: RunSummary,
    last_summary_at: f64,
    writer: WriterThread,
    /// Whether the first back-pressure wait was shown on the terminal (it is, once).
    waits_shown: bool,
    reported_failures: usize,
    closed: bool,
    /// The trace recorder (disabled unless tracing).
    tracer: Tracer,
    /// The live view of the terminal state, stopped right after close.
    view: Option<Box<dyn TerminalView>>,
    /// `run_config.json` as written; rewritten when the user metrics it lists change.
    run_config: RunConfig,
    /// The run's user metrics.
    user: UserMetrics,
    /// What earlier segments of a resumed run add to this one's figures (zero for a new run).
    carried: Carried,
    /// A resumed run's first persisted step is still to be recorded in `run_summary.json`.
    awaiting_first_step: bool,
    /// The step of the last accepted iteration, or of the run on disk (a resumed run's last
    /// step, or its rewind point) until one is accepted.
    last_step: Option<i64>,
    /// A resumed run's documents as the resume found them, while this logger has accepted no
    /// step: a close `failed` puts them back and removes the new event file, so a failed
    /// resume leaves the run as it was (docs/contract/run-artifacts.md "Resume").
    untouched: Option<crate::resume::PriorDocuments>,
    /// The remote sinks (W&B), each following the event file on its own thread.
    remotes: RemoteSinks,
    /// An emptied buffer the next step's values are collected in (an evicted window sample's),
    /// so a steady-state step allocates nothing (docs/contract/step.md "The hot path").
    spare_values: Vec<(Tag, f64)>,
    /// The run's lock, released at close (None where the filesystem has no locks).
    lock: Option<RunLock>,
    /// The health rules evaluated on each persisted step; `None` when no rule is on
    /// (docs/contract/health.md "In the logger").
    health: Option<Arc<LiveHealth>>,
    /// Findings already announced (panel) and judged against `stop_on`.
    health_seen: usize,
    /// Each rank's non-finite count and iteration time, for the `ranks` rule (kept, so a step
    /// of as many ranks as before allocates nothing).
    rank_facts: (Vec<u32>, Vec<f64>),
    /// With the `overhead` rule: the time inside `step()` and between calls
    /// (docs/contract/health.md "Overhead").
    pace: Option<PaceMeter>,
    /// The health webhook's thread, posting each new finding (docs/contract/health.md
    /// "Webhook").
    webhook: Option<crate::health::webhook::WebhookThread>,
    /// With `stall_exit_after`: the thread that ends a stalled run, and the summary it would
    /// finish (docs/contract/health.md "Ending a stalled run").
    stall_exit: Option<(crate::health::stall_exit::StallExit, LastSummary)>,
    /// Room kept on disk for the final summary, given back at close
    /// (docs/contract/run-artifacts.md "Storage faults").
    room: Room,
    /// The system metrics' sampler, stopped first at close (docs/contract/system-metrics.md).
    system: Option<crate::system::Sampler>,
    /// With system metrics on: where the other ranks' samples go (`Logger::rank_system`).
    rank_feed: Option<crate::writer::SystemFeed>,
}

impl Logger {
    /// The run directory.
    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// The event file, when the TensorBoard backend is on.
    pub fn event_file(&self) -> Option<&Path> {
        self.event_file.as_deref()
    }

    /// The step of the run's last logged iteration: the last one this logger accepted, else
    /// what the run holds on disk (a resumed run's last step, or the step of the iteration it
    /// was rewound to); `None` for a new run before its first step.
    pub fn last_step(&self) -> Option<i64> {
        self.last_step
    }

    /// The run's last logged iteration, as [`Logger::last_step`]: a training loop goes on at
    /// the next one.
    pub fn last_iteration(&self) -> Option<u64> {
        self.axis.last_iteration
    }

    /// The configuration the logger was built from.
    pub fn config(&self) -> &LoggerConfig {
        &self.config
    }

    /// The shared terminal state the panel renders from.
    pub fn terminal(&self) -> Arc<Mutex<TerminalState>> {
        self.terminal.clone()
    }

    /// Hand the logger the view that renders its terminal state (the panel): the logger stops it
    /// once the run is closed, whichever way the run ends.
    pub fn attach_view(&mut self, view: Box<dyn TerminalView>) {
        self.view = Some(view);
    }

    fn with_terminal<T>(&self, f: impl FnOnce(&mut TerminalState) -> T) -> T {
        f(&mut self.terminal.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The run's clock (the panel reads "now" from it).
    pub fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }

    /// Show a status line (warm-up, buffer fill, checkpoint saved) without waiting for a step.
    pub fn status(&self, level: Level, text: impl Into<String>) {
        let t = self.clock.monotonic();
        let text = text.into();
        self.with_terminal(|s| s.message(t, level, text));
    }

    /// Record the uploaded playback video for `run_summary.json` (`play_video_path`).
    pub fn set_play_video_path(&mut self, path: impl Into<String>) {
        self.summary.play_video_path = Some(path.into());
    }

    /// Record the last checkpoint path for the summary and show it.
    pub fn checkpoint_saved(&mut self, path: impl Into<String>) {
        let path = path.into();
        self.status(Level::Info, format!("Checkpoint saved: {path}"));
        self.summary.last_checkpoint = Some(path);
    }

    /// Define (or refine) the user metrics matching `pattern` (one tag, or a glob such as
    /// `charts/*`): unit, cross-rank reduction, label, and the run summary's statistic
    /// (docs/contract/schema.md "User metrics"). Canonical groups cannot be redefined.
    pub fn define_metric(&mut self, pattern: &str, spec: UserMetricSpec) -> Result<()> {
        if self.closed {
            return Err(Error::Closed);
        }
        self.user.define(pattern, spec)
    }

    /// The run's user metrics (definitions, tags logged, summary values).
    pub fn user_metrics(&self) -> &UserMetrics {
        &self.user
    }

    /// The trace recorder: clone it into the threads that record spans. Disabled (every call
    /// a no-op) unless tracing is on.
    pub fn tracer(&self) -> &Tracer {
        &self.tracer
    }

    /// The run's health: its findings and rules, shared with the writer thread (a webhook's
    /// thread may follow it with a cursor of its own, [`LiveHealth::since`]).
    pub fn health(&self) -> Option<&Arc<LiveHealth>> {
        self.health.as_ref()
    }

    /// Every health finding so far.
    pub fn health_findings(&self) -> Vec<Finding> {
        self.health.as_ref().map_or_else(Vec::new, |h| h.findings())
    }

    /// Whether `close` has run.
    pub fn is_closed(&self) -> bool {
        self.closed
    }
}

impl Drop for Logger {
    fn drop(&mut self) {
        if !self.closed {
            let status = if std::thread::panicking() {
                RunStatus::Failed
            } else if self
                .config
                .max_iterations
                .is_none_or(|m| self.state.completed_iterations >= m)
            {
                RunStatus::Completed
            } else {
                RunStatus::Interrupted
            };
            let _ = self.close(status);
        }
    }
}
