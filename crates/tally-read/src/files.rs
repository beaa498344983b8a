//! Which files make up a run ([`run_event_files`], [`runs_under`], sub-runs) and the order
//! they are read in (`docs/contract/consumers.md` "A run's event files").
//!
//! The one listing rule every reader and front end shares (docs/contract/untrusted-input.md
//! "Special files"): only regular files are event files (a symbolic link to one included); a
//! FIFO, socket, device or link leading nowhere named like one, and a directory that cannot be
//! read, are skipped and told to the [`Observer`], never opened, and the rest is listed. A
//! directory `add_hparams` made below a run is part of that run ([`hparams_dirs`]).

use crate::error::Error;
use crate::observer::{Observer, Quiet};
use crate::recorded::recorded;
use std::collections::BTreeMap;
use std::fs::DirEntry;
use std::path::{Path, PathBuf};
use tally_tfevents::open::special_kind;
use tally_tfevents::{is_event_file_name, open_event_file};

/// One run: its directory and its event files in reading order.
pub type RunDir = (PathBuf, Vec<PathBuf>);

/// The runs `path` stands for, each a directory and its event files in reading order: a
/// file is read alone, as given; a directory holds one run per directory at or below it that
/// has event files (a resumed run's files read as one, [`runs_under`]).
pub fn runs_of(path: &Path, observer: &mut dyn Observer) -> Result<Vec<RunDir>, Error> {
    let meta = std::fs::metadata(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    if !meta.is_dir() {
        if let Some(kind) = special_kind(&meta) {
            return Err(Error::Refused(format!(
                "{}: {kind}, not a regular file: not read",
                path.display()
            )));
        }
        let dir = path.parent().unwrap_or(Path::new(".")).to_owned();
        return Ok(vec![(dir, vec![path.to_owned()])]);
    }
    let found = runs_under(path, observer)?;
    if found.is_empty() {
        return Err(Error::Refused(format!(
            "{}: no events.out.tfevents.* file found",
            path.display()
        )));
    }
    Ok(found)
}

/// Every directory at or below `dir` that holds event files, in path order, each with its
/// files in run order ([`order_run_files`]). A directory's event files are one run. What the
/// listing skips below `dir` is told to `observer`; `dir` itself unreadable is the error.
pub fn runs_under(dir: &Path, observer: &mut dyn Observer) -> Result<Vec<RunDir>, Error> {
    let mut by_dir: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let (subdirs, files) = match dir_entries(&d, observer) {
            Ok(found) => found,
            Err(e) if d != dir => {
                observer.skipped(&d, &format!("directory not read: {}", io_reason(&e)));
                continue;
            }
            Err(e) => return Err(e),
        };
        stack.extend(subdirs);
        if !files.is_empty() {
            by_dir.entry(d).or_default().extend(files);
        }
    }
    // `add_hparams`' directory below a run is that run's hparams, not a run of its own; below a
    // writer that recorded nothing else, it is all there is of the run, and stays one.
    let sessions: Vec<PathBuf> = by_dir
        .iter()
        .filter(|(d, files)| {
            d.parent()
                .and_then(|p| by_dir.get(p))
                .is_some_and(|above| beyond_head(above))
                && recorded(files).hparams.is_some()
        })
        .map(|(d, _)| d.clone())
        .collect();
    for d in sessions {
        by_dir.remove(&d);
    }
    Ok(by_dir
        .into_iter()
        .map(|(d, files)| (d, order_run_files(files)))
        .collect())
}

/// Whether any of `files` holds an event after its first (the `file_version` event every writer
/// starts a file with): a run that recorded something of its own.
fn beyond_head(files: &[PathBuf]) -> bool {
    files.iter().any(|f| {
        open_event_file(f).is_ok_and(|mut events| {
            events.read_event().is_ok_and(|e| e.is_some())
                && events.read_event().is_ok_and(|e| e.is_some())
        })
    })
}

/// The event files of each directory directly below the run in `dir` that starts an hparams
/// session: what torch's and tensorboardX's `add_hparams` write into a directory of their own
/// (named by the time), which belongs to the run above it (TensorBoard's HParams dashboard
/// shows it as that run's session), not a run of its own.
pub fn hparams_dirs(dir: &Path) -> Vec<Vec<PathBuf>> {
    let Ok((subdirs, _)) = dir_entries(dir, &mut Quiet) else {
        return Vec::new();
    };
    subdirs
        .into_iter()
        .filter_map(|d| dir_event_files(&d).ok())
        .filter(|files| !files.is_empty() && recorded(files).hparams.is_some())
        .collect()
}

/// The OS's reason in an I/O error, without the path [`Error::Io`] puts first.
pub(crate) fn io_reason(e: &Error) -> String {
    match e {
        Error::Io { source, .. } => source.to_string(),
        e => e.to_string(),
    }
}

/// What a directory entry is to the listing.
enum Entry {
    /// A directory (not a link to one: links to directories are not followed, so no cycle).
    Dir,
    /// An event file: a regular file named like one, or a link to such a file.
    EventFile,
    /// Named like an event file, but not one to open; why.
    Skip(String),
    /// Anything else.
    Other,
}

/// The listing rule for one entry: its type from the directory (no link followed), then, for a
/// link named like an event file, what it leads to.
fn classify(entry: &DirEntry) -> Entry {
    let ty = match entry.file_type() {
        Ok(ty) => ty,
        Err(e) => return Entry::Skip(format!("not read: {e}")),
    };
    if ty.is_dir() {
        return Entry::Dir;
    }
    if !entry.file_name().to_str().is_some_and(is_event_file_name) {
        return Entry::Other;
    }
    if ty.is_file() {
        return Entry::EventFile;
    }
    if !ty.is_symlink() {
        return match std::fs::symlink_metadata(entry.path()) {
            Ok(meta) => Entry::Skip(format!(
                "{}, not a regular file: not read",
                special_kind(&meta).unwrap_or("not a regular file")
            )),
            Err(e) => Entry::Skip(format!("not read: {e}")),
        };
    }
    match std::fs::metadata(entry.path()) {
        Ok(meta) => match special_kind(&meta) {
            None => Entry::EventFile,
            Some(kind) => Entry::Skip(format!(
                "a symbolic link to {kind}, not to a regular file: not read"
            )),
        },
        Err(e) => Entry::Skip(format!("a symbolic link leading to no file: {e}")),
    }
}

/// One directory's subdirectories and event files, in the order the OS lists them; each entry
/// named like an event file but skipped is told to `observer` ([`classify`]).
pub(crate) fn dir_entries(
    dir: &Path,
    observer: &mut dyn Observer,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), Error> {
    let io = |source| Error::Io {
        path: dir.to_owned(),
        source,
    };
    let (mut subdirs, mut files) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        match classify(&entry) {
            Entry::Dir => subdirs.push(entry.path()),
            Entry::EventFile => files.push(entry.path()),
            Entry::Skip(why) => observer.skipped(&entry.path(), &why),
            Entry::Other => {}
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
/// What the listing skips is not told here: see [`run_event_files_told`].
pub fn run_event_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    run_event_files_told(dir, &mut Quiet)
}

/// [`run_event_files`], with what the listing skips told to `observer` (a command reading one
/// run names them as every reader does).
pub fn run_event_files_told(
    dir: &Path,
    observer: &mut dyn Observer,
) -> Result<Vec<PathBuf>, Error> {
    if !dir.is_dir() {
        return Err(Error::Refused(format!(
            "{}: not a run directory",
            dir.display()
        )));
    }
    one_run(dir, runs_under(dir, observer)?)
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
    with_subruns(dir, runs_under(dir, &mut Quiet)?)
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

/// The event files directly in `dir` (one run's, no sub-run's), in run order; what the listing
/// skips is not told here (the run's listing told it).
pub fn dir_event_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let io = |source| Error::Io {
        path: dir.to_owned(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        if let Entry::EventFile = classify(&entry) {
            files.push(entry.path());
        }
    }
    Ok(order_run_files(files))
}

/// The event files of the run in `dir` ([`run_event_files_told`]), which must exist by now.
pub fn require_run_event_files(
    dir: &Path,
    observer: &mut dyn Observer,
) -> Result<Vec<PathBuf>, Error> {
    let files = run_event_files_told(dir, observer)?;
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
