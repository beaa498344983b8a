//! `tally.Logger(...)`: the constructor's arguments checked (each error naming its argument)
//! into a `LoggerConfig`, the run started, its panel attached and the logger registered to be
//! closed at exit.

use super::closing;
use super::documents::{json_text, wandb_settings};
use super::health;
use super::replicas;
use super::state::{Core, Draft, PyLogger};
use crate::convert::{int_arg, signed_int_arg, IntArg};
use crate::errors::Failure;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tally::{Backend, LoggerConfig, OnStorageError, Profile, SystemClock};

fn path_object(py: Python<'_>, p: &Path) -> PyResult<Py<PyAny>> {
    Ok(py
        .import("pathlib")?
        .getattr("Path")?
        .call1((p.to_string_lossy().into_owned(),))?
        .unbind())
}

/// `Logger.__new__`'s body, its arguments as PyO3 passed them.
#[allow(clippy::too_many_arguments)]
pub(super) fn open(
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
) -> PyResult<PyLogger> {
    // Integers are checked here, not by PyO3, so each error names its argument.
    let max_iterations = int_arg(
        "max_iterations",
        max_iterations,
        1,
        tally::resolve::MAX_COUNT,
    )?;
    let num_envs = int_arg("num_envs", num_envs, 1, u64::MAX)?;
    let seed = int_arg("seed", seed, 0, u64::MAX)?;
    // Any int: the logger refuses one the run cannot rewind to, naming its last iteration.
    let resume_from = signed_int_arg("resume_from", resume_from)?;
    let num_gpus = num_gpus.get("num_gpus", 1, u32::MAX.into())? as u32;
    let log_interval = log_interval.get("log_interval", 1, u64::MAX)?;
    // Without `profile=`, the algorithm's when tally knows it (docs/contract/schema.md
    // "Profiles"); a guess would refuse the run's first collector key.
    let profile: Profile = match profile {
        Some(p) => p.parse().map_err(Failure::Config)?,
        None => tally::schema::Algo::parse(&algo).profile().ok_or_else(|| {
            Failure::Config(format!(
                "Logger(algo='{algo}'): tally does not know this algorithm's timing profile; \
                 pass profile= one of sac_family (SAC-like: learner inference, a per-tick \
                 collector), appo, onpolicy (collect, then learn) or rft"
            ))
        })?,
    };
    let on_storage_error: OnStorageError = on_storage_error.parse().map_err(Failure::Config)?;
    let backend: Backend = logger.parse().map_err(Failure::Config)?;
    let outside_keys: tally::OutsideKeys = outside_keys.parse().map_err(Failure::Config)?;
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
    lc.resume_from = resume_from;
    lc.num_gpus = num_gpus;
    lc.profile = profile;
    lc.outside_keys = outside_keys;
    lc.backend = backend;
    lc.log_root = log_root;
    lc.log_dir = log_dir;
    lc.log_interval = log_interval;
    lc.trace = trace;
    lc.trace_output_dir = trace_output_dir;
    lc.trace_thread_time = trace_thread_time;
    lc.trace_cuda_events = trace_cuda_events;
    lc.on_storage_error = on_storage_error;
    if let Some(t) = remote_finish_timeout {
        lc.remote_finish_timeout_secs = t;
    }
    // Checked before anything is created: a bad rule names itself and leaves no run.
    (lc.health, lc.stop_on) = health::rules(py, health, stop_on)?;
    if let Some(url) = health_webhook {
        // The error says what is wrong without the URL: it is a secret.
        let hook = tally::health::webhook::HealthWebhook::new(&url)
            .map_err(|e| Failure::Config(format!("Logger(health_webhook=...): {e}")))?;
        lc.health_webhook = Some(hook);
    }
    lc.stall_exit_after_secs = stall_exit_after;
    let on_health = on_health.filter(|c| !c.is_none());
    if let Some(c) = on_health.as_ref().filter(|c| !c.is_callable()) {
        return Err(Failure::Config(format!(
            "Logger(on_health=...): expected a callable taking a tally.health.Finding, not {}",
            c.repr()?
        ))
        .into());
    }
    if let Some(c) = config.filter(|c| !c.is_none()) {
        lc.run_config = json_text(py, c, "config")?;
    }
    if let Some(w) = wandb {
        lc.wandb = wandb_settings(py, w)?;
    }
    let (objs, boxed) = replicas::sinks(py, &mut lc, sinks, wandb, mlflow, trackio)?;
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
        video_noted: false,
        health_cursor: 0,
    }));
    closing::register(py, &core)?;
    Ok(PyLogger {
        core,
        draft: Mutex::new(Draft::default()),
        run_dir: path_object(py, &run_dir)?,
        event_file,
        panel: panel.to_owned(),
        tracer,
        on_health: on_health.map(Bound::unbind),
    })
}
