//! Building the run's JSON artefacts: `run_config.json` at start, `run_summary.json` during and at close.

use crate::atomic::{json_bytes, replace};
use crate::error::{Error, Result};
use crate::host;
use crate::redact::redact_value;
use crate::room::Room;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{de::DeserializeOwned, Serialize};
use serde_json::{Map, Value};
use std::path::Path;
use tally_schema::artifacts::{
    RunConfig, RunIdentity, RunStatus, RunSummary, UserMetric, WandbSettings,
};

/// File name of the run configuration snapshot.
pub const RUN_CONFIG_FILE: &str = "run_config.json";
/// File name of the run summary.
pub const RUN_SUMMARY_FILE: &str = "run_summary.json";
/// File name of the run's playback video (docs/contract/remote-sinks.md "The playback video").
pub const PLAY_VIDEO_FILE: &str = "play_video.mp4";

/// The UTC time of `wall` seconds since the Unix epoch (a clock's wall reading).
pub fn utc(wall: f64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros((wall * 1e6) as i64).unwrap_or_default()
}

/// ISO-8601 UTC with microseconds, as Python's `datetime.now(timezone.utc).isoformat()`.
pub fn iso_utc(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, false)
}

/// The `run` identity for a run in `log_dir` started at `start`, with host, user, git and hardware facts.
pub fn run_identity(
    algo: &str,
    task: &str,
    sim_backend: &str,
    log_dir: &Path,
    start: &DateTime<Utc>,
    wandb: WandbSettings,
) -> RunIdentity {
    let cwd = std::env::current_dir().unwrap_or_else(|_| log_dir.to_owned());
    RunIdentity {
        algo: algo.to_owned(),
        task: task.to_owned(),
        sim_backend: sim_backend.to_owned(),
        name: None,
        seed: None,
        log_dir: log_dir.display().to_string(),
        start_time_utc: iso_utc(start),
        hostname: host::hostname(),
        user: host::user(),
        git: host::git_info(&cwd),
        hardware: host::hardware(),
        wandb,
        mlflow: None,
        trackio: None,
        logger: None,
        extra: Map::new(),
    }
}

/// Atomically write `doc` to `path` with every secret redacted, whatever field holds it
/// (docs/contract/run-artifacts.md "Secrets"); returns the document as written.
pub fn write_redacted<T: Serialize + DeserializeOwned>(path: &Path, doc: &T) -> Result<T> {
    let clean = write_clean(path, doc, None)?;
    // Redaction only swaps strings for strings, so the typed document always reads back.
    serde_json::from_value(clean).map_err(|source| Error::Json {
        path: path.to_owned(),
        source,
    })
}

/// Write `doc` redacted, fsynced, over `room` when the disk refuses a temporary file.
fn write_clean<T: Serialize>(path: &Path, doc: &T, room: Option<&Room>) -> Result<Value> {
    let json = serde_json::to_value(doc).map_err(|source| Error::Json {
        path: path.to_owned(),
        source,
    })?;
    let clean = redact_value(&json);
    let bytes = json_bytes(path, &clean)?;
    match room {
        Some(room) => room.replace(path, &bytes, true)?,
        None => replace(path, &bytes, true)?,
    }
    Ok(clean)
}

/// Write `run_config.json` into `dir`: the identity, the resolved config and the user metrics
/// known so far (a resumed run's earlier ones), secrets redacted. The returned document is the
/// redacted one, so later rewrites stay clean.
pub fn write_run_config(
    dir: &Path,
    run: RunIdentity,
    config: &Value,
    user_metrics: Vec<UserMetric>,
) -> Result<RunConfig> {
    let doc = RunConfig {
        run,
        config: config.clone(),
        user_metrics,
    };
    write_redacted(&dir.join(RUN_CONFIG_FILE), &doc)
}

/// A fresh `running` summary for the run described by `run`.
pub fn initial_summary(run: &RunIdentity) -> RunSummary {
    RunSummary {
        status: RunStatus::Running,
        completed_iterations: 0,
        persisted_iterations: None,
        lost_iterations: 0,
        pending_iterations: 0,
        total_env_steps: 0,
        final_mean_reward: None,
        best_mean_reward: None,
        mean_episode_length: None,
        last_checkpoint: None,
        trace_path: None,
        training_wall_time_sec: 0.0,
        metric_schema_version: tally_schema::METRIC_SCHEMA_VERSION,
        runtime_manifest: None,
        final_env_steps_per_sec: None,
        tail_env_steps_per_sec: None,
        tail_iteration_count: 0,
        final_learner_replay_rows_per_sec: None,
        final_cycle_wall_ms: None,
        final_inference_ms: None,
        final_inference_h2d_ms: None,
        final_inference_forward_ms: None,
        final_inference_d2h_ms: None,
        contract_warnings: 0,
        nonfinite_values: 0,
        underflow_values: 0,
        backpressure_waits: 0,
        backpressure_wait_sec: 0.0,
        sink_errors: Vec::new(),
        user_metrics: Default::default(),
        algo: run.algo.clone(),
        task: run.task.clone(),
        sim_backend: run.sim_backend.clone(),
        log_dir: run.log_dir.clone(),
        start_time_utc: run.start_time_utc.clone(),
        end_time_utc: None,
        wall_time_sec: 0.0,
        wandb_run_url: None,
        play_video_path: None,
        status_reason: None,
        resumed: Vec::new(),
        health: Vec::new(),
        health_alerts: None,
        remote_sinks: Vec::new(),
        extra: Map::new(),
    }
}

/// Atomically write `summary` as `dir/run_summary.json`, secrets redacted (the runtime
/// manifest and sink error texts included).
pub fn write_run_summary(dir: &Path, summary: &RunSummary) -> Result<()> {
    write_clean(&dir.join(RUN_SUMMARY_FILE), summary, None).map(drop)
}

/// [`write_run_summary`] over the run's `room` when the disk is full (docs/contract/
/// run-artifacts.md "Storage faults").
pub fn write_run_summary_in(dir: &Path, summary: &RunSummary, room: &Room) -> Result<()> {
    write_clean(&dir.join(RUN_SUMMARY_FILE), summary, Some(room)).map(drop)
}
