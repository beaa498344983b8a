//! A soak's settings, as the flags of `tally soak` give them, and the checks they must pass
//! before the command starts.

use crate::error::Error;
use std::path::PathBuf;

/// The console log's name in the progress directory.
pub const CONSOLE_LOG: &str = "soak-console.log";
/// The artifact's default name in the progress directory.
pub const DEFAULT_OUTPUT: &str = "soak_artifact.json";
/// The command argument the progress directory is inferred from.
pub const LOG_DIR_ARG: &str = "training.log_dir=";

/// A soak's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakConfig {
    /// The command and its arguments.
    pub command: Vec<String>,
    /// Run it through `sh -c` (its words joined by spaces).
    pub shell: bool,
    /// Where the run writes (None: inferred from `training.log_dir=DIR`).
    pub progress_dir: Option<PathBuf>,
    /// The artifact's path (None: `<progress_dir>/soak_artifact.json`).
    pub output: Option<PathBuf>,
    /// Seconds between samples.
    pub sample_interval_s: f64,
    /// Seconds allowed before the first progress byte.
    pub startup_timeout_s: f64,
    /// Seconds progress may stay unchanged.
    pub stale_progress_s: f64,
    /// Seconds the group may outlive the command (and the command a SIGTERM).
    pub post_shutdown_grace_s: f64,
    /// Shortest run that can pass.
    pub min_duration_s: f64,
}

impl SoakConfig {
    /// Refuse settings that cannot be honoured, naming the flag.
    pub fn check(&self) -> Result<(), Error> {
        if self.command.first().is_none_or(String::is_empty) {
            return Err(Error::Usage("tally soak needs a command after `--`".into()));
        }
        let seconds = [
            ("--sample-interval-seconds", self.sample_interval_s, false),
            ("--startup-timeout-seconds", self.startup_timeout_s, true),
            ("--stale-progress-seconds", self.stale_progress_s, true),
            (
                "--post-shutdown-grace-seconds",
                self.post_shutdown_grace_s,
                true,
            ),
            ("--min-duration-seconds", self.min_duration_s, true),
        ];
        for (flag, v, zero_ok) in seconds {
            let ok = v.is_finite() && (v > 0.0 || (zero_ok && v == 0.0)) && v < 1e9;
            if !ok {
                let want = if zero_ok {
                    "zero or more"
                } else {
                    "a positive number of"
                };
                return Err(Error::Usage(format!("{flag} {v} must be {want} seconds")));
            }
        }
        Ok(())
    }

    /// The progress directory: the flag, else the last `training.log_dir=DIR` of the command.
    pub fn progress_dir(&self) -> Result<PathBuf, Error> {
        if let Some(d) = &self.progress_dir {
            return Ok(d.clone());
        }
        self.command
            .iter()
            .rev()
            .find_map(|a| a.strip_prefix(LOG_DIR_ARG))
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "--progress-dir is required: the command has no {LOG_DIR_ARG}DIR argument \
                     to infer it from"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(command: &[&str]) -> SoakConfig {
        SoakConfig {
            command: command.iter().map(|s| (*s).to_owned()).collect(),
            shell: false,
            progress_dir: None,
            output: None,
            sample_interval_s: 5.0,
            startup_timeout_s: 600.0,
            stale_progress_s: 120.0,
            post_shutdown_grace_s: 5.0,
            min_duration_s: 0.0,
        }
    }

    #[test]
    fn progress_dir_from_the_last_log_dir_argument() {
        let c = config(&["train", "training.log_dir=/a", "x=1", "training.log_dir=/b"]);
        assert_eq!(c.progress_dir().unwrap(), PathBuf::from("/b"));
        let err = config(&["train", "x=1"])
            .progress_dir()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--progress-dir") && err.contains("training.log_dir="),
            "{err}"
        );
        let mut c = config(&["train"]);
        c.progress_dir = Some("/p".into());
        assert_eq!(c.progress_dir().unwrap(), PathBuf::from("/p"));
    }

    #[test]
    fn settings_name_the_bad_flag() {
        let mut c = config(&["train"]);
        c.sample_interval_s = 0.0;
        assert!(c
            .check()
            .unwrap_err()
            .to_string()
            .contains("--sample-interval-seconds"));
        let mut c = config(&["train"]);
        c.stale_progress_s = f64::NAN;
        assert!(c
            .check()
            .unwrap_err()
            .to_string()
            .contains("--stale-progress-seconds"));
        let mut c = config(&["train"]);
        c.min_duration_s = 0.0;
        assert!(c.check().is_ok());
    }
}
