//! `run_summary.json` (`docs/contract/run-artifacts.md`, `run_summary.json`).

use super::manifest::RuntimeManifest;
use super::status::RunStatus;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `run_summary.json`: the runner's figures, then the tracker's, rewritten during the run and at close.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunSummary {
    /// How the run ended, or `running`.
    pub status: RunStatus,
    /// Iterations completed.
    #[schemars(extend("x-unit" = "iterations"))]
    pub completed_iterations: u64,
    /// Iterations whose record is in the run's event file; null when the run has no local event
    /// file (docs/contract/run-artifacts.md "Storage faults").
    #[serde(default)]
    #[schemars(extend("x-unit" = "iterations"))]
    pub persisted_iterations: Option<u64>,
    /// Iterations whose record was due but never reached the event file (storage faults).
    #[serde(default)]
    #[schemars(extend("x-unit" = "iterations"))]
    pub lost_iterations: u64,
    /// Iterations held in memory awaiting a retry of a failed write (0 once the run is closed).
    #[serde(default)]
    #[schemars(extend("x-unit" = "iterations"))]
    pub pending_iterations: u64,
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
    /// Values of accepted steps that the event file holds as NaN or ±inf (given so, or finite
    /// beyond float32's range), counted whether or not the step was written
    /// (docs/contract/step.md "Input bounds").
    #[serde(default)]
    #[schemars(extend("x-unit" = "count"))]
    pub nonfinite_values: u64,
    /// Non-zero values of accepted steps that float32 holds only as a subnormal or as zero.
    #[serde(default)]
    #[schemars(extend("x-unit" = "count"))]
    pub underflow_values: u64,
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
    /// Each user metric's summary value (its defined statistic: last, max, min or mean; null
    /// when not finite), by tag (docs/contract/schema.md "User metrics").
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub user_metrics: std::collections::BTreeMap<String, Option<f64>>,
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
    /// Why a run closed `completed` was recorded otherwise: each violation of the
    /// completed-run check of its runtime manifest (docs/contract/manifest-and-soak.md
    /// "Checked when recorded"); or why a stalled run was ended `failed` (docs/contract/health.md
    /// "Ending a stalled run"); or the uncaught exception that ended a run `failed`
    /// (docs/contract/run-artifacts.md "Status"). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    /// One entry per resume of this run, oldest first; empty for a run never resumed
    /// (docs/contract/run-artifacts.md "Resume").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed: Vec<ResumeSegment>,
    /// Each remote sink's progress at close: what reached it and what `tally sync` still has to
    /// send (docs/contract/remote-sinks.md "Finishing with a deadline"); empty without one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remote_sinks: Vec<RemoteSinkProgress>,
    /// Each health rule that fired during the run, per tag, in the order they first fired
    /// (docs/contract/health.md "In the logger"); empty when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health: Vec<HealthFinding>,
    /// What the health webhook delivered (docs/contract/health.md "Webhook"); absent without
    /// one. Not named after the webhook: a key with that word is redacted as a secret's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_alerts: Option<HealthWebhookProgress>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One health rule's firings on one tag, folded together (docs/contract/health.md "tally
/// health").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HealthFinding {
    /// The rule (`nonfinite`, `divergence`, `collapse`, `flat_for`, `above`, `below`, `stall`,
    /// `throughput`).
    pub rule: String,
    /// The tag it fired on; absent for `stall`, a rule of the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The step of its first firing.
    pub first_step: i64,
    /// The step of its latest firing.
    pub last_step: i64,
    /// How many values it fired on (for `stall`, how many pauses).
    pub count: u64,
    /// The latest value it fired on: a number, or `"NaN"`, `"Infinity"`, `"-Infinity"` (for
    /// `stall`, the pause in seconds).
    pub last_value: Value,
    /// What its first firing saw.
    pub message: String,
}

/// The health webhook's deliveries: each finding is posted once, retried with back-off, and
/// counted here whether it reached the endpoint or not (docs/contract/health.md "Webhook").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HealthWebhookProgress {
    /// Where findings go: the URL's scheme and host, its path and query (the secret) redacted.
    #[serde(default)]
    pub destination: String,
    /// Findings the endpoint accepted (a 2xx answer).
    #[serde(default)]
    pub posted: u64,
    /// Findings given up on: every attempt failed, the endpoint refused them for good (a 4xx
    /// other than 408 and 429), or close's bound ran out before they were sent.
    #[serde(default)]
    pub undelivered: u64,
    /// The last failed attempt's cause (an HTTP status or a connection error), when one failed.
    #[serde(default)]
    pub last_error: Option<String>,
}

/// A resume of a run: when the logger came back, what it continued after, where it began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResumeSegment {
    /// When the resuming logger started, ISO-8601 UTC.
    pub start_time_utc: String,
    /// The run's status before the resume (`interrupted`, `failed`, ... or `running` when the
    /// earlier logger was killed before it could close).
    pub previous_status: RunStatus,
    /// The last step persisted before the resume (null when none was): every later step
    /// exceeds it.
    pub after_step: Option<i64>,
    /// The first step the resumed logger persisted (null until it persists one).
    pub first_step: Option<i64>,
    /// The step the resume rewound the run to (`resume_from`, a checkpoint's iteration, on the
    /// run's step axis): the resumed logger went on after it, not after `after_step`. Null
    /// when the resume did not rewind.
    #[serde(default)]
    pub rewound_to_step: Option<i64>,
    /// The checkpoint's iteration the resume rewound to (`resume_from`); null without a rewind.
    #[serde(default)]
    pub rewound_to_iteration: Option<u64>,
    /// The step of the purge marker the resumed logger's event file opens with
    /// (`rewound_to_step + 1`): readers drop the earlier files' points from this step on. Null
    /// when no marker was written (no rewind, or no event file).
    #[serde(default)]
    pub purged_from_step: Option<i64>,
}

/// How far a remote sink (W&B) got: it is fed from the run's event files, so what it has not
/// received is still on disk for `tally sync`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RemoteSinkProgress {
    /// The sink's name (`wandb`).
    pub name: String,
    /// The step of the last row the sink acknowledged (null when it has none).
    pub sent_through_step: Option<i64>,
    /// Rows in the event files the sink has not acknowledged: `tally sync` sends them.
    #[schemars(extend("x-unit" = "count"))]
    pub pending: u64,
    /// The sink's last failure, if its last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}
