//! Typed run artefacts: `run_config.json`, `run_summary.json`, runtime manifest v1, soak artifact 0.3.0, and their JSON Schemas.
//!
//! Producers build these structs and serialise them; consumers that must report every
//! violation of an arbitrary file work on `serde_json::Value` instead ([`crate::conformance`]).
//! Field names follow the reference §3 and §7. Every struct keeps unknown fields in `extra` so
//! a newer producer's optional additions survive a read-modify-write (additive evolution).
//! [`json_schema`] derives the committed `schemas/*.json` from these types; `x-unit` there
//! names a figure's unit, which `tests/evolution.rs` holds stable.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// How a run ended (or that it has not yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub struct GitInfo {
    /// The HEAD commit hash.
    pub commit: Option<String>,
    /// The checked-out branch (None when detached).
    pub branch: Option<String>,
    /// Whether tracked files had uncommitted changes.
    pub dirty: Option<bool>,
}

/// The host the run started on. Strings, as in the reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    /// How the logger was configured (absent in runs not written by `tally::Logger`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<LoggerFacts>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `run.logger` block of `run_config.json`: the facts a reader of the run (the panel of
/// `tally watch`, `extract`) needs about how it was logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LoggerFacts {
    /// Timing profile.
    pub profile: crate::Profile,
    /// Persistent backend (`tensorboard`, `wandb`, `none`).
    pub backend: String,
    /// Last iteration.
    pub max_iterations: u64,
    /// Environments per rank.
    pub num_envs: u64,
    /// World size.
    pub num_gpus: u32,
    /// The backend is written every this many iterations.
    pub log_interval: u64,
    /// Whether a Perfetto trace was recorded.
    pub trace_enabled: bool,
}

/// `run_config.json`: the run identity and the fully resolved configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunConfig {
    /// Identity of the run.
    pub run: RunIdentity,
    /// The resolved configuration, with secret-looking values redacted.
    pub config: Value,
}

/// Stable inference-flight counters of runtime manifest v1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct InferenceFlight {
    /// Requests queued at the last report.
    #[schemars(extend("x-unit" = "requests"))]
    pub queue_depth: u64,
    /// Ticks of publication lag at the last report.
    #[schemars(extend("x-unit" = "ticks"))]
    pub publication_lag: u64,
    /// Largest in-flight count since the previous successful report.
    #[schemars(extend("x-unit" = "requests"))]
    pub max_in_flight: u64,
    /// Largest publication lag since the previous successful report.
    #[schemars(extend("x-unit" = "ticks"))]
    pub max_publication_lag: u64,
    /// Experimental additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Stable replay-ingress counters of runtime manifest v1 (high water is run-cumulative).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct ReplayIngress {
    /// Configured ingress depth (slots).
    #[schemars(extend("x-unit" = "slots"))]
    pub ingress_depth: u64,
    /// Rows per ingress slot.
    #[schemars(extend("x-unit" = "rows"))]
    pub ingress_slot_rows: u64,
    /// Slots published.
    #[schemars(extend("x-unit" = "slots"))]
    pub published_sequence: u64,
    /// Slots released.
    #[schemars(extend("x-unit" = "slots"))]
    pub release_sequence: u64,
    /// Slots published and not released.
    #[schemars(extend("x-unit" = "slots"))]
    pub occupancy: u64,
    /// Highest occupancy of the whole run.
    #[schemars(extend("x-unit" = "slots"))]
    pub high_water_occupancy: u64,
    /// Times a writer waited on a full ingress.
    #[schemars(extend("x-unit" = "count"))]
    pub backpressure_waits: u64,
    /// Total seconds writers waited (finite, ≥ 0).
    #[schemars(range(min = 0.0), extend("x-unit" = "s"))]
    pub backpressure_wait_s: f64,
    /// Early returns.
    #[schemars(extend("x-unit" = "count"))]
    pub early_returns: u64,
    /// Dropped batches.
    #[schemars(extend("x-unit" = "count"))]
    pub dropped_batches: u64,
    /// Returns because the ingress was closed.
    #[schemars(extend("x-unit" = "count"))]
    pub closed_returns: u64,
    /// Returns because of a stop request.
    #[schemars(extend("x-unit" = "count"))]
    pub stop_returns: u64,
    /// Experimental additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The inference memory budget; only `ipc_event_count` is stable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct InferenceMemoryBudget {
    /// CUDA IPC events of the inference ring.
    #[schemars(extend("x-unit" = "count"))]
    pub ipc_event_count: u64,
    /// Experimental additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Runtime manifest v1 (`runtime_manifest` in `run_summary.json`).
///
/// Only `schema_version` is required (an early-failure manifest has nothing else); a
/// completed run's manifest must also carry the lifecycle fields (checked by the validator).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeManifest {
    /// Always [`crate::RUNTIME_MANIFEST_SCHEMA_VERSION`] for v1.
    #[schemars(range(min = 1, max = 1))]
    pub schema_version: u32,
    /// Inference ring capacity (positive when completed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1), extend("x-unit" = "slots"))]
    pub inference_ring_capacity: Option<u64>,
    /// Collector metric interval (positive when completed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1), extend("x-unit" = "ticks"))]
    pub collector_metrics_interval: Option<u64>,
    /// Device the collector backend is bound to. Absent = not reported; `Some(None)` = JSON
    /// null, allowed only when the backend needs no accelerator.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_present",
        deserialize_with = "de_present"
    )]
    #[schemars(with = "Option<String>")]
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
    #[schemars(with = "Option<BackendDiagnostics>")]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunSummary {
    /// How the run ended, or `running`.
    pub status: RunStatus,
    /// Iterations completed.
    #[schemars(extend("x-unit" = "iterations"))]
    pub completed_iterations: u64,
    /// Cumulative env steps (the step axis).
    #[schemars(extend("x-unit" = "env_steps"))]
    pub total_env_steps: u64,
    /// Last collector 100-episode mean return; null if none was logged.
    #[schemars(extend("x-unit" = "reward"))]
    pub final_mean_reward: Option<f64>,
    /// Best collector 100-episode mean return; null if none was logged.
    #[schemars(extend("x-unit" = "reward"))]
    pub best_mean_reward: Option<f64>,
    /// Last mean episode length.
    #[schemars(extend("x-unit" = "env_steps"))]
    pub mean_episode_length: Option<f64>,
    /// Last checkpoint path.
    pub last_checkpoint: Option<String>,
    /// Perfetto trace path, when tracing.
    pub trace_path: Option<String>,
    /// Training wall time, warm-up excluded.
    #[schemars(extend("x-unit" = "s"))]
    pub training_wall_time_sec: f64,
    /// Always [`crate::METRIC_SCHEMA_VERSION`].
    #[schemars(range(min = 1, max = 1))]
    pub metric_schema_version: u32,
    /// The embedded runtime manifest.
    pub runtime_manifest: Option<RuntimeManifest>,
    /// Steps/s of the last iteration.
    #[schemars(extend("x-unit" = "env_steps/s"))]
    pub final_env_steps_per_sec: Option<f64>,
    /// Σsteps / Σtime over the last ≤ 20 measured iterations.
    #[schemars(extend("x-unit" = "env_steps/s"))]
    pub tail_env_steps_per_sec: Option<f64>,
    /// How many iterations the tail figure covers.
    #[schemars(extend("x-unit" = "iterations"))]
    pub tail_iteration_count: u64,
    /// Learner replay rows/s of the last iteration.
    #[schemars(extend("x-unit" = "rows/s"))]
    pub final_learner_replay_rows_per_sec: Option<f64>,
    /// Last Iter Wall in ms.
    #[schemars(extend("x-unit" = "ms"))]
    pub final_cycle_wall_ms: Option<f64>,
    /// Last learner Inference in ms.
    #[schemars(extend("x-unit" = "ms"))]
    pub final_inference_ms: Option<f64>,
    /// Last Inference H2D in ms.
    #[schemars(extend("x-unit" = "ms"))]
    pub final_inference_h2d_ms: Option<f64>,
    /// Last Inference Forward in ms.
    #[schemars(extend("x-unit" = "ms"))]
    pub final_inference_forward_ms: Option<f64>,
    /// Last Inference D2H in ms.
    #[schemars(extend("x-unit" = "ms"))]
    pub final_inference_d2h_ms: Option<f64>,
    /// Learner-timeline contract warnings (accounted above Iter Wall).
    #[serde(default)]
    #[schemars(extend("x-unit" = "count"))]
    pub contract_warnings: u64,
    /// Steps that waited for room in the logger's bounded queue (lossless back-pressure).
    #[serde(default)]
    #[schemars(extend("x-unit" = "count"))]
    pub backpressure_waits: u64,
    /// Total seconds `step` waited on the full queue.
    #[serde(default)]
    #[schemars(extend("x-unit" = "s"))]
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
    #[schemars(extend("x-unit" = "s"))]
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

/// Schema transform: every declared property is required (a nullable one may be null, but
/// must be there), as the soak artifact and the optimisation entries demand.
fn require_every_property(schema: &mut schemars::Schema) {
    let keys: Vec<Value> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().map(Value::String).collect())
        .unwrap_or_default();
    schema.insert("required".into(), Value::Array(keys));
}

/// One backend optimisation in `backend_diagnostics.optimizations`: what was asked for, what
/// is in effect, and why not. Further members are the producer's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct BackendOptimization {
    /// Whether the configuration asked for the optimisation.
    pub requested: bool,
    /// Whether the optimisation is in effect.
    pub enabled: bool,
    /// Why a requested optimisation is not in effect; null when nothing was disabled.
    pub disable_reason: Option<String>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The shape tally requires of `backend_diagnostics` (in the runtime manifest, or at the top
/// level of a PPO `run_summary.json`): the physical backend's tensor-runtime snapshot.
///
/// Only the shape is the contract: an `optimizations` mapping from each optimisation's name
/// (CUDA graphs included) to its requested/enabled/disable_reason. The names, the values and
/// every other member belong to the producer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BackendDiagnostics {
    /// Each optimisation by name.
    pub optimizations: BTreeMap<String, BackendOptimization>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Whether a soak run passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SoakStatus {
    /// Every monitor and run-summary check held.
    Passed,
    /// Some check failed; `failure_reason` and `failure_classification` say which.
    Failed,
}

/// Why a soak run failed: a producer classification (which names the owner that started the
/// failure) or a monitor classification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum FailureClassification {
    /// Producer: the learner failed.
    #[serde(rename = "learner_failure")]
    LearnerFailure,
    /// Producer: the collector failed.
    #[serde(rename = "collector_failure")]
    CollectorFailure,
    /// Producer: a backend worker failed.
    #[serde(rename = "backend_worker_failure")]
    BackendWorkerFailure,
    /// Producer or monitor: progress stopped ticking.
    #[serde(rename = "timeout/stale_tick")]
    TimeoutStaleTick,
    /// Producer: cancelled from outside (signal, Ctrl-C).
    #[serde(rename = "external_cancellation")]
    ExternalCancellation,
    /// Producer: failed without a known owner.
    #[serde(rename = "unknown_failure")]
    UnknownFailure,
    /// Monitor: no progress bytes before the startup timeout.
    #[serde(rename = "timeout/startup")]
    TimeoutStartup,
    /// Monitor: processes were left behind after the grace period.
    #[serde(rename = "resource_leak")]
    ResourceLeak,
    /// Monitor: the monitor itself raised.
    #[serde(rename = "monitor_failure")]
    MonitorFailure,
    /// Monitor: the run left no `run_summary.json`.
    #[serde(rename = "missing_run_summary")]
    MissingRunSummary,
    /// Monitor: `run_summary.json` is not a JSON object.
    #[serde(rename = "invalid_run_summary")]
    InvalidRunSummary,
    /// Monitor: the summary's metric or manifest schema is missing or unsupported.
    #[serde(rename = "schema_violation")]
    SchemaViolation,
    /// Monitor: the producer's shutdown snapshot broke its contract (e.g. `normal_completion`
    /// on a failed run).
    #[serde(rename = "shutdown_contract_violation")]
    ShutdownContractViolation,
}

impl FailureClassification {
    /// Every classification, producer ones first.
    pub const ALL: [FailureClassification; 13] = [
        FailureClassification::LearnerFailure,
        FailureClassification::CollectorFailure,
        FailureClassification::BackendWorkerFailure,
        FailureClassification::TimeoutStaleTick,
        FailureClassification::ExternalCancellation,
        FailureClassification::UnknownFailure,
        FailureClassification::TimeoutStartup,
        FailureClassification::ResourceLeak,
        FailureClassification::MonitorFailure,
        FailureClassification::MissingRunSummary,
        FailureClassification::InvalidRunSummary,
        FailureClassification::SchemaViolation,
        FailureClassification::ShutdownContractViolation,
    ];

    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClassification::LearnerFailure => "learner_failure",
            FailureClassification::CollectorFailure => "collector_failure",
            FailureClassification::BackendWorkerFailure => "backend_worker_failure",
            FailureClassification::TimeoutStaleTick => "timeout/stale_tick",
            FailureClassification::ExternalCancellation => "external_cancellation",
            FailureClassification::UnknownFailure => "unknown_failure",
            FailureClassification::TimeoutStartup => "timeout/startup",
            FailureClassification::ResourceLeak => "resource_leak",
            FailureClassification::MonitorFailure => "monitor_failure",
            FailureClassification::MissingRunSummary => "missing_run_summary",
            FailureClassification::InvalidRunSummary => "invalid_run_summary",
            FailureClassification::SchemaViolation => "schema_violation",
            FailureClassification::ShutdownContractViolation => "shutdown_contract_violation",
        }
    }

    /// The classification with this JSON name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Whether a producer's shutdown snapshot may carry it (it then wins over the monitor's).
    pub fn is_producer(self) -> bool {
        matches!(
            self,
            FailureClassification::LearnerFailure
                | FailureClassification::CollectorFailure
                | FailureClassification::BackendWorkerFailure
                | FailureClassification::TimeoutStaleTick
                | FailureClassification::ExternalCancellation
                | FailureClassification::UnknownFailure
        )
    }
}

/// The source tree a soak ran from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakSource {
    /// Repository path.
    pub path: String,
    /// HEAD commit; null outside a repository.
    pub commit: Option<String>,
    /// Checked-out branch; null when detached or outside a repository.
    pub branch: Option<String>,
    /// Paths with uncommitted changes.
    pub dirty_files: Vec<String>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One GPU visible to the soak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakGpuDevice {
    /// Device index.
    pub index: u64,
    /// Device UUID.
    pub uuid: String,
    /// Device name.
    pub name: String,
    /// Driver version.
    pub driver_version: String,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Software versions of the soak host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakSoftware {
    /// Python version.
    pub python: String,
    /// Torch version; null when torch is not importable.
    pub torch: Option<String>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The environment variables the soak records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakEnvironment {
    /// `CUDA_VISIBLE_DEVICES`; null when unset.
    #[serde(rename = "CUDA_VISIBLE_DEVICES")]
    pub cuda_visible_devices: Option<String>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Where and on what the soak ran (`runtime_snapshot` / `workspace_snapshot`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakContext {
    /// Source tree.
    pub source: SoakSource,
    /// Visible GPUs.
    pub gpu_devices: Vec<SoakGpuDevice>,
    /// Software versions.
    pub software: SoakSoftware,
    /// Recorded environment variables.
    pub environment: SoakEnvironment,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The monitor's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakMonitorSettings {
    /// Seconds between samples.
    #[schemars(range(min = 0.0), extend("x-unit" = "s"))]
    pub sample_interval_s: f64,
    /// Seconds allowed before the first progress byte.
    #[schemars(range(min = 0.0), extend("x-unit" = "s"))]
    pub startup_timeout_s: f64,
    /// Seconds progress may stay unchanged.
    #[schemars(range(min = 0.0), extend("x-unit" = "s"))]
    pub stale_progress_s: f64,
    /// Seconds children may outlive the run.
    #[schemars(range(min = 0.0), extend("x-unit" = "s"))]
    pub post_shutdown_grace_s: f64,
    /// Shortest run that can pass.
    #[schemars(range(min = 0.0), extend("x-unit" = "s"))]
    pub min_duration_s: f64,
    /// Samples taken.
    #[schemars(extend("x-unit" = "count"))]
    pub sample_count: u64,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Open file descriptors of one process by class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakFdClasses {
    /// Pipes.
    pub pipe: u64,
    /// Sockets.
    pub socket: u64,
    /// memfd files.
    pub memfd: u64,
    /// eventfds (CUDA IPC events among them).
    pub eventfd: u64,
    /// epoll instances.
    pub eventpoll: u64,
    /// `/dev/nvidia*` handles.
    pub nvidia: u64,
    /// `/dev/shm` files.
    pub shared_memory: u64,
    /// Everything else.
    pub other: u64,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One process of the sampled process tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakProcessSample {
    /// Process id.
    pub pid: u64,
    /// Start time in clock ticks since boot (with the pid, a unique identity).
    pub start_ticks: u64,
    /// Resident set size.
    #[schemars(extend("x-unit" = "KiB"))]
    pub rss_kib: u64,
    /// Open file descriptors.
    pub fd_count: u64,
    /// Open file descriptors by class.
    pub fd_classes: SoakFdClasses,
    /// Command line, at most 512 characters.
    pub command: String,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One GPU compute process (`nvidia-smi --query-compute-apps`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakGpuSample {
    /// Process id.
    pub pid: u64,
    /// GPU memory in use.
    #[schemars(extend("x-unit" = "MiB"))]
    pub used_memory_mib: u64,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Progress files under the progress directory (the console log excluded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakProgressSample {
    /// Files.
    pub count: u64,
    /// Bytes in all files.
    #[schemars(extend("x-unit" = "bytes"))]
    pub bytes_total: u64,
    /// Newest modification time (Unix seconds); null when there is no file yet.
    #[schemars(extend("x-unit" = "s"))]
    pub max_mtime: Option<f64>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One monitor sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakSample {
    /// Seconds since the soak started.
    #[schemars(range(min = 0.0), extend("x-unit" = "s"))]
    pub elapsed_s: f64,
    /// The process tree.
    pub process: Vec<SoakProcessSample>,
    /// GPU compute processes.
    pub gpu: Vec<SoakGpuSample>,
    /// Progress files.
    pub progress: SoakProgressSample,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Peaks over the samples and the run's final manifest figures. The manifest-derived
/// figures are null when the run left no usable runtime manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakResourceSummary {
    /// Samples taken.
    #[schemars(extend("x-unit" = "count"))]
    pub sample_count: u64,
    /// Largest process-tree size.
    #[schemars(extend("x-unit" = "count"))]
    pub max_process_count: u64,
    /// Largest resident set of one process.
    #[schemars(extend("x-unit" = "KiB"))]
    pub max_process_rss_kib: u64,
    /// Largest GPU memory in use.
    #[schemars(extend("x-unit" = "MiB"))]
    pub max_gpu_used_memory_mib: u64,
    /// Largest eventfd count.
    #[schemars(extend("x-unit" = "count"))]
    pub max_eventfd_count: u64,
    /// Largest `/dev/shm` descriptor count.
    #[schemars(extend("x-unit" = "count"))]
    pub max_shared_memory_fd_count: u64,
    /// Largest progress size.
    #[schemars(extend("x-unit" = "bytes"))]
    pub max_progress_bytes: u64,
    /// Processes left after the grace period.
    #[schemars(extend("x-unit" = "count"))]
    pub residual_process_count: u64,
    /// The manifest's `inference_memory_budget.ipc_event_count`.
    #[schemars(extend("x-unit" = "count"))]
    pub ipc_event_count: Option<u64>,
    /// The manifest's `inference_flight.max_in_flight`.
    #[schemars(extend("x-unit" = "requests"))]
    pub max_in_flight: Option<u64>,
    /// The manifest's `inference_flight.max_publication_lag`.
    #[schemars(extend("x-unit" = "ticks"))]
    pub max_publication_lag: Option<u64>,
    /// The manifest's `replay_ingress.ingress_depth`.
    #[schemars(extend("x-unit" = "slots"))]
    pub replay_ingress_depth: Option<u64>,
    /// The manifest's `replay_ingress.ingress_slot_rows`.
    #[schemars(extend("x-unit" = "rows"))]
    pub replay_ingress_slot_rows: Option<u64>,
    /// The manifest's `replay_ingress.high_water_occupancy`.
    #[schemars(extend("x-unit" = "slots"))]
    pub replay_ingress_high_water_occupancy: Option<u64>,
    /// The manifest's `replay_ingress.occupancy` at the end.
    #[schemars(extend("x-unit" = "slots"))]
    pub replay_ingress_final_occupancy: Option<u64>,
    /// The manifest's `replay_ingress.backpressure_waits`.
    #[schemars(extend("x-unit" = "count"))]
    pub replay_ingress_backpressure_waits: Option<u64>,
    /// The manifest's `replay_ingress.backpressure_wait_s`.
    #[schemars(range(min = 0.0), extend("x-unit" = "s"))]
    pub replay_ingress_backpressure_wait_s: Option<f64>,
    /// The manifest's `replay_ingress.early_returns`.
    #[schemars(extend("x-unit" = "count"))]
    pub replay_ingress_early_returns: Option<u64>,
    /// The manifest's `replay_ingress.dropped_batches`.
    #[schemars(extend("x-unit" = "count"))]
    pub replay_ingress_dropped_batches: Option<u64>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The exception that ended a run, in a producer shutdown snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShutdownException {
    /// Exception type name.
    #[serde(rename = "type")]
    pub kind: String,
    /// Exception message.
    pub message: String,
}

/// Cleanup outcome in a producer shutdown snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShutdownCleanup {
    /// Cleanup errors; a completed run has none.
    pub errors: Vec<Value>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The producer's shutdown snapshot (`runtime_manifest.shutdown`, copied raw to the soak
/// artifact's top level). Opaque in runtime manifest v1; the soak artifact checks the members
/// typed here, and everything else (iteration, coordination tick, inference ring, collector
/// exit, ...) stays the producer's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShutdownSnapshot {
    /// `normal_completion` or a producer failure classification.
    pub classification: String,
    /// The owner that started the shutdown (non-empty).
    pub owner: String,
    /// The phase it was in (non-empty).
    pub phase: String,
    /// The exception, or null.
    #[serde(default)]
    pub exception: Option<ShutdownException>,
    /// Cleanup outcome.
    pub cleanup: ShutdownCleanup,
    /// Producer diagnostics.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Processes found after the run and its grace period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakPostShutdown {
    /// The residual processes (their records are the monitor's).
    pub residual_processes: Vec<Value>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The soak-monitor artifact, schema [`crate::SOAK_ARTIFACT_SCHEMA_VERSION`] (reference §7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct SoakArtifact {
    /// Always the string `"0.3.0"`.
    #[schemars(extend("const" = "0.3.0"))]
    pub schema_version: String,
    /// Passed or failed.
    pub status: SoakStatus,
    /// Why the soak failed (the producer's shutdown description appended); null on a pass.
    pub failure_reason: Option<String>,
    /// The failure's classification; null on a pass.
    pub failure_classification: Option<FailureClassification>,
    /// The monitored command line.
    pub command: Vec<String>,
    /// Where and on what the soak ran.
    pub context: SoakContext,
    /// Start, `%Y-%m-%dT%H:%M:%SZ`.
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"))]
    pub started_at_utc: String,
    /// End, `%Y-%m-%dT%H:%M:%SZ`.
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"))]
    pub ended_at_utc: String,
    /// Wall time of the soak.
    #[schemars(range(min = 0.0), extend("x-unit" = "s"))]
    pub duration_s: f64,
    /// The command's exit code; null when it never exited on its own.
    pub returncode: Option<i64>,
    /// Monitor settings.
    pub monitor: SoakMonitorSettings,
    /// Every sample.
    pub samples: Vec<SoakSample>,
    /// Peaks and final manifest figures.
    pub resource_summary: SoakResourceSummary,
    /// The producer's raw `runtime_manifest.shutdown`; null when teardown produced none.
    pub shutdown: Option<ShutdownSnapshot>,
    /// What was left after shutdown.
    pub post_shutdown: SoakPostShutdown,
    /// The run's `run_summary.json` as read; null when missing. A failed soak may hold an
    /// invalid one (the classification says so), hence untyped here.
    pub run_summary: Option<Value>,
    /// Path of `soak-console.log`.
    pub console_log: String,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The three artefact kinds tally validates, each with its own version namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArtifactKind {
    /// `run_summary.json` (metric schema v1 stamped at its top level).
    RunSummary,
    /// A runtime manifest v1 on its own.
    RuntimeManifest,
    /// A soak-monitor artifact 0.3.0.
    SoakArtifact,
}

impl ArtifactKind {
    /// Every kind.
    pub const ALL: [ArtifactKind; 3] = [
        ArtifactKind::RunSummary,
        ArtifactKind::RuntimeManifest,
        ArtifactKind::SoakArtifact,
    ];

    /// A short name for messages: `run_summary`, `runtime_manifest`, `soak_artifact`.
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactKind::RunSummary => "run_summary",
            ArtifactKind::RuntimeManifest => "runtime_manifest",
            ArtifactKind::SoakArtifact => "soak_artifact",
        }
    }

    /// The file name of the kind's JSON Schema document under `schemas/`.
    pub fn schema_file_name(self) -> &'static str {
        match self {
            ArtifactKind::RunSummary => "run_summary.schema.json",
            ArtifactKind::RuntimeManifest => "runtime_manifest.v1.schema.json",
            ArtifactKind::SoakArtifact => "soak_artifact.0.3.0.schema.json",
        }
    }
}

/// The JSON Schema (draft 2020-12) of an artefact kind, generated from the types above.
///
/// Two additions the types cannot carry: a `$comment` marking the document as generated, and
/// (for `run_summary`) the optional top-level `backend_diagnostics` of the PPO path, which the
/// typed summary keeps among its producer additions. `x-unit` annotates a stable figure's unit.
/// The schema checks shapes and types; cross-field rules (a completed run's lifecycle fields,
/// the soak classification rules, the drain invariants) are [`crate::conformance`]'s.
pub fn json_schema(kind: ArtifactKind) -> Value {
    let schema = match kind {
        ArtifactKind::RunSummary => schemars::schema_for!(RunSummary),
        ArtifactKind::RuntimeManifest => schemars::schema_for!(RuntimeManifest),
        ArtifactKind::SoakArtifact => schemars::schema_for!(SoakArtifact),
    };
    let Value::Object(mut rest) = schema.to_value() else {
        unreachable!("a derived schema is an object")
    };
    // Header first, so a reader sees what the file is before its body.
    let mut out = Map::new();
    out.insert(
        "$schema".into(),
        rest.shift_remove("$schema").unwrap_or(Value::Null),
    );
    out.insert(
        "$comment".into(),
        Value::String(format!(
            "generated from crates/tally-schema/src/artifacts.rs; do not edit: regenerate \
             with `TALLY_BLESS=1 cargo test -p tally-schema --test json_schemas` \
             (file schemas/{})",
            kind.schema_file_name()
        )),
    );
    for key in ["title", "description"] {
        if let Some(v) = rest.shift_remove(key) {
            out.insert(key.into(), v);
        }
    }
    out.extend(rest);
    if kind == ArtifactKind::RunSummary {
        let diag = serde_json::json!({
            "description": "PPO path: the backend diagnostics the runtime manifest would carry \
                            (optional; shape validated, content the producer's).",
            "$ref": "#/$defs/BackendDiagnostics"
        });
        if let Some(Value::Object(props)) = out.get_mut("properties") {
            props.insert("backend_diagnostics".into(), diag);
        }
    }
    Value::Object(out)
}

/// [`json_schema`] as the committed file text: pretty JSON with a trailing newline.
pub fn json_schema_text(kind: ArtifactKind) -> String {
    let mut s =
        serde_json::to_string_pretty(&json_schema(kind)).expect("a JSON value always serialises");
    s.push('\n');
    s
}
