//! A demo run: the logger configured from a [`DemoConfig`] with the panel attached, the
//! profile's training loop, and the run closed with the status it earned (completed,
//! interrupted or failed).

use crate::config::{profile_of, DemoConfig};
use crate::error::Error;
use crate::{appo, onpolicy, rft, sac_family, training};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use tally::{Logger, LoggerConfig, Profile, RunStatus};
use tally_tui::{Panel, PanelOptions};

/// Builds a demo run's extra sinks for its backend and tracker settings (`training.wandb_*`,
/// `training.mlflow_*`, `training.trackio_*`): the Python package passes one so `python -m
/// tally demo ... training.logger=wandb` (or `mlflow`, `trackio`) logs through that tracker.
pub type SinkFactory<'a> =
    dyn Fn(&DemoConfig) -> Result<Vec<Box<dyn tally::Sink>>, Error> + Sync + 'a;

/// How a demo run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The run directory.
    pub run_dir: PathBuf,
    /// The status the logger was closed with: [`RunStatus::Interrupted`] when `stop` ended
    /// the run early.
    pub status: RunStatus,
}

/// Run the demo until the last iteration or until `stop` is set; `sinks` adds sinks beside
/// the logger's own.
pub fn run(
    c: &DemoConfig,
    sinks: Option<&SinkFactory<'_>>,
    stop: &AtomicBool,
) -> Result<Outcome, Error> {
    let profile = profile_of(&c.algo)?;
    let mut lc = LoggerConfig::new(c.algo.clone(), c.task.clone(), c.sim.clone());
    lc.max_iterations = Some(c.iterations);
    lc.num_envs = Some(c.num_envs);
    lc.num_gpus = c.gpus;
    lc.profile = profile;
    lc.backend = c.backend;
    lc.log_root = c.log_root.clone();
    lc.log_dir = c.log_dir.clone();
    lc.log_interval = c.log_interval;
    lc.trace = c.trace;
    lc.trace_output_dir = c.trace_output_dir.clone();
    lc.trace_thread_time = c.trace_thread_time;
    lc.system_metrics = c.system_metrics;
    lc.system_interval_secs = c.system_interval;
    lc.trace_cuda_events = c.trace_cuda_events;
    lc.wandb = c.wandb.clone();
    // The replica's settings, recorded in run_config.json as the W&B settings are.
    let given = |m: &std::collections::BTreeMap<String, String>, k: &str| m.get(k).cloned();
    if c.backend == tally::Backend::Mlflow {
        lc.mlflow = Some(tally::schema::artifacts::MlflowSettings {
            tracking_uri: given(&c.mlflow, "tracking_uri"),
            experiment: given(&c.mlflow, "experiment"),
            run_name: given(&c.mlflow, "run_name"),
        });
    }
    if c.backend == tally::Backend::Trackio {
        lc.trackio = Some(tally::schema::artifacts::TrackioSettings {
            project: given(&c.trackio, "project"),
            name: given(&c.trackio, "name"),
            group: given(&c.trackio, "group"),
        });
    }
    lc.run_config = serde_json::json!({
        "algo": {"name": c.algo, "num_envs": c.num_envs, "max_iterations": c.iterations},
        "task": c.task,
        "training": {"sim_backend": c.sim, "num_gpus": c.gpus, "log_interval": c.log_interval, "logger": format!("{:?}", c.backend).to_lowercase()},
    });
    let extra = match sinks {
        Some(build) => build(c)?,
        None => Vec::new(),
    };
    let clock = std::sync::Arc::new(tally::SystemClock::default());
    let mut log = Logger::with_sinks(lc, extra, clock)?;
    // The panel renders the logger's terminal state on its own 2 Hz thread. The logger owns
    // it: closing the run (or dropping the logger on a panic) draws the last frame and
    // restores the terminal.
    Panel::attach(
        &mut log,
        PanelOptions {
            mode: c.panel,
            plain_interval: c.plain_every,
            ..PanelOptions::default()
        },
    );
    // An off-policy run carries a runtime manifest from its start (the early-failure form:
    // the version only), so a run killed before it closes still names its manifest schema
    // (docs/contract/manifest-and-soak.md "The soak monitor").
    if matches!(profile, Profile::SacFamily | Profile::Appo) {
        log.set_runtime_manifest(tally::schema::artifacts::RuntimeManifest::v1())?;
    }
    let result = match profile {
        Profile::SacFamily => training::train::<sac_family::SacFamily>(c, &mut log, stop),
        Profile::Appo => training::train::<appo::Appo>(c, &mut log, stop),
        Profile::OnPolicy => training::train::<onpolicy::OnPolicy>(c, &mut log, stop),
        Profile::Rft => rft::train(c.iterations, &mut log, stop),
    };
    if matches!(profile, Profile::SacFamily | Profile::Appo) {
        match result {
            Ok(true) => log.set_runtime_manifest(demo_manifest(c))?,
            Ok(false) => log.set_runtime_manifest(interrupted_manifest())?,
            Err(_) => {}
        }
    }
    let status = match result {
        Ok(true) => RunStatus::Completed,
        Ok(false) => RunStatus::Interrupted,
        Err(_) => RunStatus::Failed,
    };
    let closed = log.close(status);
    result?;
    closed?;
    Ok(Outcome {
        run_dir: log.run_dir().to_owned(),
        status,
    })
}

/// The early-failure manifest of a run stopped by Ctrl-C or SIGTERM: only the version and
/// the shutdown snapshot saying so (its lifecycle figures would describe a run that did not
/// happen).
fn interrupted_manifest() -> tally::schema::artifacts::RuntimeManifest {
    let mut m = tally::schema::artifacts::RuntimeManifest::v1();
    m.shutdown = Some(serde_json::json!({
        "classification": "external_cancellation",
        "owner": "external",
        "phase": "training",
        "exception": null,
        "cleanup": {"errors": []},
    }));
    m
}

/// A runtime manifest v1 consistent with the demo's run (CPU simulation: no accelerator).
fn demo_manifest(c: &DemoConfig) -> tally::schema::artifacts::RuntimeManifest {
    use tally::schema::artifacts::{
        InferenceFlight, InferenceMemoryBudget, ReplayIngress, RuntimeManifest,
    };
    let slots = c.iterations * u64::from(c.gpus);
    let mut m = RuntimeManifest::v1();
    m.inference_ring_capacity = Some(2);
    m.collector_metrics_interval = Some(1);
    m.collector_backend_device = Some(None);
    m.inference_flight = Some(InferenceFlight {
        max_in_flight: 1,
        max_publication_lag: 1,
        ..Default::default()
    });
    m.replay_ingress = Some(ReplayIngress {
        ingress_depth: 8,
        ingress_slot_rows: c.num_envs,
        published_sequence: slots,
        release_sequence: slots,
        high_water_occupancy: 3,
        ..Default::default()
    });
    m.inference_memory_budget = Some(InferenceMemoryBudget {
        ipc_event_count: 0,
        ..Default::default()
    });
    // Set only once training finished: the learner ended the run at its last iteration, its
    // threads joined without error (a soak needs this snapshot to pass).
    m.shutdown = Some(serde_json::json!({
        "classification": "normal_completion",
        "owner": "learner",
        "phase": "final_iteration",
        "exception": null,
        "cleanup": {"errors": []},
    }));
    m
}
