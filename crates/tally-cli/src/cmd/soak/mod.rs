//! `tally soak [options] -- COMMAND...`: run a training command in its own process group,
//! sample its process tree, GPU memory and progress files, end it when it stalls or is
//! cancelled, check the run summary it leaves, and write the soak artifact 0.3.0
//! (`docs/contract/manifest-and-soak.md` "The soak monitor").
//!
//! `child.rs` owns the process group, `sample.rs`/`procfs.rs` what a sample holds,
//! `classify.rs` the verdict, `artifact.rs` the document, `context.rs` where it ran,
//! `watch.rs` the sampling loop and its timeouts, `status.rs` what stderr shows.

mod artifact;
mod child;
mod classify;
mod context;
mod probe;
mod procfs;
mod sample;
mod samples;
mod status;
mod watch;

use crate::cmd::validate::MAX_ARTIFACT_BYTES;
use crate::error::{CliError, Exit};
use classify::{Observed, SummaryRead};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tally_schema::artifacts::{FailureClassification as C, SoakMonitorSettings, SoakStatus};

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
    pub fn check(&self) -> Result<(), CliError> {
        if self.command.first().is_none_or(String::is_empty) {
            return Err(CliError::Usage(
                "tally soak needs a command after `--`".into(),
            ));
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
                return Err(CliError::Usage(format!(
                    "{flag} {v} must be {want} seconds"
                )));
            }
        }
        Ok(())
    }

    /// The progress directory: the flag, else the last `training.log_dir=DIR` of the command.
    pub fn progress_dir(&self) -> Result<PathBuf, CliError> {
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
                CliError::Usage(format!(
                    "--progress-dir is required: the command has no {LOG_DIR_ARG}DIR argument \
                     to infer it from"
                ))
            })
    }
}

/// `tally soak`: exit 0 only when the soak passed; a failed soak is an error
/// `soak failed: {reason}; soak artifact: {path}` (exit 1).
pub fn main(c: &SoakConfig) -> Result<Exit, CliError> {
    c.check()?;
    // Absolute, so the artifact's paths mean the same from anywhere.
    let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
    let progress_dir = absolute(c.progress_dir()?);
    std::fs::create_dir_all(&progress_dir).map_err(|source| CliError::Io {
        path: progress_dir.clone(),
        source,
    })?;
    let output = absolute(
        c.output
            .clone()
            .unwrap_or_else(|| progress_dir.join(DEFAULT_OUTPUT)),
    );
    // Refuse an output that cannot be written before the run, not after hours of it.
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| CliError::Io {
            path: parent.to_owned(),
            source,
        })?;
    }
    let console = progress_dir.join(CONSOLE_LOG);

    let stop = Arc::new(AtomicBool::new(false));
    let mut handlers = Vec::new();
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let id = signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| CliError::Run(format!("cannot install the signal handler: {e}")))?;
        handlers.push(id);
    }
    let result = soak(c, &progress_dir, &output, &console, &stop);
    for id in handlers {
        signal_hook::low_level::unregister(id);
    }
    let a = result?;
    match a.status {
        SoakStatus::Passed => Ok(Exit::Success),
        SoakStatus::Failed => Err(CliError::Refused(format!(
            "soak failed: {}; soak artifact: {}",
            a.failure_reason.as_deref().unwrap_or("unknown"),
            output.display()
        ))),
    }
}

fn utc_now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Run, watch, classify and write the artifact.
fn soak(
    c: &SoakConfig,
    progress_dir: &Path,
    output: &Path,
    console: &Path,
    stop: &AtomicBool,
) -> Result<tally_schema::artifacts::SoakArtifact, CliError> {
    let nvidia_smi = sample::find_on_path("nvidia-smi");
    let cwd = std::env::current_dir().map_err(|source| CliError::Io {
        path: PathBuf::from("."),
        source,
    })?;
    // The context probes (git, python, torch) run beside the command, not before it.
    let context = {
        let smi = nvidia_smi.clone();
        let cwd = cwd.clone();
        std::thread::spawn(move || context::collect(&cwd, smi.as_deref()))
    };
    let sampler = sample::Sampler {
        proc_root: PathBuf::from("/proc"),
        progress_dir: progress_dir.to_owned(),
        excluded: vec![console.to_owned(), output.to_owned()],
        nvidia_smi,
    };
    let interval = Duration::from_secs_f64(c.sample_interval_s);
    let grace = Duration::from_secs_f64(c.post_shutdown_grace_s);
    let started_at_utc = utc_now();
    let start = Instant::now();
    let mut status = status::Status::new();
    // Measured before the command starts: what is already there is not its progress.
    let initial = sample::progress(progress_dir, &sampler.excluded).bytes_total;
    let clock = watch::ProgressClock::new(c.startup_timeout_s, c.stale_progress_s, initial);

    let (mut group, watched) = match child::spawn(&c.command, c.shell, console) {
        Ok(mut g) => {
            let w = watch::watch(&mut g, &sampler, interval, clock, stop, &mut status, start);
            (Some(g), w)
        }
        Err(e) => (
            None,
            watch::Watched {
                monitor: Some((
                    C::MonitorFailure,
                    format!("cannot start {}: {e}", c.command[0]),
                )),
                samples: samples::SampleLog::new(samples::MAX_UNITS),
                seen: Default::default(),
            },
        ),
    };
    let watch::Watched {
        mut monitor,
        samples,
        seen,
    } = watched;

    // End the command when the monitor stopped watching it; then wait out the grace period
    // for the rest of its group, and kill what is left.
    let mut returncode = None;
    let mut residual = Vec::new();
    if let Some(g) = group.as_mut() {
        if let Some((_, reason)) = monitor.as_mut().filter(|_| g.status.is_none()) {
            if let Err(e) = g.terminate(grace) {
                reason.push_str(&format!(" (ending the command's group failed: {e})"));
            }
        } else if let Some(st) = g.status {
            returncode = child::returncode(st);
        }
    }
    let duration_s = start.elapsed().as_secs_f64();
    let ended_at_utc = utc_now();
    if let Some(g) = &group {
        let deadline = Instant::now() + grace;
        loop {
            match procfs::sample_survivors(&sampler.proc_root, g.pgid, &seen) {
                Ok(left) if left.is_empty() => break,
                Ok(left) if Instant::now() >= deadline => {
                    residual = left;
                    break;
                }
                Ok(_) => std::thread::sleep(child::POLL),
                Err(e) => {
                    monitor.get_or_insert((
                        C::MonitorFailure,
                        format!("cannot list the command's process group: {e}"),
                    ));
                    break;
                }
            }
        }
        let escaped: Vec<u32> = residual
            .iter()
            .filter_map(|p| u32::try_from(p.pid).ok())
            .collect();
        g.kill_rest(&escaped);
    }

    let summary_path = progress_dir.join(crate::cmd::validate::RUN_SUMMARY_FILE);
    let (summary_read, run_summary) = read_summary(&summary_path);
    let observed = Observed {
        monitor,
        returncode,
        duration_s,
        min_duration_s: c.min_duration_s,
        residual: residual.len(),
        grace_s: c.post_shutdown_grace_s,
    };
    let failure = classify::classify(&observed, &summary_read);
    // Producer addition: every how many samples one is kept (1 unless the soak was long).
    let mut monitor_extra = Map::new();
    monitor_extra.insert("sample_stride".into(), Value::from(samples.stride()));
    let parts = artifact::Parts {
        command: c.command.clone(),
        // A probe that panicked leaves the context bare; the samples are not lost for it.
        context: context.join().unwrap_or_else(|_| context::bare(&cwd)),
        started_at_utc,
        ended_at_utc,
        duration_s,
        returncode,
        monitor: SoakMonitorSettings {
            sample_interval_s: c.sample_interval_s,
            startup_timeout_s: c.startup_timeout_s,
            stale_progress_s: c.stale_progress_s,
            post_shutdown_grace_s: c.post_shutdown_grace_s,
            min_duration_s: c.min_duration_s,
            sample_count: samples.taken(),
            extra: monitor_extra,
        },
        peaks: samples.peaks(),
        samples: samples.into_samples(),
        residual,
        run_summary,
        console_log: console.to_string_lossy().into_owned(),
    };
    let (a, violations) = artifact::decide(&parts, failure);
    tally::atomic::write_json_atomic(output, &a)?;
    status.finish(&a, output);
    if !violations.is_empty() {
        let listed: Vec<String> = violations.iter().map(ToString::to_string).collect();
        return Err(CliError::Run(format!(
            "the soak artifact {} breaks its own contract (a monitor defect): {}",
            output.display(),
            listed.join("; ")
        )));
    }
    Ok(a)
}

/// `run_summary.json` for the classifier, and as the artifact embeds it: the document, its
/// text when it is not JSON, null when there is none.
fn read_summary(path: &Path) -> (SummaryRead, Option<Value>) {
    // As `tally validate` reads it: a regular file of bounded size (a FIFO would block).
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (SummaryRead::Missing, None),
        Ok(m) if !m.is_file() => {
            let why = format!("{}: not a regular file", path.display());
            return (SummaryRead::Unreadable(why), None);
        }
        Ok(m) if m.len() > MAX_ARTIFACT_BYTES => {
            let why = format!(
                "{}: {} bytes, more than the {MAX_ARTIFACT_BYTES} an artifact may hold",
                path.display(),
                m.len()
            );
            return (SummaryRead::Unreadable(why), None);
        }
        _ => {}
    }
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (SummaryRead::Missing, None),
        Err(e) => (
            SummaryRead::Unreadable(format!("{}: {e}", path.display())),
            None,
        ),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(v) => (SummaryRead::Json(v.clone()), Some(v)),
            Err(e) => (
                SummaryRead::Unreadable(format!("{}: not JSON: {e}", path.display())),
                Some(Value::String(text)),
            ),
        },
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
