//! `Logger`: one submission per iteration, fanned out to the backend and the terminal.
//!
//! A step is one pass (docs/contract/step.md): resolve the input into a validated record,
//! derive everything from it once ([`StepRecord`]), then hand the payload to the writer
//! thread and the sample to the terminal state.

use crate::error::{Error, Result};
use crate::input::{Backend, LoggerConfig, OnStorageError, StepInput};
use crate::record::StepRecord;
use crate::reduce::{reduce_ranks, Rates};
use crate::remote::RemoteSinks;
use crate::resolve::{Axis, Resolver};
use crate::resume::Carried;
use crate::run::{
    initial_summary, iso_utc, run_identity, utc, write_run_config, write_run_summary,
    RUN_CONFIG_FILE,
};
use crate::rundir::{create_run_dir, RunDirSpec, Unstarted};
use crate::runlock::RunLock;
use crate::sink::{BackendStep, Sink, TensorBoardSink};
use crate::summary::{contract_warning, SummaryState};
use crate::tag::Tag;
use crate::terminal::{Level, RunFacts, TerminalState, TerminalView};
use crate::trace::Tracer;
use crate::user::{UserMetricSpec, UserMetrics};
use crate::window::Sample;
use crate::writer::WriterThread;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tally_clock::{Clock, SystemClock};
use tally_schema::artifacts::{LoggerFacts, RunConfig, RunStatus, RunSummary};
use tally_tfevents::WriterOptions;

mod producer;

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
    /// The remote sinks (W&B), each following the event file on its own thread.
    remotes: RemoteSinks,
    /// An emptied buffer the next step's values are collected in (an evicted window sample's),
    /// so a steady-state step allocates nothing (docs/contract/step.md "The hot path").
    spare_values: Vec<(Tag, f64)>,
    /// The run's lock, released at close (None where the filesystem has no locks).
    lock: Option<RunLock>,
}

impl Logger {
    /// Create the run directory, `run_config.json`, the first `run_summary.json`, and the
    /// backend named by the config (TensorBoard by default).
    pub fn new(config: LoggerConfig) -> Result<Self> {
        Self::with_sinks(config, Vec::new(), Arc::new(SystemClock::default()))
    }

    /// As [`Logger::new`], with additional sinks (the Python W&B sink, a test's memory sink)
    /// and the run's clock (every time the logger, its writer, trace and panel read).
    pub fn with_sinks(
        config: LoggerConfig,
        mut extra: Vec<Box<dyn Sink>>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self> {
        config.check()?;
        if config.backend == Backend::None {
            if let Some(s) = extra.iter().find(|s| s.is_remote()) {
                return Err(Error::Config(format!(
                    "the {} sink is fed from the run's event file, and logger=none writes none: \
                     use logger=tensorboard (or wandb)",
                    s.name()
                )));
            }
        }
        if config.backend == Backend::Wandb && !extra.iter().any(|s| s.name() == "wandb") {
            return Err(Error::Config(
                "logger=wandb needs the W&B SDK: use the Python package (tally.Logger(logger=\"wandb\")), \
                 or logger=tensorboard from Rust"
                    .into(),
            ));
        }
        let spec = RunDirSpec {
            algo: config.algo.clone(),
            task: config.task.clone(),
            sim_backend: config.sim_backend.clone(),
            log_root: config.log_root.clone(),
            log_dir: config.log_dir.clone(),
        };
        let start = utc(clock.wall());
        let prior_dir = match config.resume {
            true => crate::resume::find(&config, &spec)?,
            false => None,
        };
        // Taken before the run is read: a live logger's run is refused as in use.
        let prior_lock = prior_dir.as_deref().map(RunLock::acquire).transpose()?;
        let prior = prior_dir
            .map(|dir| crate::resume::load(&dir, &config))
            .transpose()?;
        let existed = spec.log_dir.as_ref().is_some_and(|d| d.exists());
        let run_dir = match &prior {
            Some(p) => p.dir.clone(),
            None => create_run_dir(&spec, &start.with_timezone(&chrono::Local))?,
        };
        // Until the logger exists, a failure takes back what this start wrote.
        let mut unstarted = Unstarted {
            dir: prior.is_none().then(|| run_dir.clone()),
            existed,
        };
        let lock = match prior_lock {
            Some(lock) => lock,
            None => RunLock::acquire(&run_dir)?,
        };
        let mut identity = match &prior {
            Some(p) => p.identity(config.wandb.clone()),
            None => run_identity(
                &config.algo,
                &config.task,
                &config.sim_backend,
                &run_dir,
                &start,
                config.wandb.clone(),
            ),
        };
        if config.name.is_some() {
            identity.name = config.name.clone();
        }
        if config.seed.is_some() {
            identity.seed = config.seed;
        }
        identity.logger = Some(LoggerFacts {
            profile: config.profile,
            backend: config.backend.as_str().to_owned(),
            max_iterations: config.max_iterations,
            num_envs: config.num_envs,
            num_gpus: config.num_gpus,
            log_interval: config.log_interval,
            trace_enabled: config.trace,
        });
        let (mut summary, carried, axis) = match &prior {
            Some(p) => p.continued_summary(&iso_utc(&start)),
            None => (
                initial_summary(&identity),
                Carried::default(),
                Axis::default(),
            ),
        };
        let earlier_metrics = prior
            .as_ref()
            .map(|p| p.config.user_metrics.clone())
            .unwrap_or_default();
        let tracer = match config.trace {
            true => {
                let dir = config.trace_output_dir.as_deref().unwrap_or(&run_dir);
                let path = dir.join(trace_file_name(summary.resumed.len()));
                let name = format!("tally {} {}", config.algo, config.task);
                let options = crate::trace::TraceOptions {
                    thread_time: config.trace_thread_time,
                    cuda_events: config.trace_cuda_events,
                };
                let t = Tracer::start(&path, &name, clock.clone(), options)?;
                // Recorded now, so a run that dies still points at its trace.
                summary.trace_path = Some(path.display().to_string());
                t
            }
            false => Tracer::disabled(),
        };
        let run_config = write_run_config(&run_dir, identity, &config.run_config, earlier_metrics)?;
        write_run_summary(&run_dir, &summary)?;
        // Extra sinks (W&B) open now: they need the run directory and run_config.json.
        for i in 0..extra.len() {
            let started = extra[i].start(&run_dir);
            if let Err(e) = started {
                // Sinks started before this one hold resources (a W&B run): close them.
                for earlier in &mut extra[..i] {
                    let _ = earlier.close();
                }
                let sink = &extra[i];
                let failure = Error::Sink {
                    sink: sink.name().to_owned(),
                    iteration: 0,
                    message: e.to_string(),
                };
                // A complete record of a failed start, kept.
                unstarted.dir = None;
                summary.status = RunStatus::Failed;
                summary.sink_errors.push(failure.to_string());
                write_run_summary(&run_dir, &summary)?;
                return Err(failure);
            }
            if summary.wandb_run_url.is_none() {
                summary.wandb_run_url = extra[i].run_url();
            }
        }
        if summary.wandb_run_url.is_some() {
            write_run_summary(&run_dir, &summary)?;
        }

        let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
        let mut event_file = None;
        // The event file is the run's truth: W&B follows it (docs/contract/remote-sinks.md).
        if matches!(config.backend, Backend::TensorBoard | Backend::Wandb) {
            let mut options = WriterOptions::from_env();
            options.fsync = config.fsync;
            let wall = clock.wall().max(0.0);
            options.created_at = match &prior {
                Some(p) => {
                    let secs = p.event_file_secs(wall as u64);
                    std::time::UNIX_EPOCH
                        + std::time::Duration::from_secs_f64(wall.max(secs as f64))
                }
                None => std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(wall),
            };
            let tb = TensorBoardSink::create(&run_dir, options)?;
            event_file = Some(tb.path().to_owned());
            sinks.push(Box::new(tb));
        }
        let (remote, mut local): (Vec<_>, Vec<_>) = extra.into_iter().partition(|s| s.is_remote());
        sinks.append(&mut local);
        // A periodic summary is as durable as the event file it describes: fsynced only when the
        // event file is (docs/contract/threads-and-signals.md "The summary during a run").
        let sync_summary = config.fsync != tally_tfevents::FsyncPolicy::Never;
        let mut writer = WriterThread::spawn(
            sinks,
            run_dir.clone(),
            config.queue_capacity,
            clock.clone(),
            sync_summary,
        )
        .map_err(Error::io("start writer thread", &run_dir))?;
        // Held to put back if the run directory is removed mid-run.
        writer.hold_config(run_config.clone());
        let facts = RunFacts {
            algo: config.algo.clone(),
            task: config.task.clone(),
            sim: run_config.run.sim_backend.clone(),
            name: run_config.run.name.clone(),
            num_gpus: config.num_gpus,
            num_envs: config.num_envs,
            max_iterations: config.max_iterations,
            profile: config.profile,
        };
        let started_at = clock.monotonic();
        let state = match &prior {
            Some(p) => SummaryState::resumed_from(&p.summary),
            None => SummaryState::default(),
        };
        let mut term = TerminalState::new(facts);
        // Shown until the runner passes its own MPS state (docs/contract/panel.md "System column").
        let (mps, mps_warning) = crate::host::run_mps(&config.run_config);
        term.system.cuda_mps = Some(mps);
        if let Some(text) = mps_warning {
            term.message(started_at, Level::Warning, text);
        }
        let terminal = Arc::new(Mutex::new(term));
        let remotes = {
            let (terminal, clock) = (terminal.clone(), clock.clone());
            // Outages and recoveries show on the panel.
            RemoteSinks::start(remote, &run_dir, move |text| {
                let t = clock.monotonic();
                let mut s = terminal.lock().unwrap_or_else(|e| e.into_inner());
                s.message(t, Level::Warning, text);
            })?
        };
        unstarted.dir = None;
        Ok(Logger {
            resolver: Resolver::new(config.profile, config.max_iterations),
            config,
            run_dir,
            event_file,
            axis,
            clock,
            started_at,
            terminal,
            state,
            summary,
            last_summary_at: started_at,
            writer,
            reported_failures: 0,
            closed: false,
            tracer,
            view: None,
            awaiting_first_step: prior.is_some(),
            run_config,
            user: UserMetrics::default(),
            carried,
            remotes,
            spare_values: Vec::new(),
            lock,
        })
    }

    /// The run directory.
    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// The event file, when the TensorBoard backend is on.
    pub fn event_file(&self) -> Option<&Path> {
        self.event_file.as_deref()
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
        self.step_with_rates(&reduced, rates)
    }

    /// The trace recorder: clone it into the threads that record spans. Disabled (every call
    /// a no-op) unless tracing is on.
    pub fn tracer(&self) -> &Tracer {
        &self.tracer
    }

    /// Submit an already rank-reduced iteration with its rank-summed rates (the collective path).
    pub fn step_with_rates(&mut self, input: &StepInput, rates: Rates) -> Result<()> {
        let mark = self.tracer.begin();
        let result = self.step_inner(input, rates);
        if let Some(m) = mark {
            self.tracer.end(m, "logger/step", "logger");
        }
        result
    }

    fn step_inner(&mut self, input: &StepInput, rates: Rates) -> Result<()> {
        if self.closed {
            return Err(Error::Closed);
        }
        let buf = std::mem::take(&mut self.spare_values);
        let resolved = self.resolver.resolve(input, self.axis, buf)?;
        self.axis = Axis::after(&resolved);
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
            self.writer.step(BackendStep {
                iteration: record.iteration,
                step: record.step,
                wall_time: self.clock.wall_at(now),
                scalars,
            });
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
        s.user_metrics = c.user_metrics.clone();
        s.user_metrics.extend(self.user.summary_values());
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
    pub fn flush(&mut self) -> Result<()> {
        self.writer.flush();
        self.take_failure()
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
        // The video the script wrote beside its checkpoints is the run's, unless a call named
        // one (docs/contract/remote-sinks.md "The playback video").
        let video = self.run_dir.join(crate::run::PLAY_VIDEO_FILE);
        if self.summary.play_video_path.is_none() && video.is_file() {
            self.summary.play_video_path = Some(video.to_string_lossy().into_owned());
        }
        self.writer.finish();
        self.finish_remote();
        let trace_error = self.tracer.finish().err();
        let mut config_error = None;
        if self.user.take_changed() {
            self.run_config.user_metrics = self.user_metrics_documented();
            let path = self.run_dir.join(RUN_CONFIG_FILE);
            // Redacted like every artefact (docs/contract/run-artifacts.md "Secrets").
            config_error = crate::run::write_redacted(&path, &self.run_config).err();
        }
        let storage = self.writer.storage();
        let status = match status {
            RunStatus::Completed | RunStatus::Interrupted
                if storage.lost > 0 || storage.pending > 0 =>
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
        let written = write_run_summary(&self.run_dir, &summary);
        // The run is free for a resume (in this process too) once its summary is final.
        self.lock = None;
        let failure = self.take_failure();
        // The view's last frame shows the closed run; it stops even when the summary failed.
        let shown = self.view.take().map_or(Ok(()), |mut v| v.stop());
        let storage_error = written.and(config_error.map_or(Ok(()), Err));
        match storage_error {
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

    /// Whether `close` has run.
    pub fn is_closed(&self) -> bool {
        self.closed
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

/// The trace file of the run's `segment`-th resume (0: the first logger): a resumed run keeps
/// the earlier segments' traces.
fn trace_file_name(segment: usize) -> String {
    match segment {
        0 => crate::trace::TRACE_FILE.to_owned(),
        n => {
            let stem = crate::trace::TRACE_FILE.trim_end_matches(".json");
            format!("{stem}.resume{n}.json")
        }
    }
}
