//! `Logger`: one submission per iteration, fanned out to the backend and the terminal.
//!
//! A step is one pass (docs/contract/step.md): resolve the input into a validated record,
//! derive everything from it once ([`StepRecord`]), then hand the payload to the writer
//! thread and the sample to the terminal state.

use crate::error::{Error, Result};
use crate::health::live::stopping;
use crate::health::pace::PaceMeter;
use crate::health::stall_exit::LastSummary;
use crate::health::{Finding, LiveHealth};
use crate::input::{LoggerConfig, OnStorageError, StepInput};
use crate::record::StepRecord;
use crate::reduce::{reduce_ranks, Rates};
use crate::remote::RemoteSinks;
use crate::resolve::{Axis, Resolver};
use crate::resume::Carried;
use crate::room::Room;
use crate::run::{iso_utc, utc, write_run_summary_in, RUN_CONFIG_FILE};
use crate::runlock::RunLock;
use crate::sink::BackendStep;
use crate::summary::{contract_warning, SummaryState};
use crate::tag::Tag;
use crate::terminal::{Level, TerminalState, TerminalView};
use crate::trace::Tracer;
use crate::user::{UserMetricSpec, UserMetrics};
use crate::window::Sample;
use crate::writer::WriterThread;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tally_clock::Clock;
use tally_schema::artifacts::{RunConfig, RunStatus, RunSummary};

mod producer;
mod start;

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

    /// Submit one iteration (single rank).
    pub fn step(&mut self, input: &StepInput) -> Result<()> {
        self.step_with_rates(input, Rates::of(std::slice::from_ref(input)))
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

    /// Submit one iteration from every rank: reduced per the schema, then logged once.
    pub fn step_ranks(&mut self, ranks: &[StepInput]) -> Result<()> {
        let (reduced, rates) = reduce_ranks(ranks, &self.user)?;
        self.step_with_rates(&reduced, rates)?;
        // Each rank's facts before reduction, in buffers kept from step to step
        // (docs/contract/health.md "Ranks").
        let (bad, times) = &mut self.rank_facts;
        bad.clear();
        times.clear();
        bad.extend(ranks.iter().map(StepInput::nonfinite_values));
        times.extend(ranks.iter().map(|r| r.iteration_time.unwrap_or(f64::NAN)));
        self.judge_ranks(&self.rank_facts.0, &self.rank_facts.1);
        Ok(())
    }

    /// Judge the `ranks` rule on the last accepted step, from each rank's count of non-finite
    /// values and iteration time (NaN: not measured) before reduction: for a collective that
    /// reduced the ranks itself and then called [`Logger::step_with_rates`] (Python's
    /// `RankLogger`; docs/contract/health.md "Ranks"). A no-op before the first step or with
    /// the rule off.
    pub fn judge_ranks(&self, nonfinite: &[u32], iteration_time: &[f64]) {
        if let (Some(h), Some(step)) = (self.health.as_ref(), self.last_step) {
            h.ranks(step, nonfinite, iteration_time);
        }
    }

    /// The trace recorder: clone it into the threads that record spans. Disabled (every call
    /// a no-op) unless tracing is on.
    pub fn tracer(&self) -> &Tracer {
        &self.tracer
    }

    /// Submit an already rank-reduced iteration with its rank-summed rates (the collective path).
    pub fn step_with_rates(&mut self, input: &StepInput, rates: Rates) -> Result<()> {
        let entered = self.pace.is_some().then(Instant::now);
        self.step_timed(input, rates, entered)
    }

    /// [`Logger::step_with_rates`] for a binding whose call began at `entered`, before its
    /// own conversion of the input: that time is inside tally too (docs/contract/health.md
    /// "Overhead").
    pub fn step_with_rates_since(
        &mut self,
        input: &StepInput,
        rates: Rates,
        entered: Instant,
    ) -> Result<()> {
        self.step_timed(input, rates, Some(entered))
    }

    fn step_timed(
        &mut self,
        input: &StepInput,
        rates: Rates,
        entered: Option<Instant>,
    ) -> Result<()> {
        let mark = self.tracer.begin();
        let result = self.step_inner(input, rates, entered);
        if let Some(m) = mark {
            self.tracer.end(m, "logger/step", "logger");
        }
        if let (Some(p), Some(t)) = (self.pace.as_mut(), entered) {
            p.ended(t);
        }
        result
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

    /// The finding that will refuse the next step (a new finding whose rule is in `stop_on`),
    /// without taking it: a collective asks before its ranks exchange the step, so every rank
    /// stops at the same iteration (docs/contract/health.md "In the logger").
    pub fn stop_pending(&self) -> Option<Finding> {
        let h = self
            .health
            .as_ref()
            .filter(|h| h.len() > self.health_seen)?;
        let new = h.since(&mut self.health_seen.clone());
        stopping(&new, &self.config.stop_on).cloned()
    }

    /// New findings since the last step: announced to the panel once, and the first whose
    /// rule is in `stop_on` refuses this step (docs/contract/health.md "In the logger").
    fn health_news(&mut self) -> Result<()> {
        let Some(h) = self.health.as_ref().filter(|h| h.len() > self.health_seen) else {
            return Ok(());
        };
        let new = h.since(&mut self.health_seen);
        match stopping(&new, &self.config.stop_on) {
            Some(f) => Err(Error::HealthStop(Box::new(f.clone()))),
            None => Ok(()),
        }
    }

    fn step_inner(
        &mut self,
        input: &StepInput,
        rates: Rates,
        entered: Option<Instant>,
    ) -> Result<()> {
        if self.closed {
            return Err(Error::Closed);
        }
        self.health_news()?;
        let buf = std::mem::take(&mut self.spare_values);
        let resolved = self.resolver.resolve(input, self.axis, buf)?;
        self.axis = Axis::after(&resolved);
        self.last_step = Some(resolved.step);
        self.untouched = None;
        let persist = self
            .config
            .persists(resolved.iteration)
            .then(|| self.writer.spare_payload().unwrap_or_default());
        let persisted = persist.is_some();
        let record = StepRecord::derive(self.config.profile, resolved, rates, persist);
        let now = self.clock.monotonic();
        if let Some(scalars) = record.payload {
            if self.awaiting_first_step {
                self.awaiting_first_step = false;
                if let Some(seg) = self.summary.resumed.last_mut() {
                    seg.first_step = Some(record.step);
                }
            }
            let waited_before = self.writer.waits;
            let wall_time = self.clock.wall_at(now);
            let pace = self
                .pace
                .as_mut()
                .zip(entered)
                .and_then(|(p, t)| p.written(t));
            if let Some(h) = self.health.as_ref().filter(|h| !h.on_writer()) {
                // The values the event file gets, so `tally health` on the file finds the same;
                // here only with stop_on (else the writer thread feeds them).
                let all_finite = record.figures.odd.nonfinite == 0;
                h.step_paced(record.step, wall_time, &scalars, all_finite, pace);
                h.announce();
            }
            let step = BackendStep {
                iteration: record.iteration,
                step: record.step,
                wall_time,
                scalars,
            };
            self.writer.step(step, pace);
            // Shown once: a slow sink is the runner's to see, every wait is in the summary.
            if waited_before == 0 && self.writer.waits > 0 {
                let text = format!(
                    "writer behind the steps: iteration {} waited for the sinks (back-pressure, \
                     nothing dropped); waits are counted in run_summary.json backpressure_waits",
                    record.iteration
                );
                self.with_terminal(|t| t.message(now, Level::Warning, text));
            }
        }
        self.state.update(&record.figures);
        let nonfinite = (record.figures.odd.nonfinite > 0)
            .then(|| {
                self.state
                    .flag_nonfinite(record.iteration, &record.terminal)
            })
            .flatten();
        if record.user_metrics > 0 {
            for (tag, v) in &record.terminal {
                if let Tag::User(t) = tag {
                    self.user.observe(t, *v);
                }
            }
        }
        let warning = record
            .over_accounted
            .as_ref()
            .map(|t| contract_warning(record.iteration, t));
        {
            let mut term = self.terminal.lock().unwrap_or_else(|e| e.into_inner());
            term.push(
                Sample {
                    t: now,
                    iteration: record.iteration,
                    values: record.terminal,
                },
                record.figures.episode_return,
                record.system,
                record.env_steps,
            );
            if let Some(spare) = term.window.take_spare() {
                self.spare_values = spare;
            }
            if let Some(w) = nonfinite {
                term.message(now, Level::Warning, w);
            }
            if let Some(w) = warning {
                term.contract_warnings += 1;
                self.summary.contract_warnings += 1;
                term.message(now, Level::Warning, w);
            }
        }
        // After each persisted step while that stays cheap, so a killed run's summary trails
        // its event file by about one log interval (docs/contract/threads-and-signals.md
        // "The summary during a run").
        if persisted
            && now - self.last_summary_at >= self.config.summary_interval_secs
            && self.writer.summary_due()
        {
            self.last_summary_at = now;
            if self.user.take_changed() {
                self.run_config.user_metrics = self.user_metrics_documented();
                self.writer.config(self.run_config.clone());
            }
            let s = self.current_summary(RunStatus::Running, false);
            if let Some((_, last)) = &self.stall_exit {
                *last.lock().unwrap_or_else(|e| e.into_inner()) = (s.clone(), now);
            }
            self.writer.summary(s);
        }
        self.take_failure()
    }

    /// The user metrics `run_config.json` lists: an earlier segment's that this one has not
    /// logged, then this one's.
    fn user_metrics_documented(&self) -> Vec<tally_schema::artifacts::UserMetric> {
        let now = self.user.documented();
        let mut all: Vec<_> = self
            .carried
            .user_metric_specs
            .iter()
            .filter(|m| !now.iter().any(|n| n.tag == m.tag))
            .cloned()
            .collect();
        all.extend(now);
        all
    }

    /// Report the sink failures not reported yet (one atomic read when there is none): each is
    /// shown on the terminal; the first is raised, or with `on_storage_error="warn"` every one
    /// goes to stderr and nothing is raised.
    fn take_failure(&mut self) -> Result<()> {
        let count = self.writer.failure_count();
        if count <= self.reported_failures {
            return Ok(());
        }
        let new: Vec<_> = (self.reported_failures..count)
            .filter_map(|i| self.writer.failure(i))
            .collect();
        self.reported_failures = count;
        let t = self.clock.monotonic();
        let warn = self.config.on_storage_error == OnStorageError::Warn;
        for f in &new {
            if warn {
                eprintln!("tally: warning: {f}");
            }
            let level = if warn { Level::Warning } else { Level::Error };
            self.with_terminal(|s| s.message(t, level, f.to_string()));
        }
        match new.into_iter().next() {
            Some(f) if !warn => Err(Error::Sink {
                sink: f.sink,
                iteration: f.iteration,
                message: f.message,
            }),
            _ => Ok(()),
        }
    }

    fn current_summary(&self, status: RunStatus, closing: bool) -> RunSummary {
        let mut s = self.summary.clone();
        self.state.fill(&mut s, closing);
        s.status = status;
        let now = self.clock.monotonic();
        let c = &self.carried;
        s.wall_time_sec = c.wall_time_sec + (now - self.started_at);
        let first = self.with_terminal(|t| t.training_started_at);
        s.training_wall_time_sec = c.training_wall_time_sec + first.map_or(0.0, |f| now - f);
        s.backpressure_waits = c.backpressure_waits + self.writer.waits;
        s.backpressure_wait_sec = c.backpressure_wait_sec + self.writer.wait_secs;
        s.sink_errors = c.sink_errors.clone();
        s.sink_errors.extend(self.writer.failure_texts());
        self.writer.storage().fill(&mut s);
        // A resumed run's counts are the whole run's (docs/contract/run-artifacts.md "Resume").
        s.persisted_iterations = s.persisted_iterations.map(|p| p + c.persisted_iterations);
        s.lost_iterations += c.lost_iterations;
        s.user_metrics = c.user_metrics.clone();
        s.user_metrics.extend(self.user.summary_values());
        if let Some(h) = &self.health {
            // After an earlier segment's (a resumed run), this logger's own.
            s.health.extend(h.findings().iter().map(summary_entry));
        }
        if let Some(w) = &self.webhook {
            s.health_alerts = Some(w.progress());
        }
        if !self.remotes.is_empty() {
            // During the run; at close the followers' final word is already in `summary`.
            s.remote_sinks = self.remotes.progress();
        }
        if closing {
            s.end_time_utc = Some(iso_utc(&utc(self.clock.wall())));
        }
        s
    }

    /// Wait until every step so far is written and flushed to its sinks (steps kept after a
    /// storage fault are retried first; those the disk still refuses stay kept).
    ///
    /// The durability point: when it returns `Ok`, every accepted step is in the event file
    /// and fsynced; with `on_storage_error` `raise` it fails each time steps stay kept
    /// (docs/contract/run-artifacts.md "Storage faults").
    pub fn flush(&mut self) -> Result<()> {
        self.writer.flush();
        self.take_failure()?;
        let pending = self.writer.storage().pending;
        if pending == 0 || self.config.on_storage_error == OnStorageError::Warn {
            return Ok(());
        }
        let count = self.writer.failure_count();
        let cause = count
            .checked_sub(1)
            .and_then(|i| self.writer.failure(i))
            .map_or_else(String::new, |f| f.message);
        Err(Error::NotDurable { pending, cause })
    }

    /// Write the final `run_summary.json` and close every sink. Closing twice is harmless.
    ///
    /// The writer retries what storage faults kept before it stops; the final summary is
    /// written last, with the counts that leaves: a run that would end `completed` or
    /// `interrupted` but lost steps ends `degraded` (docs/contract/run-artifacts.md "Storage
    /// faults").
    pub fn close(&mut self, status: RunStatus) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        // A run being closed is not stalled.
        if let Some((x, _)) = self.stall_exit.as_mut() {
            x.stop();
        }
        // The video the script wrote beside its checkpoints is the run's, unless a call named
        // one (docs/contract/remote-sinks.md "The playback video").
        let video = self.run_dir.join(crate::run::PLAY_VIDEO_FILE);
        if self.summary.play_video_path.is_none() && video.is_file() {
            self.summary.play_video_path = Some(video.to_string_lossy().into_owned());
        }
        self.writer.finish();
        self.finish_remote();
        self.finish_webhook();
        let trace_error = self.tracer.finish().err();
        if status == RunStatus::Failed {
            if let Some(documents) = self.untouched.take() {
                return self.close_untouched(documents, trace_error);
            }
        }
        let mut config_error = None;
        if self.user.take_changed() {
            self.run_config.user_metrics = self.user_metrics_documented();
            let path = self.run_dir.join(RUN_CONFIG_FILE);
            // Redacted like every artefact (docs/contract/run-artifacts.md "Secrets").
            config_error = crate::run::write_redacted(&path, &self.run_config).err();
        }
        let storage = self.writer.storage();
        // Steps an earlier segment lost are still missing from the run's files.
        let lost_in_run = storage.lost + self.carried.lost_iterations;
        let status = match status {
            RunStatus::Completed | RunStatus::Interrupted
                if lost_in_run > 0 || storage.pending > 0 =>
            {
                RunStatus::Degraded
            }
            s => s,
        };
        let (status, manifest_error) = self.judge_completed(status);
        let summary = self.current_summary(status, true);
        let t = self.clock.monotonic();
        let mut text = format!("Run {}", status.as_str());
        if storage.lost > 0 {
            text += &format!(
                ": {} logged iterations are not in the event file",
                storage.lost
            );
        }
        self.with_terminal(|s| s.message(t, Level::Info, text));
        if let Some(e) = &manifest_error {
            let text = e.to_string();
            self.with_terminal(|s| s.message(t, Level::Error, text));
        }
        let written = write_run_summary_in(&self.run_dir, &summary, &self.room);
        self.room.release();
        let lost = (storage.lost > 0).then(|| self.writer.lost_steps());
        let storage = written.and(config_error.map_or(Ok(()), Err));
        self.end_close(storage, trace_error, manifest_error, lost)
    }

    /// The error `close` raises when steps were lost: how many, which iterations, why, and
    /// whether `run_summary.json` could record it (docs/contract/run-artifacts.md "Storage
    /// faults").
    fn lost_error(
        (sink, lost): (String, crate::lost::LostSteps),
        cause: Option<&str>,
        storage: &Result<()>,
    ) -> Error {
        let mut message = format!(
            "{} logged steps are lost, not in the event file ({})",
            lost.total(),
            lost.describe()
        );
        if let Some(why) = cause {
            message += &format!(": {why}");
        }
        match storage {
            Ok(()) => message += "; run_summary.json counts them in lost_iterations",
            Err(e) => message += &format!("; run_summary.json could not record them: {e}"),
        }
        Error::Sink {
            sink,
            iteration: lost.first().unwrap_or(0),
            message,
        }
    }

    /// The end of every close, once the run's documents are final: the run's lock freed (a
    /// resume, in this process too, may take it), the view stopped (its last frame shows the
    /// closed run, even when writing failed), then the first error, in order: storage (only
    /// said under `on_storage_error="warn"`), trace, a sink's failure, the manifest, the view.
    fn end_close(
        &mut self,
        storage: Result<()>,
        trace_error: Option<Error>,
        manifest_error: Option<Error>,
        lost: Option<(String, crate::lost::LostSteps)>,
    ) -> Result<()> {
        self.lock = None;
        let failure = self.take_failure();
        let shown = self.view.take().map_or(Ok(()), |mut v| v.stop());
        let warn = self.config.on_storage_error == OnStorageError::Warn;
        if let Some(lost) = lost.filter(|_| !warn) {
            // Said first, whatever else failed: what the run lost is what its user must hear.
            let cause = (0..self.writer.failure_count())
                .filter_map(|i| self.writer.failure(i))
                .find(|f| f.sink == lost.0)
                .map(|f| f.message.split(';').next().unwrap_or_default().to_owned());
            return Err(Self::lost_error(lost, cause.as_deref(), &storage));
        }
        match storage {
            Err(e) if self.config.on_storage_error == OnStorageError::Warn => {
                eprintln!("tally: warning: {e}");
            }
            other => other?,
        }
        if let Some(e) = trace_error {
            return Err(e);
        }
        failure?;
        if let Some(e) = manifest_error {
            return Err(e);
        }
        shown.map_err(Error::View)
    }

    /// Close a resumed run that failed before this logger accepted a step: its
    /// `run_config.json` and `run_summary.json` go back as the resume found them and the new
    /// event file (nothing but its header, and the purge marker of a rewind) is removed, so the
    /// run keeps its earlier status and files and resumes again as before
    /// (docs/contract/run-artifacts.md "Resume").
    fn close_untouched(
        &mut self,
        documents: crate::resume::PriorDocuments,
        trace_error: Option<Error>,
    ) -> Result<()> {
        let config = self.run_dir.join(RUN_CONFIG_FILE);
        let summary = self.run_dir.join(crate::run::RUN_SUMMARY_FILE);
        self.room.release();
        let mut put_back = crate::atomic::write_atomic(&config, documents.run_config.as_bytes())
            .and_then(|()| crate::atomic::write_atomic(&summary, documents.run_summary.as_bytes()));
        if let Some(file) = self.event_file.take() {
            if let Err(e) = std::fs::remove_file(&file) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    put_back = put_back.and(Err(Error::io("remove", file)(e)));
                }
            }
        }
        let t = self.clock.monotonic();
        self.with_terminal(|s| {
            s.message(
                t,
                Level::Info,
                "Resume failed before its first step: the run is left as it was".to_owned(),
            )
        });
        self.end_close(put_back, trace_error, None, None)
    }

    /// Whether `close` has run.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Let the webhook post the findings it has not, within its close bound; what it could
    /// not is counted undelivered and said in one line (docs/contract/health.md "Webhook").
    fn finish_webhook(&mut self) {
        let Some(w) = self.webhook.as_mut() else {
            return;
        };
        let p = w.finish();
        if p.undelivered > 0 {
            let text = format!(
                "health webhook: {} finding(s) not delivered to {}; counted in run_summary.json \
                 health_alerts",
                p.undelivered, p.destination
            );
            let t = self.clock.monotonic();
            self.with_terminal(|s| s.message(t, Level::Warning, text));
        }
    }

    /// Let the remote sinks send what the closed event file holds within
    /// `remote_finish_timeout`; what is left is recorded, and said in one line, for `tally sync`.
    fn finish_remote(&mut self) {
        if self.remotes.is_empty() {
            return;
        }
        let timeout = std::time::Duration::from_secs_f64(self.config.remote_finish_timeout_secs);
        let (progress, left) = self.remotes.finish(timeout, &self.run_dir);
        for text in left {
            eprintln!("tally: {text}");
            let t = self.clock.monotonic();
            self.with_terminal(|s| s.message(t, Level::Warning, text));
        }
        self.summary.remote_sinks = progress;
    }
}

/// A finding as `run_summary.json` lists it (docs/contract/run-artifacts.md "Run summary").
pub(crate) fn summary_entry(f: &Finding) -> tally_schema::artifacts::HealthFinding {
    let last_value = match serde_json::Number::from_f64(f.last_value) {
        Some(n) => serde_json::Value::Number(n),
        // Export's tokens for what JSON numbers cannot hold.
        None if f.last_value.is_nan() => "NaN".into(),
        None if f.last_value > 0.0 => "Infinity".into(),
        None => "-Infinity".into(),
    };
    tally_schema::artifacts::HealthFinding {
        rule: f.rule.as_str().to_owned(),
        tag: (!f.tag.is_empty()).then(|| f.tag.clone()),
        first_step: f.first_step,
        last_step: f.last_step,
        count: f.count,
        last_value,
        message: f.message.clone(),
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
