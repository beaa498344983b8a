//! What a runner submits once per iteration (`StepInput`) and how a logger is configured.
//!
//! A runner submits its metrics **once** per iteration to **one** logger
//! (docs/contract/step.md). Every duration in a `StepInput` is in **seconds**; the schema maps
//! it to the persisted unit.

use crate::resolve::bounds::MAX_COUNT;
use std::borrow::Cow;
use std::path::PathBuf;
use tally_schema::artifacts::{MlflowSettings, TrackioSettings, WandbSettings};
use tally_schema::Profile;
use tally_tfevents::FsyncPolicy;

// The MPS state is host.rs's (it probes it); named here too, where `SystemInfo` carries it.
pub use crate::host::MpsState;

/// A key of a step map: a `&'static str` literal (free) or an owned `String` (from Python).
pub type Key = Cow<'static, str>;

/// System facts of the iteration (the panel's System column; not persisted).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SystemInfo {
    /// Replay buffer size (rows), summed across ranks.
    pub buffer_size: Option<u64>,
    /// Batch size per rank.
    pub batch_size_per_rank: Option<u64>,
    /// Rank-local CUDA MPS state.
    pub cuda_mps: Option<MpsState>,
}

/// What kind of value a [`StepInput`] field holds, as a binding accepts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A non-negative integer (`env_steps`).
    Count,
    /// A map of key → number (`metrics`, `learner`, ...).
    Map,
    /// One optional number.
    Number,
    /// The system facts.
    System,
}

impl FieldKind {
    /// `count`, `map`, `number` or `system`.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Count => "count",
            FieldKind::Map => "map",
            FieldKind::Number => "number",
            FieldKind::System => "system",
        }
    }
}

/// Every [`StepInput`] field after `iteration`, in declaration order: the one list the Python
/// signature, its stub and `tally.distributed` are tested against.
pub const STEP_FIELDS: [(&str, FieldKind); 13] = [
    ("env_steps", FieldKind::Count),
    ("metrics", FieldKind::Map),
    ("learner", FieldKind::Map),
    ("iteration_time", FieldKind::Number),
    ("collector", FieldKind::Map),
    ("collector_inference", FieldKind::Map),
    ("rewards", FieldKind::Map),
    ("episode_return", FieldKind::Number),
    ("episode_length", FieldKind::Number),
    ("timeout_rate", FieldKind::Number),
    ("steps_this_iter", FieldKind::Number),
    ("replay_rows_this_iter", FieldKind::Number),
    ("system", FieldKind::System),
];

/// One iteration's submission. Durations are seconds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepInput {
    /// The learner iteration (1-based for off-policy runners).
    pub iteration: u64,
    /// Cumulative env steps; the backend step axis when > 0, else the iteration.
    pub env_steps: u64,
    /// Learner/runner-owned canonical tags → value (losses, norms, gauges, DP sync, terminations).
    pub metrics: Vec<(Key, f64)>,
    /// Learner phase → seconds (exclusive phases and nested diagnostics of the profile).
    pub learner: Vec<(Key, f64)>,
    /// The measured learner Iter Wall in seconds, when fully measured.
    pub iteration_time: Option<f64>,
    /// Collector phase → seconds (cycle phases, Env Step details, mlp_infer, rollout).
    pub collector: Vec<(Key, f64)>,
    /// Collector inference-flight gauges (queue depth, backlog, in flight, publication lag).
    pub collector_inference: Vec<(Key, f64)>,
    /// Reward term → value (`reward/<term>`).
    pub rewards: Vec<(Key, f64)>,
    /// The collector's recent-100-episode mean return.
    pub episode_return: Option<f64>,
    /// Mean length of recently finished episodes.
    pub episode_length: Option<f64>,
    /// Timeout rate; None until an episode has finished.
    pub timeout_rate: Option<f64>,
    /// Env steps collected this iteration (this rank).
    pub steps_this_iter: Option<f64>,
    /// Replay rows the learner consumed this iteration (this rank).
    pub replay_rows_this_iter: Option<f64>,
    /// System facts.
    pub system: SystemInfo,
}

impl StepInput {
    /// How many of this step's values are NaN or ±inf (its maps and measured figures): what
    /// the `ranks` rule compares across ranks (docs/contract/health.md "Ranks").
    pub fn nonfinite_values(&self) -> u32 {
        let maps = [
            &self.metrics,
            &self.learner,
            &self.collector,
            &self.collector_inference,
            &self.rewards,
        ];
        let in_maps = maps
            .iter()
            .flat_map(|m| m.iter())
            .filter(|(_, v)| !v.is_finite())
            .count();
        let figures = [
            self.iteration_time,
            self.episode_return,
            self.episode_length,
            self.timeout_rate,
            self.steps_this_iter,
            self.replay_rows_this_iter,
        ];
        let in_figures = figures.iter().flatten().filter(|v| !v.is_finite()).count();
        (in_maps + in_figures) as u32
    }

    /// An empty submission for `iteration`.
    pub fn new(iteration: u64) -> Self {
        StepInput {
            iteration,
            ..Default::default()
        }
    }

    /// Set the cumulative env steps.
    pub fn env_steps(mut self, n: u64) -> Self {
        self.env_steps = n;
        self
    }

    /// Add a canonical learner/runner metric.
    pub fn metric(mut self, tag: impl Into<Key>, v: f64) -> Self {
        self.metrics.push((tag.into(), v));
        self
    }

    /// Add a learner phase duration in seconds.
    pub fn learner(mut self, phase: impl Into<Key>, secs: f64) -> Self {
        self.learner.push((phase.into(), secs));
        self
    }

    /// Set the measured Iter Wall in seconds.
    pub fn iteration_time(mut self, secs: f64) -> Self {
        self.iteration_time = Some(secs);
        self
    }

    /// Add a collector phase duration in seconds.
    pub fn collector(mut self, phase: impl Into<Key>, secs: f64) -> Self {
        self.collector.push((phase.into(), secs));
        self
    }

    /// Add a collector inference-flight gauge.
    pub fn collector_inference(mut self, gauge: impl Into<Key>, v: f64) -> Self {
        self.collector_inference.push((gauge.into(), v));
        self
    }

    /// Add a reward term value.
    pub fn reward(mut self, term: impl Into<Key>, v: f64) -> Self {
        self.rewards.push((term.into(), v));
        self
    }

    /// Set the recent-100-episode mean return.
    pub fn episode_return(mut self, v: f64) -> Self {
        self.episode_return = Some(v);
        self
    }

    /// Set the mean episode length.
    pub fn episode_length(mut self, v: f64) -> Self {
        self.episode_length = Some(v);
        self
    }

    /// Set the timeout rate (once an episode has finished).
    pub fn timeout_rate(mut self, v: f64) -> Self {
        self.timeout_rate = Some(v);
        self
    }

    /// Set the env steps collected this iteration.
    pub fn steps_this_iter(mut self, v: f64) -> Self {
        self.steps_this_iter = Some(v);
        self
    }

    /// Set the replay rows consumed this iteration.
    pub fn replay_rows_this_iter(mut self, v: f64) -> Self {
        self.replay_rows_this_iter = Some(v);
        self
    }

    /// Set the system facts.
    pub fn system(mut self, s: SystemInfo) -> Self {
        self.system = s;
        self
    }
}

/// The persistent backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// TensorBoard event files in the run directory (the default).
    #[default]
    TensorBoard,
    /// W&B through its Python SDK (the Python package attaches the sink).
    Wandb,
    /// The event files, and the MLflow replica the Python package attaches
    /// (docs/contract/remote-sinks.md "MLflow").
    Mlflow,
    /// The event files, and the trackio replica the Python package attaches
    /// (docs/contract/remote-sinks.md "trackio").
    Trackio,
    /// No persistent backend (the run directory and its JSON artefacts are still written).
    None,
}

impl Backend {
    /// The configuration name (`tensorboard`, `wandb`, `mlflow`, `trackio`, `none`).
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::TensorBoard => "tensorboard",
            Backend::Wandb => "wandb",
            Backend::Mlflow => "mlflow",
            Backend::Trackio => "trackio",
            Backend::None => "none",
        }
    }

    /// The remote tracker this backend adds beside the event files (its sink's name), if any.
    pub fn tracker(self) -> Option<&'static str> {
        match self {
            Backend::Wandb | Backend::Mlflow | Backend::Trackio => Some(self.as_str()),
            Backend::TensorBoard | Backend::None => None,
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            Backend::TensorBoard,
            Backend::Wandb,
            Backend::Mlflow,
            Backend::Trackio,
            Backend::None,
        ]
        .into_iter()
        .find(|b| b.as_str() == s)
        .ok_or_else(|| {
            format!(
                "unknown logger backend '{s}': expected tensorboard, wandb, mlflow, trackio or none"
            )
        })
    }
}

/// What a failed local write does to the caller (docs/contract/run-artifacts.md "Storage
/// faults"); either way the unwritten steps are kept and retried, and counted in the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnStorageError {
    /// Raise the failure once, through the next `step`/`flush`/`close` (the default).
    #[default]
    Raise,
    /// Report it once on the terminal and stderr; never raise.
    Warn,
}

impl OnStorageError {
    /// The configuration name (`raise`, `warn`).
    pub fn as_str(self) -> &'static str {
        match self {
            OnStorageError::Raise => "raise",
            OnStorageError::Warn => "warn",
        }
    }
}

impl std::str::FromStr for OnStorageError {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [OnStorageError::Raise, OnStorageError::Warn]
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| format!("on_storage_error='{s}': expected 'raise' or 'warn'"))
    }
}

/// What an `rft` run does with a key outside its namespace (docs/contract/rft.md "Keys outside
/// the namespace").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutsideKeys {
    /// Refuse the step naming the key (the default: a script that declares the profile meant
    /// its keys to be checked).
    #[default]
    Refuse,
    /// Write the key as the user's own metric, as a key outside the canonical groups is
    /// (an integration is a guest in a framework's loop: a name it did not choose never stops it).
    User,
}

impl OutsideKeys {
    /// The configuration name (`refuse`, `user`).
    pub fn as_str(self) -> &'static str {
        match self {
            OutsideKeys::Refuse => "refuse",
            OutsideKeys::User => "user",
        }
    }
}

impl std::str::FromStr for OutsideKeys {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [OutsideKeys::Refuse, OutsideKeys::User]
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| format!("outside_keys='{s}': expected 'refuse' or 'user'"))
    }
}

/// Seconds `close()` waits for remote sinks by default before leaving the rest to `tally sync`.
pub const DEFAULT_FINISH_TIMEOUT_SECS: f64 = 5.0;

/// Everything a `Logger` is built from.
#[derive(Debug, Clone)]
pub struct LoggerConfig {
    /// Algorithm (`sac`, `flashsac`, `appo`, `ppo`, ...).
    pub algo: String,
    /// Task name.
    pub task: String,
    /// Simulation backend; empty when the run has none to name (the run directory then has
    /// no `_<sim>` suffix).
    pub sim_backend: String,
    /// The run's display name (panel title, W&B run name); `algo · task · sim` when `None`.
    pub name: Option<String>,
    /// The run's seed, recorded in `run_config.json`.
    pub seed: Option<u64>,
    /// Last iteration (always written to the backend); progress and ETA need it.
    pub max_iterations: Option<u64>,
    /// Environments per rank, when the runner has a fixed number.
    pub num_envs: Option<u64>,
    /// World size (GPUs / ranks).
    pub num_gpus: u32,
    /// Timing profile.
    pub profile: Profile,
    /// With the `rft` profile: a key outside its namespace refused, or written as a user metric.
    pub outside_keys: OutsideKeys,
    /// Persistent backend.
    pub backend: Backend,
    /// `training.log_root`.
    pub log_root: PathBuf,
    /// `training.log_dir` (exact run directory).
    pub log_dir: Option<PathBuf>,
    /// Append to an existing run (`log_dir`, else the latest run of this algo and task under
    /// `log_root`) instead of refusing it; start a new run when there is none
    /// (docs/contract/run-artifacts.md "Resume").
    pub resume: bool,
    /// With `resume`: the iteration of the checkpoint the job restarts from (the last one whose
    /// results it holds). The run is rewound to it: the next accepted iteration is one past it,
    /// and what was logged after it is purged for readers (docs/contract/run-artifacts.md
    /// "Resume" (Rewind)). Signed so that a negative value (a script's arithmetic) meets the
    /// same refusal, naming the run's last iteration, as any iteration the run cannot rewind to.
    pub resume_from: Option<i64>,
    /// Write the backend every N iterations (the final iteration always).
    pub log_interval: u64,
    /// Record a Perfetto trace (docs/contract/trace.md).
    pub trace: bool,
    /// The trace's directory (the run directory when `None`).
    pub trace_output_dir: Option<PathBuf>,
    /// Add each span's thread CPU time to the trace.
    pub trace_thread_time: bool,
    /// The runner times GPU work with CUDA events and adds it to the trace's GPU track.
    pub trace_cuda_events: bool,
    /// The free-form resolved run configuration (secrets are redacted on write).
    pub run_config: serde_json::Value,
    /// W&B settings recorded in run_config.json.
    pub wandb: WandbSettings,
    /// The MLflow replica's settings, recorded in run_config.json (the sink itself is the
    /// Python package's).
    pub mlflow: Option<MlflowSettings>,
    /// The trackio replica's settings, recorded in run_config.json.
    pub trackio: Option<TrackioSettings>,
    /// fsync policy of the event file.
    pub fsync: FsyncPolicy,
    /// Capacity of the bounded queue to the writer thread (steps).
    pub queue_capacity: usize,
    /// Minimum seconds between periodic run_summary.json rewrites (0: after every persisted
    /// step the writer can take cheaply, `summary_pace.rs`).
    pub summary_interval_secs: f64,
    /// Whether a storage fault raises to the caller or only warns.
    pub on_storage_error: OnStorageError,
    /// Most seconds `close` waits for remote sinks (W&B) to send what the event file holds;
    /// the rest is left to `tally sync` (docs/contract/remote-sinks.md).
    pub remote_finish_timeout_secs: f64,
    /// The health rules evaluated on each persisted step (docs/contract/health.md "In the
    /// logger"): the defaults unless changed; [`crate::health::RuleSet::empty`] turns them off.
    pub health: crate::health::RuleSet,
    /// Rules whose new finding makes the next `step` fail with [`crate::Error::HealthStop`].
    pub stop_on: Vec<crate::health::RuleKind>,
    /// Post each new health finding once to this webhook (Slack, Discord), from a thread of
    /// its own (docs/contract/health.md "Webhook"). The URL is a secret: no artefact holds it.
    pub health_webhook: Option<crate::health::webhook::HealthWebhook>,
    /// Seconds after a `stall` finding with still no step before the run is recorded `failed`
    /// and the process ended with exit code 75 (docs/contract/health.md "Ending a stalled
    /// run"); `None` leaves a stalled process alone.
    pub stall_exit_after_secs: Option<f64>,
    /// Sample the process, the machine and each GPU beside the run, under `system/...`
    /// (docs/contract/system-metrics.md); on by default.
    pub system_metrics: bool,
    /// Seconds between system samples (default [`crate::system::DEFAULT_INTERVAL_SECS`]).
    pub system_interval_secs: f64,
    /// A run written to object storage: the run directory is its staging directory and the
    /// event file goes up as segments through this upload (docs/contract/object-storage.md
    /// "Writing").
    pub upload: Option<std::sync::Arc<dyn crate::upload::Upload>>,
}

impl LoggerConfig {
    /// Refuse a configuration the logger cannot honour, naming the setting.
    pub fn check(&self) -> Result<(), crate::Error> {
        let bad = |m: String| Err(crate::Error::Config(m));
        if self.max_iterations == Some(0) {
            return bad("max_iterations must be at least 1 (or unset when unknown)".into());
        }
        if let Some(m) = self.max_iterations.filter(|&m| m > MAX_COUNT) {
            // No iteration beyond MAX_COUNT is accepted (docs/contract/step.md "Input bounds").
            return bad(format!(
                "max_iterations {m} exceeds {MAX_COUNT}, the largest iteration accepted"
            ));
        }
        if let Some(from) = self.resume_from.filter(|_| !self.resume) {
            return bad(format!(
                "resume_from={from} rewinds an existing run and needs resume=True \
                 (LoggerConfig::resume)"
            ));
        }
        if self.upload.is_some() && self.resume {
            return bad(
                "resume=True with a log_dir in object storage: resuming a run in a bucket is not \
                 supported yet (docs/contract/object-storage.md \"Writing\")"
                    .into(),
            );
        }
        if self.num_gpus == 0 {
            return bad("num_gpus must be at least 1".into());
        }
        if self.num_envs == Some(0) {
            return bad("num_envs must be at least 1 (or unset when unknown)".into());
        }
        if let Some(name) = &self.name {
            if name.trim().is_empty() || name.chars().any(char::is_control) {
                return bad(format!(
                    "name {:?} must be non-empty text without control characters",
                    name
                ));
            }
        }
        if let Some(p) = self.health.problem() {
            return bad(format!("health: {p}"));
        }
        if let Some(k) = self.stop_on.iter().find(|k| !self.health.has(**k)) {
            return bad(format!(
                "stop_on: {} is off in health, so it can never stop the run",
                k.as_str()
            ));
        }
        if let Some(p) = self.health_webhook.as_ref().and_then(|w| w.problem()) {
            return bad(format!("health_webhook: {p}"));
        }
        if self.health_webhook.is_some()
            && self.health.tag_rules.is_empty()
            && self.health.stall.is_none()
        {
            return bad(
                "health_webhook: every health rule is off (health=False), so nothing would be \
                 posted"
                    .into(),
            );
        }
        if let Some(g) = self.stall_exit_after_secs {
            if !(g.is_finite() && g >= 0.0) {
                return bad(format!(
                    "stall_exit_after {g} must be a finite number of seconds >= 0"
                ));
            }
            if self.health.stall.is_none() {
                return bad(
                    "stall_exit_after: the stall rule is off in health, so no stall can end \
                     the run"
                        .into(),
                );
            }
        }
        if self.system_metrics {
            crate::system::check_interval("system_interval", self.system_interval_secs)
                .map_err(crate::Error::Config)?;
        }
        if self.log_interval == 0 {
            return bad("log_interval must be at least 1 (1 writes every iteration)".into());
        }
        if !(self.summary_interval_secs.is_finite() && self.summary_interval_secs >= 0.0) {
            return bad(format!(
                "summary_interval_secs {} must be a finite number >= 0",
                self.summary_interval_secs
            ));
        }
        if !(self.remote_finish_timeout_secs.is_finite() && self.remote_finish_timeout_secs >= 0.0)
        {
            return bad(format!(
                "remote_finish_timeout {} must be a finite number of seconds >= 0",
                self.remote_finish_timeout_secs
            ));
        }
        Ok(())
    }

    /// Whether the backend writes iteration `it`: every `log_interval`-th, and always the last
    /// (docs/contract/step.md "Log interval"); the terminal sees every iteration.
    pub fn persists(&self, it: u64) -> bool {
        let last = |m: u64| {
            m.saturating_add(self.profile.first_iteration())
                .saturating_sub(1)
        };
        self.log_interval <= 1
            || it.is_multiple_of(self.log_interval)
            || self.max_iterations.is_some_and(|m| it >= last(m))
    }

    /// A config with the defaults: 1 GPU, sac_family, TensorBoard, `logs/`, interval 1, no
    /// iteration limit, env count, name or seed; `sim_backend` may be empty.
    pub fn new(
        algo: impl Into<String>,
        task: impl Into<String>,
        sim_backend: impl Into<String>,
    ) -> Self {
        LoggerConfig {
            algo: algo.into(),
            task: task.into(),
            sim_backend: sim_backend.into(),
            name: None,
            seed: None,
            max_iterations: None,
            num_envs: None,
            num_gpus: 1,
            profile: Profile::SacFamily,
            outside_keys: OutsideKeys::Refuse,
            backend: Backend::TensorBoard,
            log_root: PathBuf::from("logs"),
            log_dir: None,
            resume: false,
            resume_from: None,
            log_interval: 1,
            trace: false,
            trace_output_dir: None,
            trace_thread_time: false,
            trace_cuda_events: false,
            run_config: serde_json::Value::Object(Default::default()),
            wandb: WandbSettings::default(),
            mlflow: None,
            trackio: None,
            fsync: FsyncPolicy::Never,
            queue_capacity: 1024,
            summary_interval_secs: 0.0,
            on_storage_error: OnStorageError::Raise,
            remote_finish_timeout_secs: DEFAULT_FINISH_TIMEOUT_SECS,
            health: crate::health::RuleSet::defaults(),
            stop_on: Vec::new(),
            health_webhook: None,
            stall_exit_after_secs: None,
            system_metrics: true,
            system_interval_secs: crate::system::DEFAULT_INTERVAL_SECS,
            upload: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adding a field to `StepInput` breaks this destructuring on purpose: add it to
    /// `STEP_FIELDS` too (the bindings are tested against that list).
    #[test]
    fn step_fields_lists_every_field() {
        let StepInput {
            iteration: _,
            env_steps: _,
            metrics: _,
            learner: _,
            iteration_time: _,
            collector: _,
            collector_inference: _,
            rewards: _,
            episode_return: _,
            episode_length: _,
            timeout_rate: _,
            steps_this_iter: _,
            replay_rows_this_iter: _,
            system: _,
        } = StepInput::default();
        let names: Vec<&str> = STEP_FIELDS.iter().map(|(n, _)| *n).collect();
        let debug = format!("{:?}", StepInput::default());
        let mut at = 0;
        for name in &names {
            let found = debug[at..]
                .find(&format!("{name}: "))
                .unwrap_or_else(|| panic!("{name} is not a StepInput field, or is out of order"));
            at += found;
        }
    }
}
