//! `tally soak [options] -- COMMAND...`: the soak itself is [`tally_soak`]'s; here its outcome
//! becomes the command's exit.

use crate::error::{CliError, Exit};
use std::path::PathBuf;
use tally_soak::Outcome;

/// `tally soak`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The artifact's path (default: PROGRESS_DIR/soak_artifact.json).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Where the run writes its progress (default: the command's training.log_dir=DIR).
    #[arg(long)]
    pub progress_dir: Option<PathBuf>,
    /// Seconds between samples.
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    pub sample_interval_seconds: f64,
    /// Seconds allowed before the first progress byte (else timeout/startup).
    #[arg(long, value_name = "S", default_value_t = 600.0)]
    pub startup_timeout_seconds: f64,
    /// Seconds progress may stay unchanged (else timeout/stale_tick).
    #[arg(long, value_name = "S", default_value_t = 120.0)]
    pub stale_progress_seconds: f64,
    /// Seconds the command's group may outlive it (else resource_leak), and the command a
    /// SIGTERM before SIGKILL.
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    pub post_shutdown_grace_seconds: f64,
    /// Shortest run that can pass.
    #[arg(long, value_name = "S", default_value_t = 0.0)]
    pub min_duration_seconds: f64,
    /// Run the command through `sh -c` (its words joined by spaces).
    #[arg(long)]
    pub shell: bool,
    /// The training command, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args {
            output,
            progress_dir,
            sample_interval_seconds,
            startup_timeout_seconds,
            stale_progress_seconds,
            post_shutdown_grace_seconds,
            min_duration_seconds,
            shell,
            command,
        } = self;
        main(&SoakConfig {
            command,
            shell,
            progress_dir,
            output,
            sample_interval_s: sample_interval_seconds,
            startup_timeout_s: startup_timeout_seconds,
            stale_progress_s: stale_progress_seconds,
            post_shutdown_grace_s: post_shutdown_grace_seconds,
            min_duration_s: min_duration_seconds,
        })
    }
}

pub use tally_soak::SoakConfig;

/// `tally soak`: exit 0 only when the soak passed; a failed soak is an error
/// `soak failed: {reason}; soak artifact: {path}` (exit 1).
pub fn main(c: &SoakConfig) -> Result<Exit, CliError> {
    match tally_soak::run(c)? {
        Outcome::Passed => Ok(Exit::Success),
        Outcome::Failed { reason, artifact } => Err(CliError::Refused(format!(
            "soak failed: {reason}; soak artifact: {}",
            artifact.display()
        ))),
    }
}
