//! `tally.Logger`: the Rust logger as a Python class, plus the `log.phase(...)` timer.
//!
//! Longer than 600 lines on purpose: one PyO3 class whose every method spells out its Python
//! signature and conversions (binding boilerplate, one block per Python entry point).
//!
//! The Python object owns the `tally::Logger` behind an `Arc<Mutex<..>>` so an `atexit` hook
//! can close loggers a script forgot (before interpreter teardown, when releasing the GIL is
//! still safe). Every call that can wait on the writer thread releases the GIL.

use crate::convert::{KeyCache, StepArgs};
use crate::errors::{Failure, Result};
use crate::sink::{wandb_sink, PySink};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyType};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;
use tally::schema::artifacts::{RuntimeManifest, WandbSettings};
use tally::{
    Backend, Key, Level, LoggerConfig, OnStorageError, Profile, Rates, RunStatus, Sink, StepInput,
    SystemClock,
};

/// The shared part: the Rust logger (which owns its panel) and the Python sinks to finish
/// after it closes.
struct Core {
    log: Option<tally::Logger>,
    py_sinks: Vec<Py<PyAny>>,
    run_dir: PathBuf,
    /// `sys.stdout`/`sys.stderr` redirected above the live panel, undone at close.
    console: Option<Py<PyAny>>,
}

/// Loggers not yet dropped, for the `atexit` hook.
static OPEN: Mutex<Vec<Weak<Mutex<Core>>>> = Mutex::new(Vec::new());

fn lock(core: &Mutex<Core>) -> MutexGuard<'_, Core> {
    core.lock().unwrap_or_else(|e| e.into_inner())
}

/// The W&B settings a `wandb=` dict may carry.
const WANDB_KEYS: [&str; 8] = [
    "project", "entity", "group", "name", "tags", "notes", "mode", "job_type",
];

/// The level of a Python status line: Python runners mark errors with rich-style `[red]`
/// markup or the word `ERROR`; the Rust logger takes the level explicitly.
fn status_level(text: &str) -> Level {
    if text.contains("ERROR") || text.contains("[red]") {
        Level::Error
    } else {
        Level::Info
    }
}

/// Parse a run status name (`completed`, `failed`, `interrupted`, `collector_died`).
pub fn parse_status(s: &str) -> Result<RunStatus> {
    [
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Interrupted,
        RunStatus::CollectorDied,
    ]
    .into_iter()
    .find(|st| st.as_str() == s)
    .ok_or_else(|| {
        Failure::Config(format!(
            "unknown run status '{s}': expected completed, failed, interrupted or collector_died"
        ))
    })
}

fn json_text(py: Python<'_>, v: &Bound<'_, PyAny>, what: &str) -> Result<serde_json::Value> {
    let text: String = py
        .import("json")
        .and_then(|j| {
            let kw = PyDict::new(py);
            kw.set_item("default", py.get_type::<PyString>())?;
            j.call_method("dumps", (v,), Some(&kw))?.extract()
        })
        .map_err(|e| Failure::Config(format!("{what} is not JSON-serialisable: {e}")))?;
    serde_json::from_str(&text).map_err(|e| Failure::Config(format!("{what}: {e}")))
}

fn wandb_settings(py: Python<'_>, d: &Bound<'_, PyDict>) -> Result<WandbSettings> {
    for k in d.keys() {
        let k: String = k.extract().unwrap_or_default();
        if !WANDB_KEYS.contains(&k.as_str()) {
            return Err(Failure::Config(format!(
                "wandb['{k}']: unknown W&B setting (known: {})",
                WANDB_KEYS.join(", ")
            )));
        }
    }
    let v = json_text(py, d.as_any(), "wandb")?;
    serde_json::from_value(v).map_err(|e| Failure::Config(format!("wandb settings: {e}")))
}

fn path_object(py: Python<'_>, p: &Path) -> PyResult<Py<PyAny>> {
    Ok(py
        .import("pathlib")?
        .getattr("Path")?
        .call1((p.to_string_lossy().into_owned(),))?
        .unbind())
}

/// Call `method(args)` on each Python sink that has it (caller thread, GIL held).
fn each_sink<'py>(
    py: Python<'py>,
    sinks: &[Py<PyAny>],
    method: &str,
    args: impl Fn() -> PyResult<Bound<'py, pyo3::types::PyTuple>>,
) -> PyResult<()> {
    let mut first_err = None;
    for s in sinks {
        let s = s.bind(py);
        if s.hasattr(method)? {
            if let Err(e) = s.call_method1(method, args()?) {
                first_err.get_or_insert(e);
            }
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// Close `log` (GIL released: the writer thread may need it for a Python sink), then
/// `finish` the Python sinks on this thread.
fn close_core(py: Python<'_>, core: &Mutex<Core>, status: Option<RunStatus>) -> PyResult<()> {
    // Python runs outside the lock: partial lines reach the panel before its last frame.
    let console = lock(core).console.take();
    crate::console::flush(py, console.as_ref());
    let mut guard = lock(core);
    let c: &mut Core = &mut guard;
    if c.log.as_ref().is_none_or(|l| l.is_closed()) {
        drop(guard);
        crate::console::restore(py, console);
        return Ok(());
    }
    let closed = match (status, c.log.as_mut()) {
        (Some(st), Some(log)) => py.detach(|| log.close(st)),
        _ => {
            // Implicit close: let tally's Drop choose completed / interrupted.
            let log = c.log.take();
            py.detach(move || drop(log));
            Ok(())
        }
    };
    let run_dir = guard.run_dir.to_string_lossy().into_owned();
    let sinks: Vec<Py<PyAny>> = guard.py_sinks.iter().map(|s| s.clone_ref(py)).collect();
    drop(guard);
    // The panel has stopped: the original streams come back.
    crate::console::restore(py, console);
    let finished = each_sink(py, &sinks, "finish", || {
        pyo3::types::PyTuple::new(py, [run_dir.clone()])
    });
    closed.map_err(Failure::from)?;
    finished.map_err(|e| {
        PyErr::from(Failure::Tally(tally::Error::Sink {
            sink: "python".into(),
            iteration: 0,
            message: format!("finish after close: {e}"),
        }))
    })
}

/// Close every logger still open (registered with `atexit` at import).
#[pyfunction]
pub fn _close_open_loggers(py: Python<'_>) {
    let open: Vec<Arc<Mutex<Core>>> = {
        let mut list = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        let live = list.iter().filter_map(Weak::upgrade).collect();
        list.clear();
        live
    };
    for core in open {
        if let Err(e) = close_core(py, &core, None) {
            e.write_unraisable(py, None);
        }
    }
}

/// The training logger: one per run, on rank 0; `step()` once per iteration.
#[pyclass(module = "tally._tally", name = "Logger", subclass)]
pub struct PyLogger {
    core: Arc<Mutex<Core>>,
    scratch: StepInput,
    keys: KeyCache,
    pending: Vec<(Key, f64)>,
    run_dir: Py<PyAny>,
    event_file: Option<Py<PyAny>>,
    panel: String,
    /// The trace recorder, disabled unless `trace=True` (docs/contract/trace.md).
    tracer: tally::Tracer,
}

impl PyLogger {
    fn submit(
        &mut self,
        py: Python<'_>,
        iteration: &Bound<'_, PyAny>,
        args: StepArgs<'_, '_>,
        rates: Option<Rates>,
    ) -> PyResult<()> {
        let it = iteration.extract::<u64>().map_err(|e| {
            Failure::ValueType(format!(
                "iteration: expected a non-negative int, got {} ({e})",
                iteration
                    .repr()
                    .map(|r| r.to_string())
                    .unwrap_or_else(|_| "?".into())
            ))
        })?;
        args.fill(&mut self.keys, it, &mut self.scratch)?;
        for (k, secs) in &self.pending {
            match self.scratch.learner.iter_mut().find(|(p, _)| p == k) {
                Some(e) => e.1 += secs,
                None => self.scratch.learner.push((k.clone(), *secs)),
            }
        }
        let rates = rates.unwrap_or_else(|| Rates::of(std::slice::from_ref(&self.scratch)));
        let mut guard = lock(&self.core);
        let log = guard
            .log
            .as_mut()
            .ok_or(Failure::Tally(tally::Error::Closed))?;
        let input = &self.scratch;
        py.detach(|| log.step_with_rates(input, rates))
            .map_err(Failure::from)?;
        self.pending.clear();
        Ok(())
    }

    fn with_log<T>(&self, f: impl FnOnce(&mut tally::Logger) -> T) -> Result<T> {
        let mut guard = lock(&self.core);
        let log = guard
            .log
            .as_mut()
            .ok_or(Failure::Tally(tally::Error::Closed))?;
        Ok(f(log))
    }
}

impl Drop for PyLogger {
    fn drop(&mut self) {
        let open = lock(&self.core)
            .log
            .as_ref()
            .is_some_and(|l| !l.is_closed());
        if open {
            Python::attach(|py| {
                if let Err(e) = close_core(py, &self.core, None) {
                    e.write_unraisable(py, None);
                }
            });
        }
    }
}

#[pymethods]
impl PyLogger {
    /// Create the run directory, `run_config.json`, the first `run_summary.json` and the backend.
    /// `sim`, `max_iterations` and `num_envs` are optional (progress and ETA need
    /// `max_iterations`); `name` titles the run; `seed` is recorded; `resume=True` appends to
    /// the run in `log_dir` (else the latest of this algo and task) or starts one.
    #[new]
    #[pyo3(signature = (
        *, algo, task, sim = None, max_iterations = None, num_envs = None, num_gpus = 1,
        profile = "sac_family", logger = "tensorboard", log_root = PathBuf::from("logs"),
        log_dir = None, log_interval = 1, panel = "auto", trace = false, trace_output_dir = None,
        trace_thread_time = false, trace_cuda_events = false, config = None,
        wandb = None, sinks = None, name = None, seed = None, resume = false,
        on_storage_error = "raise"
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        algo: String,
        task: String,
        sim: Option<String>,
        max_iterations: Option<u64>,
        num_envs: Option<u64>,
        num_gpus: u32,
        profile: &str,
        logger: &str,
        log_root: PathBuf,
        log_dir: Option<PathBuf>,
        log_interval: u64,
        panel: &str,
        trace: bool,
        trace_output_dir: Option<PathBuf>,
        trace_thread_time: bool,
        trace_cuda_events: bool,
        config: Option<&Bound<'_, PyAny>>,
        wandb: Option<&Bound<'_, PyDict>>,
        sinks: Option<Vec<Bound<'_, PyAny>>>,
        name: Option<String>,
        seed: Option<u64>,
        resume: bool,
        on_storage_error: &str,
    ) -> PyResult<Self> {
        let profile: Profile = profile.parse().map_err(Failure::Config)?;
        let on_storage_error: OnStorageError = on_storage_error.parse().map_err(Failure::Config)?;
        let backend: Backend = logger.parse().map_err(Failure::Config)?;
        let panel_mode: tally_tui::Mode = panel
            .parse()
            .map_err(|e| Failure::Config(format!("panel='{panel}': {e}")))?;
        if sim.as_deref() == Some("") {
            return Err(Failure::Config(
                "sim='' is not a simulator name: leave sim unset when there is none".into(),
            )
            .into());
        }
        let mut lc = LoggerConfig::new(algo, task, sim.unwrap_or_default());
        lc.max_iterations = max_iterations;
        lc.num_envs = num_envs;
        lc.name = name;
        lc.seed = seed;
        lc.resume = resume;
        lc.num_gpus = num_gpus;
        lc.profile = profile;
        lc.backend = backend;
        lc.log_root = log_root;
        lc.log_dir = log_dir;
        lc.log_interval = log_interval;
        lc.trace = trace;
        lc.trace_output_dir = trace_output_dir;
        lc.trace_thread_time = trace_thread_time;
        lc.trace_cuda_events = trace_cuda_events;
        lc.on_storage_error = on_storage_error;
        if let Some(c) = config.filter(|c| !c.is_none()) {
            lc.run_config = json_text(py, c, "config")?;
        }
        if let Some(w) = wandb {
            lc.wandb = wandb_settings(py, w)?;
        }
        let mut objs: Vec<Bound<'_, PyAny>> = sinks.unwrap_or_default();
        let mut has_wandb = false;
        for o in &objs {
            if let Ok(n) = o.getattr("name") {
                has_wandb |= n.extract::<String>().is_ok_and(|n| n == "wandb");
            }
        }
        if backend == Backend::Wandb && !has_wandb {
            objs.push(wandb_sink(py, wandb.map(|w| w.as_any()))?);
        }
        let mut boxed: Vec<Box<dyn Sink>> = Vec::with_capacity(objs.len());
        for o in &objs {
            boxed.push(Box::new(PySink::new(o)?));
        }
        let mut log = tally::Logger::with_sinks(lc, boxed, Arc::new(SystemClock::default()))
            .map_err(Failure::from)?;
        let run_dir = log.run_dir().to_owned();
        let tracer = log.tracer().clone();
        // The panel renders the logger's terminal state on its own 2 Hz thread; the logger
        // stops it when it closes.
        let options = tally_tui::PanelOptions {
            mode: panel_mode,
            ..Default::default()
        };
        let console = crate::console::attach(py, &mut log, options)?;
        let event_file = match log.event_file() {
            Some(p) => Some(path_object(py, p)?),
            None => None,
        };
        let core = Arc::new(Mutex::new(Core {
            log: Some(log),
            py_sinks: objs.into_iter().map(Bound::unbind).collect(),
            run_dir: run_dir.clone(),
            console,
        }));
        {
            let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
            open.retain(|w| w.strong_count() > 0);
            open.push(Arc::downgrade(&core));
        }
        // atexit runs handlers last-registered first: move ours behind any the W&B SDK just
        // registered in `wandb.init`, so forgotten loggers close while the run is still open.
        let atexit = py.import("atexit")?;
        let hook = py.import("tally._tally")?.getattr("_close_open_loggers")?;
        atexit.call_method1("unregister", (&hook,))?;
        atexit.call_method1("register", (&hook,))?;
        Ok(PyLogger {
            core,
            scratch: StepInput::default(),
            keys: KeyCache::default(),
            pending: Vec::new(),
            run_dir: path_object(py, &run_dir)?,
            event_file,
            panel: panel.to_owned(),
            tracer,
        })
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
        &mut self,
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
        &mut self,
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
        for (name, v) in [
            ("env_steps_per_sec", env_steps_per_sec),
            ("rows_per_sec", rows_per_sec),
        ] {
            if let Some(v) = v.filter(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(
                    Failure::Schema(format!("{name} {v} must be a finite number >= 0")).into(),
                );
            }
        }
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
        let rates = Rates {
            env_steps_per_sec,
            rows_per_sec,
        };
        self.submit(py, iteration, args, Some(rates))
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
    fn phase(slf: &Bound<'_, Self>, name: &Bound<'_, PyString>) -> PyResult<Phase> {
        let text = name.to_cow()?;
        let key: Key = match tally::schema::METRICS.iter().find_map(|m| match m.input {
            tally::schema::Input::Learner(k) if k == text => Some(k),
            _ => None,
        }) {
            Some(k) => Cow::Borrowed(k),
            None => Cow::Owned(text.into_owned()),
        };
        Ok(Phase {
            logger: slf.clone().unbind(),
            name: key,
            started: None,
        })
    }

    /// Define (or refine) the user metrics matching `tag` (one tag, or a glob like
    /// `"charts/*"`): unit, cross-rank reduction, label, and the run summary's statistic.
    #[pyo3(signature = (tag, *, unit = "1", reduction = "mean", label = None, summary = "last"))]
    fn define_metric(
        &self,
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
        self.with_log(|l| l.define_metric(tag, spec))?
            .map_err(Failure::from)?;
        Ok(())
    }

    /// Show a status line in the panel (warm-up, buffer fill, checkpoint saved).
    fn status(&self, text: &str) -> PyResult<()> {
        Ok(self.with_log(|l| l.status(status_level(text), text))?)
    }

    /// Record the last checkpoint path for `run_summary.json` and show it.
    fn checkpoint_saved(&self, path: PathBuf) -> PyResult<()> {
        Ok(self.with_log(|l| l.checkpoint_saved(path.to_string_lossy().into_owned()))?)
    }

    /// Record the runtime manifest (a dict of the v1 manifest) for `run_summary.json`.
    fn set_runtime_manifest(&self, py: Python<'_>, manifest: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = json_text(py, manifest, "runtime manifest")?;
        let m: RuntimeManifest = serde_json::from_value(v)
            .map_err(|e| Failure::Schema(format!("runtime manifest: {e}")))?;
        self.with_log(|l| l.set_runtime_manifest(m))?
            .map_err(Failure::from)?;
        Ok(())
    }

    /// Upload `path` (the playback video) to W&B as `key` when the file exists; records
    /// `play_video_path` in `run_summary.json`. Returns whether the file existed.
    #[pyo3(signature = (path, key = "media/play_video"))]
    fn log_video(&self, py: Python<'_>, path: PathBuf, key: &str) -> PyResult<bool> {
        if !path.is_file() {
            return Ok(false);
        }
        let text = path.to_string_lossy().into_owned();
        let mut guard = lock(&self.core);
        let log = guard
            .log
            .as_mut()
            .ok_or(Failure::Tally(tally::Error::Closed))?;
        log.set_play_video_path(text.clone());
        // Steps already submitted reach W&B before the video (its step counter is shared).
        py.detach(|| log.flush()).map_err(Failure::from)?;
        let sinks: Vec<Py<PyAny>> = guard.py_sinks.iter().map(|s| s.clone_ref(py)).collect();
        drop(guard);
        each_sink(py, &sinks, "log_video", || {
            pyo3::types::PyTuple::new(py, [text.clone(), key.to_owned()])
        })?;
        Ok(true)
    }

    /// Wait until every step so far is written and flushed by every sink.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let mut guard = lock(&self.core);
        let log = guard
            .log
            .as_mut()
            .ok_or(Failure::Tally(tally::Error::Closed))?;
        py.detach(|| log.flush()).map_err(Failure::from)?;
        Ok(())
    }

    /// Write the final `run_summary.json`, close every sink, and finish an owned W&B run.
    /// Closing twice is harmless.
    #[pyo3(signature = (status = "completed"))]
    fn close(&self, py: Python<'_>, status: &str) -> PyResult<()> {
        let st = parse_status(status)?;
        close_core(py, &self.core, Some(st))
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
        let _ = (exc, tb);
        let status = match exc_type {
            None => RunStatus::Completed,
            Some(t) if t.is_subclass_of::<PyKeyboardInterrupt>()? => RunStatus::Interrupted,
            Some(_) => RunStatus::Failed,
        };
        close_core(py, &self.core, Some(status))?;
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

    /// Whether `close()` has run.
    #[getter]
    fn closed(&self) -> bool {
        lock(&self.core).log.as_ref().is_none_or(|l| l.is_closed())
    }

    /// The panel mode this logger was built with (`auto`, `on` or `off`).
    #[getter]
    fn panel(&self) -> &str {
        &self.panel
    }

    /// The Python sinks attached to this logger (the W&B sink with `logger="wandb"`).
    #[getter]
    fn sinks(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        lock(&self.core)
            .py_sinks
            .iter()
            .map(|s| s.clone_ref(py))
            .collect()
    }

    fn __repr__(&self) -> String {
        let core = lock(&self.core);
        let closed = core.log.as_ref().is_none_or(|l| l.is_closed());
        format!(
            "tally.Logger(run_dir='{}', closed={})",
            core.run_dir.display(),
            if closed { "True" } else { "False" }
        )
    }
}

/// `with log.phase(name):` — times the block into the next step's learner phase `name`.
#[pyclass(module = "tally._tally", name = "Phase")]
pub struct Phase {
    logger: Py<PyLogger>,
    name: Key,
    started: Option<Instant>,
}

#[pymethods]
impl Phase {
    fn __enter__(mut slf: PyRefMut<'_, Self>) -> PyRefMut<'_, Self> {
        slf.started = Some(Instant::now());
        slf
    }

    #[pyo3(signature = (exc_type = None, exc = None, tb = None))]
    fn __exit__(
        &mut self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        exc: Option<&Bound<'_, PyAny>>,
        tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let _ = (exc_type, exc, tb);
        let Some(t0) = self.started.take() else {
            return Ok(false);
        };
        let secs = t0.elapsed().as_secs_f64();
        let mut log = self.logger.bind(py).try_borrow_mut()?;
        if log.tracer.is_enabled() {
            // The block ended now on the tracer's clock and lasted `secs`.
            let end = log.tracer.now();
            crate::trace::name_thread(py, &log.tracer)?;
            log.tracer.complete(&self.name, "learner", end - secs, end);
        }
        match log.pending.iter_mut().find(|(k, _)| *k == self.name) {
            Some(e) => e.1 += secs,
            None => log.pending.push((self.name.clone(), secs)),
        }
        Ok(false)
    }

    /// The learner phase this timer feeds.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }
}
