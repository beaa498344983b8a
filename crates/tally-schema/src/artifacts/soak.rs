//! The soak-monitor artifact 0.3.0 and the producer shutdown snapshot it copies
//! (`docs/contract/manifest-and-soak.md`, soak artifact 0.3.0).

use super::schema_transform::require_every_property;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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

/// The value of `shutdown.classification` a passing run carries.
pub const NORMAL_COMPLETION: &str = "normal_completion";

/// Every `shutdown.classification` a producer snapshot may carry: normal completion and the
/// producer failure classifications.
pub const SHUTDOWN_CLASSIFICATIONS: [&str; 7] = [
    NORMAL_COMPLETION,
    "learner_failure",
    "collector_failure",
    "backend_worker_failure",
    "timeout/stale_tick",
    "external_cancellation",
    "unknown_failure",
];

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

/// The soak-monitor artifact, schema [`crate::SOAK_ARTIFACT_SCHEMA_VERSION`]
/// (`docs/contract/manifest-and-soak.md`).
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
