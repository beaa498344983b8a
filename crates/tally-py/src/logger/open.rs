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

/// `Logger.__new__`'s arguments as PyO3 passed them, by name, so the wrapper cannot swap two of
/// one type.
pub(super) struct NewArgs<'a> {
    pub algo: String,
    pub task: String,
    pub sim: Option<String>,
    pub max_iterations: Option<&'a Bound<'a, PyAny>>,
    pub num_envs: Option<&'a Bound<'a, PyAny>>,
    pub num_gpus: IntArg<'a>,
    pub profile: Option<&'a str>,
    pub logger: &'a str,
    pub log_root: PathBuf,
    pub log_dir: Option<PathBuf>,
    pub log_interval: IntArg<'a>,
    pub panel: &'a str,
    pub trace: bool,
    pub trace_output_dir: Option<PathBuf>,
    pub trace_thread_time: bool,
    pub trace_cuda_events: bool,
    pub config: Option<&'a Bound<'a, PyAny>>,
    pub wandb: Option<&'a Bound<'a, PyDict>>,
    pub sinks: Option<Vec<Bound<'a, PyAny>>>,
    pub name: Option<String>,
    pub seed: Option<&'a Bound<'a, PyAny>>,
    pub resume: bool,
    pub resume_from: Option<&'a Bound<'a, PyAny>>,
    pub on_storage_error: &'a str,
    pub remote_finish_timeout: Option<f64>,
    pub health: Option<&'a Bound<'a, PyAny>>,
    pub stop_on: Option<Vec<String>>,
    pub on_health: Option<Bound<'a, PyAny>>,
    pub mlflow: Option<&'a Bound<'a, PyDict>>,
    pub trackio: Option<&'a Bound<'a, PyDict>>,
    pub health_webhook: Option<String>,
    pub stall_exit_after: Option<f64>,
    pub outside_keys: &'a str,
    pub system_metrics: bool,
    pub system_interval: f64,
}

/// `Logger.__new__`'s body.
pub(super) fn open(py: Python<'_>, args: NewArgs<'_>) -> PyResult<PyLogger> {
    let NewArgs {
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
    } = args;
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
    // docs/contract/system-metrics.md: on by default, every `system_interval` seconds.
    lc.system_metrics = system_metrics;
    lc.system_interval_secs = system_interval;
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
    // An object-store URL: the run is written into a staging directory and put to the bucket
    // (docs/contract/object-storage.md "Writing").
    let bucket = match lc.log_dir.as_deref() {
        Some(d) if tally::rundir::url_scheme(d).is_some() => {
            let url = d.to_string_lossy();
            let uploader = crate::bucket::start(py, url.trim_end_matches('/'))?;
            lc.log_dir = Some(uploader.staging().to_owned());
            lc.upload = Some(uploader.clone());
            Some(uploader)
        }
        _ => None,
    };
    let (objs, boxed) = replicas::sinks(py, &mut lc, sinks, wandb, mlflow, trackio)?;
    let mut log = tally::Logger::with_sinks(lc, boxed, Arc::new(SystemClock::default()))
        .map_err(Failure::from)?;
    if let Some(b) = &bucket {
        super::in_bucket::started(b);
    }
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
        bucket,
        on_storage_error,
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
