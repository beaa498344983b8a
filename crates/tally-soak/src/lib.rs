//! The soak monitor behind `tally soak [options] -- COMMAND...`: run a training command in its
//! own process group, sample its process tree, GPU memory and progress files, end it when it
//! stalls or is cancelled, check the run summary it leaves, and write the soak artifact 0.3.0
//! (`docs/contract/manifest-and-soak.md` "The soak monitor"). The command line parses the flags
//! into a [`SoakConfig`], calls [`run`] and turns its [`Outcome`] or [`Error`] into an exit code.
//!
//! `config.rs` owns the settings and their checks, `error.rs` what can fail, `child.rs` the
//! process group, `sample.rs`/`procfs.rs`/`probe.rs` what a sample holds and how it is taken,
//! `samples.rs` which samples are kept, `classify.rs` the verdict, `artifact.rs` the document,
//! `context.rs` where it ran, `watch.rs` the sampling loop and its timeouts, `status.rs` what
//! stderr shows; this file runs them in order.

mod artifact;
mod child;
mod classify;
mod config;
mod context;
mod error;
mod probe;
mod procfs;
mod sample;
mod samples;
mod status;
mod watch;

pub use config::{SoakConfig, CONSOLE_LOG, DEFAULT_OUTPUT, LOG_DIR_ARG};
pub use error::Error;

use classify::{Observed, SummaryRead};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tally_schema::artifacts::{FailureClassification as C, SoakMonitorSettings, SoakStatus};
use tally_schema::conformance::MAX_ARTIFACT_BYTES;

/// How a soak that ran to its verdict ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The soak passed.
    Passed,
    /// The soak failed; the artifact says why.
    Failed {
        /// The artifact's `failure_reason` (`unknown` when it has none).
        reason: String,
        /// Where the artifact was written.
        artifact: PathBuf,
    },
}

/// Run the soak `c` describes and write its artifact. A soak that ran to a verdict is an
/// [`Outcome`], failed or not; an [`Error`] is a soak that could not start, an artifact that
/// could not be written, or a monitor defect.
/// SIGINT and SIGTERM end the command's group while it runs (the soak then fails as
/// `external_cancellation`).
pub fn run(c: &SoakConfig) -> Result<Outcome, Error> {
    c.check()?;
    // Absolute, so the artifact's paths mean the same from anywhere.
    let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
    let progress_dir = absolute(c.progress_dir()?);
    std::fs::create_dir_all(&progress_dir).map_err(|source| Error::Io {
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
        std::fs::create_dir_all(parent).map_err(|source| Error::Io {
            path: parent.to_owned(),
            source,
        })?;
    }
    let console = progress_dir.join(CONSOLE_LOG);

    let stop = Arc::new(AtomicBool::new(false));
    let mut handlers = Vec::new();
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let id = signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| Error::Monitor(format!("cannot install the signal handler: {e}")))?;
        handlers.push(id);
    }
    let result = soak(c, &progress_dir, &output, &console, &stop);
    for id in handlers {
        signal_hook::low_level::unregister(id);
    }
    let a = result?;
    Ok(match a.status {
        SoakStatus::Passed => Outcome::Passed,
        SoakStatus::Failed => Outcome::Failed {
            reason: a.failure_reason.unwrap_or_else(|| "unknown".into()),
            artifact: output,
        },
    })
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
) -> Result<tally_schema::artifacts::SoakArtifact, Error> {
    let nvidia_smi = sample::find_on_path("nvidia-smi");
    let cwd = std::env::current_dir().map_err(|source| Error::Io {
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

    let summary_path = progress_dir.join(tally::run::RUN_SUMMARY_FILE);
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
        return Err(Error::Monitor(format!(
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
