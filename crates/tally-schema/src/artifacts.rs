//! Typed run artefacts: `run_config.json`, `run_summary.json` and the embedded runtime manifest v1.
//!
//! Producers build these structs and serialise them; consumers that must report every
//! violation of an arbitrary file work on `serde_json::Value` instead (the validators).
//! Field names follow the reference §3. Every struct keeps unknown fields in `extra` so a
//! newer producer's optional additions survive a read-modify-write (additive evolution).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// How a run ended (or that it has not yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still running: the summary is a periodic snapshot.
    Running,
    /// Reached its last iteration and closed cleanly.
    Completed,
    /// Stopped by an error in the training loop.
    Failed,
    /// The collector process died.
    CollectorDied,
    /// Stopped by the user (Ctrl-C) or a signal.
    Interrupted,
}

impl RunStatus {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::CollectorDied => "collector_died",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

impl std::str::FromStr for RunStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            RunStatus::Running,
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::CollectorDied,
            RunStatus::Interrupted,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
        .ok_or_else(|| format!("unknown run status '{s}': expected running, completed, failed, collector_died or interrupted"))
    }
}

/// Git state of the working tree the run started from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct GitInfo {
    /// The HEAD commit hash.
    pub commit: Option<String>,
    /// The checked-out branch (None when detached).
    pub branch: Option<String>,
    /// Whether tracked files had uncommitted changes.
    pub dirty: Option<bool>,
}

/// The host the run started on. Strings, as in the reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Hardware {
    /// OS and architecture, e.g. `linux-x86_64`.
    pub platform: String,
    /// CPU model name.
    pub chip: String,
    /// Logical CPU count.
    pub cpu_total_cores: String,
    /// GPU model, or `none`.
    pub gpu_name: String,
    /// Total memory, e.g. `23.4 GiB`.
    pub memory: String,
}

/// W&B settings of the run. Never holds credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct WandbSettings {
    /// Project name.
    pub project: Option<String>,
    /// Entity (team or user).
    pub entity: Option<String>,
    /// Run display name.
    pub name: Option<String>,
    /// Run group.
    pub group: Option<String>,
    /// Job type.
    pub job_type: Option<String>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Notes.
    pub notes: Option<String>,
    /// `online`, `offline` or `disabled`.
    pub mode: Option<String>,
}

/// The `run` section of `run_config.json`: who, where, what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// Algorithm name as given (`sac`, `appo`, ...).
    pub algo: String,
    /// Task name.
    pub task: String,
    /// Simulation backend.
    pub sim_backend: String,
    /// The run directory.
    pub log_dir: String,
    /// Start time, ISO-8601 UTC.
    pub start_time_utc: String,
    /// Host name.
    pub hostname: String,
    /// OS user.
    pub user: String,
    /// Git state, when the working directory is inside a repository.
    pub git: Option<GitInfo>,
    /// Host hardware.
    pub hardware: Hardware,
    /// W&B settings (no secrets).
    pub wandb: WandbSettings,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `run_config.json`: the run identity and the fully resolved configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Identity of the run.
    pub run: RunIdentity,
    /// The resolved configuration, with secret-looking values redacted.
    pub config: Value,
}

/// Stable inference-flight counters of runtime manifest v1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct InferenceFlight {
    /// Requests queued at the last report.
    pub queue_depth: u64,
    /// Ticks of publication lag at the last report.
    pub publication_lag: u64,
    /// Largest in-flight count since the previous successful report.
    pub max_in_flight: u64,
    /// Largest publication lag since the previous successful report.
    pub max_publication_lag: u64,
    /// Experimental additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Stable replay-ingress counters of runtime manifest v1 (high water is run-cumulative).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ReplayIngress {
    /// Configured ingress depth (slots).
    pub ingress_depth: u64,
    /// Rows per ingress slot.
    pub ingress_slot_rows: u64,
    /// Slots published.
    pub published_sequence: u64,
    /// Slots released.
    pub release_sequence: u64,
    /// Slots published and not released.
    pub occupancy: u64,
    /// Highest occupancy of the whole run.
    pub high_water_occupancy: u64,
    /// Times a writer waited on a full ingress.
    pub backpressure_waits: u64,
    /// Total seconds writers waited (finite, ≥ 0).
    pub backpressure_wait_s: f64,
    /// Early returns.
    pub early_returns: u64,
    /// Dropped batches.
    pub dropped_batches: u64,
    /// Returns because the ingress was closed.
    pub closed_returns: u64,
    /// Returns because of a stop request.
    pub stop_returns: u64,
    /// Experimental additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The inference memory budget; only `ipc_event_count` is stable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct InferenceMemoryBudget {
    /// CUDA IPC events of the inference ring.
    pub ipc_event_count: u64,
    /// Experimental additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Runtime manifest v1 (`runtime_manifest` in `run_summary.json`).
///
/// Only `schema_version` is required (an early-failure manifest has nothing else); a
/// completed run's manifest must also carry the lifecycle fields (checked by the validator).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeManifest {
    /// Always [`crate::RUNTIME_MANIFEST_SCHEMA_VERSION`] for v1.
    pub schema_version: u32,
    /// Inference ring capacity (positive when completed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_ring_capacity: Option<u64>,
    /// Collector metric interval (positive when completed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collector_metrics_interval: Option<u64>,
    /// Device the collector backend is bound to. Absent = not reported; `Some(None)` = JSON
    /// null, allowed only when the backend needs no accelerator.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_present",
        deserialize_with = "de_present"
    )]
    pub collector_backend_device: Option<Option<String>>,
    /// Inference-flight counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_flight: Option<InferenceFlight>,
    /// Replay-ingress counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_ingress: Option<ReplayIngress>,
    /// Inference memory budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_memory_budget: Option<InferenceMemoryBudget>,
    /// Producer-owned backend diagnostics (shape validated, content opaque).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_diagnostics: Option<Value>,
    /// Opaque shutdown diagnostics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown: Option<Value>,
    /// Experimental fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl RuntimeManifest {
    /// A v1 manifest with nothing but the version.
    pub fn v1() -> Self {
        RuntimeManifest {
            schema_version: crate::RUNTIME_MANIFEST_SCHEMA_VERSION,
            inference_ring_capacity: None,
            collector_metrics_interval: None,
            collector_backend_device: None,
            inference_flight: None,
            replay_ingress: None,
            inference_memory_budget: None,
            backend_diagnostics: None,
            shutdown: None,
            extra: Map::new(),
        }
    }
}

fn ser_present<S: Serializer>(v: &Option<Option<String>>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(inner) => inner.serialize(s),
        None => s.serialize_none(),
    }
}

fn de_present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// `run_summary.json`: the runner's figures, then the tracker's, rewritten during the run and at close.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// How the run ended, or `running`.
    pub status: RunStatus,
    /// Iterations completed.
    pub completed_iterations: u64,
    /// Cumulative env steps (the step axis).
    pub total_env_steps: u64,
    /// Last collector 100-episode mean return; null if none was logged.
    pub final_mean_reward: Option<f64>,
    /// Best collector 100-episode mean return; null if none was logged.
    pub best_mean_reward: Option<f64>,
    /// Last mean episode length.
    pub mean_episode_length: Option<f64>,
    /// Last checkpoint path.
    pub last_checkpoint: Option<String>,
    /// Perfetto trace path, when tracing.
    pub trace_path: Option<String>,
    /// Training wall time, warm-up excluded.
    pub training_wall_time_sec: f64,
    /// Always [`crate::METRIC_SCHEMA_VERSION`].
    pub metric_schema_version: u32,
    /// The embedded runtime manifest.
    pub runtime_manifest: Option<RuntimeManifest>,
    /// Steps/s of the last iteration.
    pub final_env_steps_per_sec: Option<f64>,
    /// Σsteps / Σtime over the last ≤ 20 measured iterations.
    pub tail_env_steps_per_sec: Option<f64>,
    /// How many iterations the tail figure covers.
    pub tail_iteration_count: u64,
    /// Learner replay rows/s of the last iteration.
    pub final_learner_replay_rows_per_sec: Option<f64>,
    /// Last Iter Wall in ms.
    pub final_cycle_wall_ms: Option<f64>,
    /// Last learner Inference in ms.
    pub final_inference_ms: Option<f64>,
    /// Last Inference H2D in ms.
    pub final_inference_h2d_ms: Option<f64>,
    /// Last Inference Forward in ms.
    pub final_inference_forward_ms: Option<f64>,
    /// Last Inference D2H in ms.
    pub final_inference_d2h_ms: Option<f64>,
    /// Learner-timeline contract warnings (accounted above Iter Wall).
    #[serde(default)]
    pub contract_warnings: u64,
    /// Steps that waited for room in the logger's bounded queue (lossless back-pressure).
    #[serde(default)]
    pub backpressure_waits: u64,
    /// Total seconds `step` waited on the full queue.
    #[serde(default)]
    pub backpressure_wait_sec: f64,
    /// Sink failures, each naming the sink, the iteration and the error.
    #[serde(default)]
    pub sink_errors: Vec<String>,
    /// Algorithm.
    pub algo: String,
    /// Task.
    pub task: String,
    /// Simulation backend.
    pub sim_backend: String,
    /// Run directory.
    pub log_dir: String,
    /// Start time, ISO-8601 UTC.
    pub start_time_utc: String,
    /// End time, ISO-8601 UTC (null while running).
    pub end_time_utc: Option<String>,
    /// Wall time since the logger started.
    pub wall_time_sec: f64,
    /// W&B run URL, when a W&B run exists.
    pub wandb_run_url: Option<String>,
    /// Uploaded playback video, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub play_video_path: Option<String>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
