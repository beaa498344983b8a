//! `tally.Logger`: the Rust logger as a Python class, its method table here, each method a
//! thin wrapper where the work is a concept of its own. Beside it: `state.rs` (what a logger
//! holds), `guard.rs` (how a call waits and what it refuses), `open.rs` (the constructor's
//! arguments into a started run), `replicas.rs` (the sinks and the replicas' settings),
//! `step.rs` (a step's conversion and submission), `video.rs` (`log_video`), `closing.rs`
//! (closing a logger: by `close`, at exit, on a signal), `documents.rs` (Python documents into
//! JSON), `phase.rs` (the `log.phase(...)` timer), `health.rs` (rules and findings).
//!
//! The Python object owns the `tally::Logger` behind an `Arc<Mutex<..>>`, shared with the exit
//! hook (`closing.rs`). Every call that can wait on the writer thread releases the GIL.
//!
//! Any thread may call any method at any time (docs/contract/threads-and-signals.md
//! "Sharing a logger between threads"): the class is frozen (no PyO3 borrow flag to trip),
//! its two mutexes are taken with the GIL released while waiting, no Python code runs while
//! the logger's mutex is held, and calls from tally's own threads (a sink's `write()`) are
//! refused before they could wait on themselves.

use crate::convert::{IntArg, StepArgs};
use crate::errors::{Failure, Result};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyType};
use std::borrow::Cow;
use std::path::PathBuf;
use tally::{Level, RunStatus};

mod closing;
mod documents;
mod guard;
mod health;
mod in_bucket;
mod open;
mod phase;
mod replicas;
mod state;
mod step;
mod video;

pub use closing::_close_open_loggers;
use closing::{close_core, parse_status};
use documents::{json_text, refuse_nonfinite};
use guard::{lock, refuse_tally_thread};
pub use phase::Phase;
pub use state::PyLogger;

/// The level of a Python status line: Python runners mark errors with rich-style `[red]`
/// markup or the word `ERROR`; the Rust logger takes the level explicitly.
fn status_level(text: &str) -> Level {
    if text.contains("ERROR") || text.contains("[red]") {
        Level::Error
    } else {
        Level::Info
    }
}

impl PyLogger {
    fn with_log<T>(
        &self,
        py: Python<'_>,
        method: &str,
        f: impl FnOnce(&mut tally::Logger) -> T,
    ) -> Result<T> {
        refuse_tally_thread(method)?;
        let mut guard = lock(py, &self.core);
        let log = guard
            .log
            .as_mut()
            .filter(|l| !l.is_closed())
            .ok_or(Failure::Tally(tally::Error::Closed))?;
        Ok(f(log))
    }
}

impl Drop for PyLogger {
    fn drop(&mut self) {
        Python::attach(|py| {
            let open = lock(py, &self.core)
                .log
                .as_ref()
                .is_some_and(|l| !l.is_closed());
            if open {
                if let Err(e) = close_core(py, &self.core, None, None) {
                    e.write_unraisable(py, None);
                }
            }
        });
    }
}

#[pymethods]
impl PyLogger {
    /// Create the run directory, `run_config.json`, the first `run_summary.json` and the backend.
    /// `sim`, `max_iterations` and `num_envs` are optional (progress and ETA need
    /// `max_iterations`); `name` titles the run; `seed` is recorded; `resume=True` appends to
    /// the run in `log_dir` (else the latest of this algo and task) or starts one;
    /// `resume_from=ITERATION` (with `resume=True`) rewinds it to a checkpoint's iteration.
    /// `mlflow={...}` and `trackio={...}` add those replicas, fed from the event file as W&B is;
    /// `logger="mlflow"` or `"trackio"` adds that one with its default settings when none are given.
    /// `system_metrics=False` stops the process, machine and GPU samples written every
    /// `system_interval` seconds under `system/...` (docs/contract/system-metrics.md).
    #[new]
    #[pyo3(signature = (
        *, algo, task, sim = None, max_iterations = None, num_envs = None,
        num_gpus = IntArg::Default(1), profile = None, logger = "tensorboard",
        log_root = PathBuf::from("logs"), log_dir = None, log_interval = IntArg::Default(1),
        panel = "auto", trace = false, trace_output_dir = None, trace_thread_time = false,
        trace_cuda_events = false, config = None, wandb = None, sinks = None, name = None,
        seed = None, resume = false, resume_from = None, on_storage_error = "raise",
        remote_finish_timeout = None, health = None, stop_on = None, on_health = None,
        mlflow = None, trackio = None,
        health_webhook = None, stall_exit_after = None, outside_keys = "refuse",
        system_metrics = true, system_interval = 5.0
    ))]
    // The integer defaults are spelled out here: PyO3 shows only literal defaults.
    #[pyo3(
        text_signature = "(*, algo, task, sim=None, max_iterations=None, num_envs=None, \
        num_gpus=1, profile=None, logger=\"tensorboard\", log_root=..., log_dir=None, \
        log_interval=1, panel=\"auto\", trace=False, trace_output_dir=None, \
        trace_thread_time=False, trace_cuda_events=False, config=None, wandb=None, sinks=None, \
        name=None, seed=None, resume=False, resume_from=None, on_storage_error=\"raise\", \
        remote_finish_timeout=None, health=None, stop_on=None, on_health=None, mlflow=None, \
        trackio=None, health_webhook=None, stall_exit_after=None, outside_keys=\"refuse\", \
        system_metrics=True, system_interval=5.0)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        algo: String,
        task: String,
        sim: Option<String>,
        max_iterations: Option<&Bound<'_, PyAny>>,
        num_envs: Option<&Bound<'_, PyAny>>,
        num_gpus: IntArg<'_>,
        profile: Option<&str>,
        logger: &str,
        log_root: PathBuf,
        log_dir: Option<PathBuf>,
        log_interval: IntArg<'_>,
        panel: &str,
        trace: bool,
        trace_output_dir: Option<PathBuf>,
        trace_thread_time: bool,
        trace_cuda_events: bool,
        config: Option<&Bound<'_, PyAny>>,
        wandb: Option<&Bound<'_, PyDict>>,
        sinks: Option<Vec<Bound<'_, PyAny>>>,
        name: Option<String>,
        seed: Option<&Bound<'_, PyAny>>,
        resume: bool,
        resume_from: Option<&Bound<'_, PyAny>>,
        on_storage_error: &str,
        remote_finish_timeout: Option<f64>,
        health: Option<&Bound<'_, PyAny>>,
        stop_on: Option<Vec<String>>,
        on_health: Option<Bound<'_, PyAny>>,
        mlflow: Option<&Bound<'_, PyDict>>,
        trackio: Option<&Bound<'_, PyDict>>,
        health_webhook: Option<String>,
        stall_exit_after: Option<f64>,
        outside_keys: &str,
        system_metrics: bool,
        system_interval: f64,
    ) -> PyResult<Self> {
        open::open(
            py,
            open::NewArgs {
                algo,
                task,
                sim,
                max_iterations,
                num_envs,
                num_gpus,
                profile,
                logger,
                log_root,
                log_dir,
                log_interval,
                panel,
                trace,
                trace_output_dir,
                trace_thread_time,
                trace_cuda_events,
                config,
                wandb,
                sinks,
                name,
                seed,
                resume,
                resume_from,
                on_storage_error,
                remote_finish_timeout,
                health,
                stop_on,
                on_health,
                mlflow,
                trackio,
                health_webhook,
                stall_exit_after,
                outside_keys,
                system_metrics,
                system_interval,
            },
        )
    }

    /// The run's health: `log.health.findings` (docs/contract/health.md "In the logger").
    #[getter]
    fn health<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        py.import("tally.health")?.getattr("Health")?.call1((slf,))
    }

    /// Every finding so far, as `tally.health.Finding` keyword dicts (also after close).
    fn _health_findings<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        refuse_tally_thread("health")?;
        let findings = lock(py, &self.core)
            .log
            .as_ref()
            .map(|l| l.health_findings())
            .unwrap_or_default();
        findings
            .iter()
            .map(|f| health::finding_dict(py, f))
            .collect()
    }

    /// Whether the next step will be refused by a finding in `stop_on` (`tally.distributed`
    /// asks before the ranks exchange it, so they all stop together).
    fn _stop_pending(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.with_log(py, "_stop_pending", |l| l.stop_pending().is_some())?)
    }

    /// Submit one iteration. Durations are seconds; values are numbers (or `__float__`).
    #[pyo3(signature = (
        iteration, *, env_steps = None, metrics = None, learner = None, iteration_time = None,
        collector = None, collector_inference = None, rewards = None, episode_return = None,
        episode_length = None, timeout_rate = None, steps_this_iter = None,
        replay_rows_this_iter = None, system = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn step(
        &self,
        py: Python<'_>,
        iteration: &Bound<'_, PyAny>,
        env_steps: Option<&Bound<'_, PyAny>>,
        metrics: Option<&Bound<'_, PyAny>>,
        learner: Option<&Bound<'_, PyAny>>,
        iteration_time: Option<&Bound<'_, PyAny>>,
        collector: Option<&Bound<'_, PyAny>>,
        collector_inference: Option<&Bound<'_, PyAny>>,
        rewards: Option<&Bound<'_, PyAny>>,
        episode_return: Option<&Bound<'_, PyAny>>,
        episode_length: Option<&Bound<'_, PyAny>>,
        timeout_rate: Option<&Bound<'_, PyAny>>,
        steps_this_iter: Option<&Bound<'_, PyAny>>,
        replay_rows_this_iter: Option<&Bound<'_, PyAny>>,
        system: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let args = StepArgs {
            env_steps,
            metrics,
            learner,
            iteration_time,
            collector,
            collector_inference,
            rewards,
            episode_return,
            episode_length,
            timeout_rate,
            steps_this_iter,
            replay_rows_this_iter,
            system,
        };
        self.submit(py, iteration, args, None)
    }

    /// Submit an already rank-reduced iteration with the rank-summed rates (`tally.distributed`).
    #[pyo3(signature = (
        iteration, *, env_steps_per_sec = None, rows_per_sec = None, env_steps = None,
        metrics = None, learner = None, iteration_time = None, collector = None,
        collector_inference = None, rewards = None, episode_return = None, episode_length = None,
        timeout_rate = None, steps_this_iter = None, replay_rows_this_iter = None, system = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn step_with_rates(
        &self,
        py: Python<'_>,
        iteration: &Bound<'_, PyAny>,
        env_steps_per_sec: Option<f64>,
        rows_per_sec: Option<f64>,
        env_steps: Option<&Bound<'_, PyAny>>,
        metrics: Option<&Bound<'_, PyAny>>,
        learner: Option<&Bound<'_, PyAny>>,
        iteration_time: Option<&Bound<'_, PyAny>>,
        collector: Option<&Bound<'_, PyAny>>,
        collector_inference: Option<&Bound<'_, PyAny>>,
        rewards: Option<&Bound<'_, PyAny>>,
        episode_return: Option<&Bound<'_, PyAny>>,
        episode_length: Option<&Bound<'_, PyAny>>,
        timeout_rate: Option<&Bound<'_, PyAny>>,
        steps_this_iter: Option<&Bound<'_, PyAny>>,
        replay_rows_this_iter: Option<&Bound<'_, PyAny>>,
        system: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let rates = step::rates(env_steps_per_sec, rows_per_sec)?;
        let args = StepArgs {
            env_steps,
            metrics,
            learner,
            iteration_time,
            collector,
            collector_inference,
            rewards,
            episode_return,
            episode_length,
            timeout_rate,
            steps_this_iter,
            replay_rows_this_iter,
            system,
        };
        self.submit(py, iteration, args, Some(rates))
    }

    /// The seconds between system samples, None with `system_metrics=False`: the interval
    /// `tally.distributed`'s other ranks sample at (docs/contract/system-metrics.md "Ranks").
    #[getter]
    fn system_interval(&self, py: Python<'_>) -> PyResult<Option<f64>> {
        Ok(self.with_log(py, "system_interval", |l| l.system_interval())?)
    }

    /// Write the other ranks' system samples from the collective's summed blocks (world size
    /// × `RANK_SYSTEM_SLOTS` floats; `tally.distributed`, docs/contract/system-metrics.md
    /// "Ranks").
    fn _rank_system(&self, py: Python<'_>, blocks: Vec<f64>) -> PyResult<()> {
        Ok(self.with_log(py, "_rank_system", |l| l.rank_system(&blocks))?)
    }

    /// The `ranks` rule on the last step, from each rank's count of non-finite values and
    /// iteration time (None: not measured) before the ranks were reduced: for a collective
    /// that reduces them itself (`tally.distributed`; docs/contract/health.md "Ranks").
    fn judge_ranks(
        &self,
        py: Python<'_>,
        nonfinite: Vec<u32>,
        iteration_time: Vec<Option<f64>>,
    ) -> PyResult<()> {
        if nonfinite.len() != iteration_time.len() {
            return Err(Failure::Schema(format!(
                "judge_ranks: {} non-finite counts but {} iteration times (one of each per rank)",
                nonfinite.len(),
                iteration_time.len()
            ))
            .into());
        }
        let times: Vec<f64> = iteration_time
            .iter()
            .map(|t| t.unwrap_or(f64::NAN))
            .collect();
        self.with_log(py, "judge_ranks", |l| l.judge_ranks(&nonfinite, &times))?;
        Ok(())
    }

    /// `with log.span(name, cat="user"):` — a span on the calling thread in the trace.
    #[pyo3(signature = (name, cat = "user"))]
    fn span(&self, name: String, cat: &str) -> crate::trace::Span {
        crate::trace::Span::new(self.tracer.clone(), name, cat.to_owned())
    }

    /// A counter sample in the trace (replay size, queue depth, ...).
    fn counter(&self, name: &str, value: f64) -> PyResult<()> {
        crate::trace::counter(&self.tracer, name, value)
    }

    /// A span timed elsewhere (CUDA events): `start` a `time.perf_counter()` reading,
    /// `duration` seconds, on its own `track` of the trace.
    #[pyo3(signature = (name, cat, start, duration, track = "gpu"))]
    fn add_span(
        &self,
        py: Python<'_>,
        name: &str,
        cat: &str,
        start: f64,
        duration: f64,
        track: &str,
    ) -> PyResult<()> {
        crate::trace::add_span(py, &self.tracer, name, cat, start, duration, track)
    }

    /// Whether the runner asked to time GPU work with CUDA events (`trace_cuda_events`).
    #[getter]
    fn trace_cuda_events(&self) -> bool {
        self.tracer.cuda_events()
    }

    /// A timer: `with log.phase("learning"): ...` adds the elapsed seconds to that learner
    /// phase of the next `step()` (repeated uses accumulate).
    /// The name is checked now, against the run's profile: a bad one would refuse every later
    /// step (docs/contract/step.md "Input bounds").
    fn phase(slf: &Bound<'_, Self>, name: &Bound<'_, PyString>) -> PyResult<Phase> {
        let text = name.to_cow()?;
        let profile = slf
            .borrow()
            .with_log(slf.py(), "phase", |l| l.config().profile)?;
        let key = tally::resolve::learner_phase(profile, &text)
            .map_err(|e| Failure::Schema(format!("phase({text:?}): {e}")))?;
        Ok(Phase {
            logger: slf.clone().unbind(),
            name: Cow::Borrowed(key),
            started: None,
        })
    }

    /// Define (or refine) the user metrics matching `tag` (one tag, or a glob like
    /// `"charts/*"`): unit, cross-rank reduction, label, and the run summary's statistic.
    #[pyo3(signature = (tag, *, unit = "1", reduction = "mean", label = None, summary = "last"))]
    fn define_metric(
        &self,
        py: Python<'_>,
        tag: &str,
        unit: &str,
        reduction: &str,
        label: Option<String>,
        summary: &str,
    ) -> PyResult<()> {
        let bad =
            |what: &str, e: String| Failure::Config(format!("define_metric('{tag}'): {what}: {e}"));
        let spec = tally::UserMetricSpec {
            unit: unit.to_owned(),
            reduction: reduction.parse().map_err(|e| bad("reduction", e))?,
            label,
            summary: summary.parse().map_err(|e| bad("summary", e))?,
        };
        self.with_log(py, "define_metric", |l| l.define_metric(tag, spec))?
            .map_err(Failure::from)?;
        Ok(())
    }

    /// Show a status line in the panel (warm-up, buffer fill, checkpoint saved).
    fn status(&self, py: Python<'_>, text: &str) -> PyResult<()> {
        Ok(self.with_log(py, "status", |l| l.status(status_level(text), text))?)
    }

    /// Record the last checkpoint path for `run_summary.json` and show it.
    fn checkpoint_saved(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        Ok(self.with_log(py, "checkpoint_saved", |l| {
            l.checkpoint_saved(path.to_string_lossy().into_owned())
        })?)
    }

    /// Record the runtime manifest (a dict of the v1 manifest) for `run_summary.json`, checked
    /// as runtime manifest v1: a failing one is refused with every violation's `$` path.
    fn set_runtime_manifest(&self, py: Python<'_>, manifest: &Bound<'_, PyAny>) -> PyResult<()> {
        refuse_nonfinite(manifest, "runtime manifest")?;
        let v = json_text(py, manifest, "runtime manifest")?;
        self.with_log(py, "set_runtime_manifest", |l| {
            l.set_runtime_manifest_json(v)
        })?
        .map_err(Failure::from)?;
        Ok(())
    }

    /// Record `backend_diagnostics` at the top level of `run_summary.json` (on-policy runs),
    /// checked for their shape: a failing one is refused with every violation's `$` path.
    fn set_backend_diagnostics(
        &self,
        py: Python<'_>,
        diagnostics: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        refuse_nonfinite(diagnostics, "backend_diagnostics")?;
        let v = json_text(py, diagnostics, "backend_diagnostics")?;
        self.with_log(py, "set_backend_diagnostics", |l| {
            l.set_backend_diagnostics(v)
        })?
        .map_err(Failure::from)?;
        Ok(())
    }

    /// Upload `path` (the playback video) as `key` to each sink that takes videos (W&B) when
    /// the file exists, and record it as `play_video_path` in `run_summary.json`. Returns
    /// whether the file existed. Without such a sink it only records the path, and says so
    /// once per run with a `UserWarning`.
    #[pyo3(signature = (path, key = "media/play_video"))]
    fn log_video(&self, py: Python<'_>, path: PathBuf, key: &str) -> PyResult<bool> {
        video::log_video(self, py, path, key)
    }

    /// Wait until every step so far is written and flushed by every sink.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        refuse_tally_thread("flush")?;
        let mut guard = lock(py, &self.core);
        let bucket = guard.bucket.clone();
        let on_error = guard.on_storage_error;
        let log = guard
            .log
            .as_mut()
            .filter(|l| !l.is_closed())
            .ok_or(Failure::Tally(tally::Error::Closed))?;
        let flushed = py
            .detach(|| {
                log.flush()?;
                // A run in a bucket: flush means in the bucket (docs/contract/object-storage.md
                // "Writing").
                bucket.map_or(Ok(()), |b| in_bucket::flushed(&b, on_error))
            })
            .map_err(Failure::from);
        drop(guard);
        self.tell_health(py)?;
        flushed?;
        Ok(())
    }

    /// Write the final `run_summary.json`, close every sink, and finish an owned W&B run.
    /// Closing twice is harmless.
    #[pyo3(signature = (status = "completed"))]
    fn close(&self, py: Python<'_>, status: &str) -> PyResult<()> {
        refuse_tally_thread("close")?;
        let st = parse_status(status)?;
        let closed = close_core(py, &self.core, Some(st), None);
        self.tell_health(py)?;
        closed
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// Close with `failed` when the block raised (`interrupted` for KeyboardInterrupt).
    #[pyo3(signature = (exc_type = None, exc = None, tb = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyType>>,
        exc: Option<&Bound<'_, PyAny>>,
        tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let _ = tb;
        let status = match exc_type {
            None => RunStatus::Completed,
            Some(t) if t.is_subclass_of::<PyKeyboardInterrupt>()? => RunStatus::Interrupted,
            Some(_) => RunStatus::Failed,
        };
        let reason = match (status, exc_type, exc) {
            (RunStatus::Failed, Some(t), Some(e)) => Some(
                py.import("tally._excepthook")?
                    .call_method1("reason", (t, e))?
                    .extract::<String>()?,
            ),
            _ => None,
        };
        refuse_tally_thread("__exit__")?;
        close_core(py, &self.core, Some(status), reason)?;
        Ok(false)
    }

    /// The run directory (`pathlib.Path`).
    #[getter]
    fn run_dir(&self, py: Python<'_>) -> Py<PyAny> {
        self.run_dir.clone_ref(py)
    }

    /// The TensorBoard event file (`pathlib.Path`), or None without the TensorBoard backend.
    #[getter]
    fn event_file(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.event_file.as_ref().map(|p| p.clone_ref(py))
    }

    /// The step of the run's last logged iteration (env steps on an env-step axis, else the
    /// iteration): after a resume the run's own (or its rewind point's) until a step is
    /// logged, then the latest; None for a new run before its first step.
    #[getter]
    fn last_step(&self, py: Python<'_>) -> PyResult<Option<i64>> {
        refuse_tally_thread("last_step")?;
        Ok(lock(py, &self.core)
            .log
            .as_ref()
            .and_then(|l| l.last_step()))
    }

    /// The run's last logged iteration, as `last_step`: the training loop goes on at the next.
    #[getter]
    fn last_iteration(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        refuse_tally_thread("last_iteration")?;
        Ok(lock(py, &self.core)
            .log
            .as_ref()
            .and_then(|l| l.last_iteration()))
    }

    /// Whether `close()` has run.
    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        refuse_tally_thread("closed")?;
        Ok(lock(py, &self.core)
            .log
            .as_ref()
            .is_none_or(|l| l.is_closed()))
    }

    /// The panel mode this logger was built with (`auto`, `on` or `off`).
    #[getter]
    fn panel(&self) -> &str {
        &self.panel
    }

    /// The Python sinks attached to this logger (the W&B sink with `logger="wandb"`).
    #[getter]
    fn sinks(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        refuse_tally_thread("sinks")?;
        Ok(lock(py, &self.core)
            .py_sinks
            .iter()
            .map(|s| s.clone_ref(py))
            .collect())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let run_dir = self.run_dir.bind(py).to_string();
        // From a sink the state is not waited for: a repr never fails.
        let closed = match refuse_tally_thread("__repr__") {
            Ok(()) => match lock(py, &self.core).log.as_ref() {
                Some(l) if !l.is_closed() => "False",
                _ => "True",
            },
            Err(_) => "unknown",
        };
        format!("tally.Logger(run_dir='{run_dir}', closed={closed})")
    }
}
