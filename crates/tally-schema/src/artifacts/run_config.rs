//! `run_config.json`: the run identity, the logger facts and the resolved configuration
//! (`docs/contract/run-artifacts.md`, `run_config.json`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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

/// The host the run started on, every figure a display string (`docs/contract/run-artifacts.md`).
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

/// The MLflow replica's settings (docs/contract/remote-sinks.md "MLflow"), as given: an unset
/// one is the replica's default. Secrets in them (a password in the URI) are redacted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub struct MlflowSettings {
    /// The tracking server.
    pub tracking_uri: Option<String>,
    /// The experiment.
    pub experiment: Option<String>,
    /// The MLflow run's name.
    pub run_name: Option<String>,
}

/// The trackio replica's settings (docs/contract/remote-sinks.md "trackio"), as given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub struct TrackioSettings {
    /// The project.
    pub project: Option<String>,
    /// The trackio run's name.
    pub name: Option<String>,
    /// The run's group.
    pub group: Option<String>,
}

/// The `run` section of `run_config.json`: who, where, what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunIdentity {
    /// Algorithm name as given (`sac`, `appo`, ...).
    pub algo: String,
    /// Task name.
    pub task: String,
    /// Simulation backend; empty when the run names none.
    pub sim_backend: String,
    /// The run's display name (`name=`), when given: the panel title and the W&B run name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The run's seed, when given (recorded, never used by the logger).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
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
    /// MLflow replica settings, when the run has that replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mlflow: Option<MlflowSettings>,
    /// trackio replica settings, when the run has that replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trackio: Option<TrackioSettings>,
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
    /// Persistent backend (`tensorboard`, `wandb`, `mlflow`, `trackio`, `none`).
    pub backend: String,
    /// Last iteration; null when the run did not say (no progress or ETA then).
    pub max_iterations: Option<u64>,
    /// Environments per rank; null when the run did not say.
    pub num_envs: Option<u64>,
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
    /// Every user metric the run logged, with its spec (docs/contract/schema.md "User
    /// metrics"), in the order first logged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_metrics: Vec<UserMetric>,
}

/// A user metric as the run defined it (or defaulted it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UserMetric {
    /// The tag.
    pub tag: String,
    /// Unit (free text; `1` when undefined).
    pub unit: String,
    /// How ranks combine it.
    pub reduction: crate::Reduction,
    /// Display label, when defined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Which value the run summary keeps.
    pub summary: crate::SummaryStat,
}
