//! The run directory: `<log_root>/<algo_log_name>/<task>/<YYYY-MM-DD_HH-MM-SS>_<sim_backend>`.
//!
//! Runs live under `logs/<algo.algo_log_name>/<task>/`, one directory per run named by its
//! local start time and simulation backend (no suffix when the run names no simulator), unless
//! `training.log_root` or `training.log_dir` overrides it (docs/contract/run-artifacts.md).

use crate::error::{Error, Result};
use chrono::{DateTime, TimeZone};
use std::path::{Path, PathBuf};

/// The scheme of a path written as a URL (`s3://bkt/run` gives `s3`), `None` for a local path:
/// the one rule by which every reader and writer tells an object-store URL from a path, so a
/// URL is never taken as a local directory named `s3:` (docs/contract/object-storage.md).
pub fn url_scheme(path: &Path) -> Option<&str> {
    let text = path.to_str()?;
    let (scheme, _) = text.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// Where a run's directory goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDirSpec {
    /// Algorithm (`ppo`, `appo`, `sac`, `flashsac`, ...), mapped to its `algo_log_name`.
    pub algo: String,
    /// Task name; one path component.
    pub task: String,
    /// Simulation backend; suffix of the directory name (none when empty).
    pub sim_backend: String,
    /// `training.log_root`: the root of all runs (default `logs`).
    pub log_root: PathBuf,
    /// `training.log_dir`: the exact run directory, overriding the layout.
    pub log_dir: Option<PathBuf>,
}

impl RunDirSpec {
    /// A spec under the default root `logs`.
    pub fn new(
        algo: impl Into<String>,
        task: impl Into<String>,
        sim_backend: impl Into<String>,
    ) -> Self {
        RunDirSpec {
            algo: algo.into(),
            task: task.into(),
            sim_backend: sim_backend.into(),
            log_root: PathBuf::from("logs"),
            log_dir: None,
        }
    }
}

/// The `algo_log_name` of an algorithm (the `Algo` table's, else the name lower-cased).
pub fn algo_log_name(algo: &str) -> Result<String> {
    validate_component("algo", algo)?;
    Ok(tally_schema::Algo::parse(algo).log_name().into_owned())
}

/// Reject names that would escape the log root or make an unusable path component.
pub fn validate_component(kind: &'static str, value: &str) -> Result<()> {
    let reason = if value.is_empty() {
        Some("it is empty")
    } else if value == "." || value == ".." {
        Some("'.' and '..' would escape the log root")
    } else if value.contains('/') || value.contains('\\') {
        Some("a path separator would escape the log root")
    } else if value.contains('\0') {
        Some("it contains a NUL byte")
    } else if value.chars().any(char::is_control) {
        Some("it contains a control character")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(Error::InvalidName {
            kind,
            value: value.escape_default().to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The directory name of a run started at `start`: `YYYY-MM-DD_HH-MM-SS_<sim_backend>`, or
/// `YYYY-MM-DD_HH-MM-SS` when the run names no simulator.
pub fn run_dir_name<Tz: TimeZone>(start: &DateTime<Tz>, sim_backend: &str) -> String
where
    Tz::Offset: std::fmt::Display,
{
    let stamp = start.format("%Y-%m-%d_%H-%M-%S");
    if sim_backend.is_empty() {
        stamp.to_string()
    } else {
        format!("{stamp}_{sim_backend}")
    }
}

/// The directory that holds every run of `spec`'s algo and task: `<log_root>/<algo_log_name>/<task>`.
pub fn runs_parent(spec: &RunDirSpec) -> Result<PathBuf> {
    let log_name = algo_log_name(&spec.algo)?;
    validate_component("task", &spec.task)?;
    Ok(spec.log_root.join(log_name).join(&spec.task))
}

/// Create the run directory for `spec` started at `start` and return its path.
///
/// Two runs started in the same second never share a directory: the directory is created
/// with `create_dir` (which fails if it exists), and on collision a `_1`, `_2`, ... suffix is
/// tried. An explicit `log_dir` is created if needed and refused if it already holds a run.
pub fn create_run_dir<Tz: TimeZone>(spec: &RunDirSpec, start: &DateTime<Tz>) -> Result<PathBuf>
where
    Tz::Offset: std::fmt::Display,
{
    let parent = runs_parent(spec)?;
    if !spec.sim_backend.is_empty() {
        validate_component("sim backend", &spec.sim_backend)?;
    }
    if let Some(dir) = &spec.log_dir {
        if let Some(scheme) = url_scheme(dir) {
            return Err(Error::Config(format!(
                "log_dir {}: a {scheme}:// URL; the Rust Logger writes to object storage only \
                 through an upload it is handed (LoggerConfig::upload; tally.Logger in Python \
                 does this): write to a local directory and copy it to the bucket \
                 (docs/contract/object-storage.md \"Writing\")",
                dir.display()
            )));
        }
        if dir.as_os_str().is_empty() {
            return Err(Error::InvalidName {
                kind: "log_dir",
                value: String::new(),
                reason: "it is empty",
            });
        }
        std::fs::create_dir_all(dir).map_err(Error::io("create run directory", dir))?;
        for taken in ["run_summary.json", "run_config.json"] {
            if dir.join(taken).exists() {
                return Err(Error::RunDirTaken(dir.clone(), taken));
            }
        }
        return Ok(dir.clone());
    }
    std::fs::create_dir_all(&parent).map_err(Error::io("create run directory", &parent))?;
    let base = run_dir_name(start, &spec.sim_backend);
    for n in 0..10_000u32 {
        let name = if n == 0 {
            base.clone()
        } else {
            format!("{base}_{n}")
        };
        let path = parent.join(name);
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io("create run directory", &path)(e)),
        }
    }
    Err(Error::io("create run directory", parent.join(base))(
        std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "10000 runs already started in this second",
        ),
    ))
}

/// A new run's directory while the logger is being set up: dropped with `dir` still set (a
/// failed start), it takes back what the start wrote, so a refused start leaves no
/// half-created run behind (docs/contract/run-artifacts.md "Storage faults"). A directory the
/// user named and that already existed stays, without the artefacts this start wrote in it
/// (`create_run_dir` refused it if they were there before).
pub struct Unstarted {
    /// The run directory, until the start succeeds (`None`: keep everything).
    pub dir: Option<PathBuf>,
    /// Whether the directory existed before this start.
    pub existed: bool,
}

impl Drop for Unstarted {
    fn drop(&mut self) {
        let Some(dir) = self.dir.take() else { return };
        if !self.existed {
            let _ = std::fs::remove_dir_all(&dir);
            return;
        }
        for ours in [
            crate::run::RUN_CONFIG_FILE,
            crate::run::RUN_SUMMARY_FILE,
            crate::room::ROOM_FILE,
        ] {
            let _ = std::fs::remove_file(dir.join(ours));
        }
    }
}
