//! Which files make up a run ([`run_event_files`], [`runs_under`], sub-runs) and the order
//! they are read in (`docs/contract/consumers.md` "A run's event files").

use crate::error::Error;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tally_tfevents::is_event_file_name;

/// One run: its directory and its event files in reading order.
pub type RunDir = (PathBuf, Vec<PathBuf>);

/// The runs `path` stands for, each a directory and its event files in reading order: a
/// file is read alone, as given; a directory holds one run per directory at or below it that
/// has event files (a resumed run's files read as one, [`runs_under`]).
pub fn runs_of(path: &Path) -> Result<Vec<RunDir>, Error> {
    let meta = std::fs::metadata(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    if meta.is_file() {
        let dir = path.parent().unwrap_or(Path::new(".")).to_owned();
        return Ok(vec![(dir, vec![path.to_owned()])]);
    }
    let found = runs_under(path)?;
    if found.is_empty() {
        return Err(Error::Refused(format!(
            "{}: no events.out.tfevents.* file found",
            path.display()
        )));
    }
    Ok(found)
}

/// Every directory at or below `dir` that holds event files, in path order, each with its
/// files in run order ([`order_run_files`]). A directory's event files are one run.
pub fn runs_under(dir: &Path) -> Result<Vec<RunDir>, Error> {
    let mut by_dir: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let (subdirs, files) = dir_entries(&d)?;
        stack.extend(subdirs);
        if !files.is_empty() {
            by_dir.entry(d).or_default().extend(files);
        }
    }
    Ok(by_dir
        .into_iter()
        .map(|(d, files)| (d, order_run_files(files)))
        .collect())
}

/// One directory's subdirectories and event files, in the order the OS lists them.
pub(crate) fn dir_entries(dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), Error> {
    let io = |source| Error::Io {
        path: dir.to_owned(),
        source,
    };
    let (mut subdirs, mut files) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let p = entry.path();
        let ty = entry.file_type().map_err(|source| Error::Io {
            path: p.clone(),
            source,
        })?;
        if ty.is_dir() {
            subdirs.push(p);
        } else if entry.file_name().to_str().is_some_and(is_event_file_name) {
            files.push(p);
        }
    }
    Ok((subdirs, files))
}

/// The event files of the run in `dir`, in run order; empty when it has none yet. Every
/// command that reads one run (`extract`, `scaling`, `watch`) finds its events here.
///
/// The rule: a run is one directory's `events.out.tfevents.*` files (a resumed run adds a
/// file beside the first). `dir` is that directory, or a directory with exactly one such
/// directory at or below it; several are several runs, and a one-run reader refuses to pick.
pub fn run_event_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    if !dir.is_dir() {
        return Err(Error::Refused(format!(
            "{}: not a run directory",
            dir.display()
        )));
    }
    one_run(dir, runs_under(dir)?)
}

/// The one run of `runs` (those found at or below `dir`), or the refusal naming them.
fn one_run(dir: &Path, mut runs: Vec<RunDir>) -> Result<Vec<PathBuf>, Error> {
    match runs.len() {
        0 => Ok(Vec::new()),
        1 => Ok(runs.pop().map(|(_, files)| files).unwrap_or_default()),
        n => Err(Error::Refused(format!(
            "{}: event files of {n} runs found ({}): pass one run directory",
            dir.display(),
            runs.iter()
                .map(|(d, _)| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A run's event files and its sub-runs: the directories below it holding event files of
/// their own, as torch's and tensorboardX's `add_scalars` make (one per series, named
/// `<main_tag>_<key>`). Each sub-run is named relative to the run's directory.
#[derive(Debug, Default)]
pub struct RunWithSubruns {
    /// The run's own files, in run order.
    pub files: Vec<PathBuf>,
    /// Each sub-run's name (relative to the run, `/`-separated) and directory, in path order.
    pub subruns: Vec<(String, PathBuf)>,
}

/// The run in `dir` with its sub-runs (`tally watch`): as [`run_event_files`], except that
/// directories with event files below the run's own directory are its sub-runs rather than
/// other runs. Directories of which none holds all the others are still several runs, refused
/// naming them.
pub fn run_with_subruns(dir: &Path) -> Result<RunWithSubruns, Error> {
    if !dir.is_dir() {
        return run_event_files(dir).map(|files| RunWithSubruns {
            files,
            subruns: Vec::new(),
        });
    }
    with_subruns(dir, runs_under(dir)?)
}

/// [`run_with_subruns`] of the runs found at or below `dir` (in path order, each with its files
/// in run order), however they were listed.
pub(crate) fn with_subruns(dir: &Path, found: Vec<RunDir>) -> Result<RunWithSubruns, Error> {
    // Path order puts a directory before everything below it.
    let mut runs = found.iter();
    let Some((main, files)) = runs.next() else {
        return Ok(RunWithSubruns::default());
    };
    let mut subruns = Vec::new();
    for (sub, _) in runs {
        let Ok(rel) = sub.strip_prefix(main) else {
            // Siblings: several runs.
            return one_run(dir, found).map(|files| RunWithSubruns {
                files,
                subruns: Vec::new(),
            });
        };
        let name: Vec<_> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect();
        subruns.push((name.join("/"), sub.clone()));
    }
    Ok(RunWithSubruns {
        files: files.clone(),
        subruns,
    })
}

/// The event files directly in `dir` (one run's, no sub-run's), in run order.
pub fn dir_event_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let io = |source| Error::Io {
        path: dir.to_owned(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        if entry.file_name().to_str().is_some_and(is_event_file_name) && entry.path().is_file() {
            files.push(entry.path());
        }
    }
    Ok(order_run_files(files))
}

/// The event files of the run in `dir` ([`run_event_files`]), which must exist by now.
pub fn require_run_event_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let files = run_event_files(dir)?;
    if files.is_empty() {
        return Err(Error::Refused(format!(
            "{}: no events.out.tfevents.* file: pass one run directory",
            dir.display()
        )));
    }
    Ok(files)
}

/// Sorts one run's files by their first event's wall time (the `file_version` event a
/// writer puts first), then by name. A file whose first event cannot be read yet (empty, or
/// damaged at its start) sorts after every dated file; reading it reports the problem.
pub fn order_run_files(files: Vec<PathBuf>) -> Vec<PathBuf> {
    // The one rule, shared with the logger's remote sinks.
    tally::remote::order_event_files(files)
}
