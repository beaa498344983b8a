//! The demo's settings: its flags and `training.KEY=VALUE` overrides, checked into a
//! [`DemoConfig`].

use super::slow::Slowdown;
use crate::error::CliError;
use std::path::PathBuf;
use std::time::Duration;
use tally::{Backend, Profile};

/// The `training.*` overrides the demo understands.
pub const KNOWN_OVERRIDES: [&str; 7] = [
    "training.logger",
    "training.log_root",
    "training.log_dir",
    "training.log_interval",
    "training.trace_enabled",
    "training.trace_output_dir",
    "training.trace_thread_time",
];

/// The algorithms the demo simulates (their profiles come from the `Algo` table).
const DEMO_ALGOS: [&str; 6] = ["sac", "flashsac", "warpsac", "appo", "ppo", "grpo"];

/// The timing profile of a demo algorithm.
pub fn profile_of(algo: &str) -> Result<Profile, CliError> {
    DEMO_ALGOS
        .contains(&algo)
        .then(|| tally::schema::Algo::parse(algo).profile())
        .flatten()
        .ok_or_else(|| {
            CliError::Setting(format!(
                "unknown --algo '{algo}': expected {}",
                DEMO_ALGOS.join(", ")
            ))
        })
}

/// Validated demo settings.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    /// Algorithm: sac, flashsac, warpsac, appo, ppo or grpo.
    pub algo: String,
    /// Task name.
    pub task: String,
    /// Simulation backend name.
    pub sim: String,
    /// Iterations to run.
    pub iterations: u64,
    /// Simulated ranks.
    pub gpus: u32,
    /// Environments per rank.
    pub num_envs: u64,
    /// `--panel auto|on|off`.
    pub panel: tally_tui::Mode,
    /// Seconds between plain summary lines (the demo prints one per second).
    pub plain_every: Duration,
    /// Panic inside the training loop at this iteration (tests terminal restoration).
    pub panic_at: Option<u64>,
    /// Logger settings after overrides.
    pub backend: Backend,
    /// `training.log_root`.
    pub log_root: PathBuf,
    /// `training.log_dir`.
    pub log_dir: Option<PathBuf>,
    /// `training.log_interval`.
    pub log_interval: u64,
    /// `training.trace_enabled`.
    pub trace: bool,
    /// `--slow PHASE=FACTOR` factors on simulated phase durations.
    pub slow: Slowdown,
    /// `training.trace_output_dir`.
    pub trace_output_dir: Option<PathBuf>,
    /// `training.trace_thread_time`.
    pub trace_thread_time: bool,
}

impl DemoConfig {
    /// Validate raw flags and `training.KEY=VALUE` overrides into a config; `wandb_sinks` says
    /// whether the caller can build W&B sinks (only then is `training.logger=wandb` accepted).
    #[allow(clippy::too_many_arguments)]
    pub fn from_flags(
        algo: String,
        task: String,
        sim: String,
        iterations: u64,
        gpus: u32,
        num_envs: u64,
        overrides: &[String],
        wandb_sinks: bool,
    ) -> Result<Self, CliError> {
        let setting = |message: String| Err(CliError::Setting(message));
        profile_of(&algo)?;
        if iterations == 0 {
            return setting("--iterations must be at least 1".into());
        }
        if !(1..=64).contains(&gpus) {
            return setting(format!("--gpus {gpus} is out of range 1..=64"));
        }
        if num_envs == 0 {
            return setting("--num-envs must be at least 1".into());
        }
        let mut c = DemoConfig {
            algo,
            task,
            sim,
            iterations,
            gpus,
            num_envs,
            panel: tally_tui::Mode::Auto,
            plain_every: Duration::from_secs(1),
            panic_at: None,
            backend: Backend::TensorBoard,
            log_root: PathBuf::from("logs"),
            log_dir: None,
            log_interval: 1,
            trace: false,
            slow: Slowdown::default(),
            trace_output_dir: None,
            trace_thread_time: false,
        };
        for o in overrides {
            let Some((key, value)) = o.split_once('=') else {
                return setting(format!(
                    "override '{o}' is not KEY=VALUE (for example training.log_interval=10)"
                ));
            };
            match key {
                "training.logger" => {
                    c.backend = match value {
                        "tensorboard" => Backend::TensorBoard,
                        "none" => Backend::None,
                        "wandb" if wandb_sinks => Backend::Wandb,
                        "wandb" => {
                            return setting("training.logger=wandb needs the W&B SDK: run the same demo through the Python \
                                        package (`python -m tally demo ... training.logger=wandb`)"
                                .into())
                        }
                        _ => return setting(format!("training.logger={value}: expected tensorboard, wandb or none")),
                    }
                }
                "training.log_root" => c.log_root = PathBuf::from(value),
                "training.log_dir" => c.log_dir = Some(PathBuf::from(value)),
                "training.log_interval" => {
                    c.log_interval = value
                        .parse()
                        .ok()
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| CliError::Setting(format!("training.log_interval={value}: expected an integer >= 1")))?
                }
                "training.trace_enabled" => {
                    c.trace = match value {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => return setting(format!("training.trace_enabled={value}: expected true or false")),
                    }
                }
                "training.trace_output_dir" => c.trace_output_dir = Some(PathBuf::from(value)),
                "training.trace_thread_time" => {
                    c.trace_thread_time = match value {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => return setting(format!("training.trace_thread_time={value}: expected true or false")),
                    }
                }
                _ => {
                    return setting(format!("unknown override '{key}': known keys are {}", KNOWN_OVERRIDES.join(", ")));
                }
            }
        }
        Ok(c)
    }
}
