//! [`RunListing`]: a run's directory tree listed again and again as `tally watch` polls it,
//! at the cost of what changed (docs/contract/panel.md "tally watch").
//!
//! Each listing gives what [`run_with_subruns`](crate::files::run_with_subruns) gives (the same
//! files in the same run order); only the work differs. A directory is read again only when its
//! modification time changed (or was too recent to trust), and a file's first event (its run
//! order key) is looked for only while it has none, when its size changed: a directory of
//! 3 000 event files that hold nothing yet costs a `stat` per file, not an open and a read.
//! What the listing rule skips ([`crate::files`]: special files, links leading nowhere,
//! directories that cannot be read) is kept for [`RunListing::skipped`], the rest listed.

use crate::error::Error;
use crate::files::{dir_entries, io_reason, with_subruns, RunDir, RunWithSubruns};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A directory's modification time is trusted once this much older than the listing that
/// read it: a file created in the same clock tick as that listing leaves the time unchanged.
const SETTLED: Duration = Duration::from_secs(2);

/// One event file: its size when last looked at, and its first event's wall time once known.
#[derive(Debug)]
struct Listed {
    path: PathBuf,
    len: Option<u64>,
    wall: Option<f64>,
}

/// One directory as last read.
#[derive(Debug, Default)]
struct Dir {
    /// Its modification time, when it can be trusted not to hide a later change.
    settled: Option<SystemTime>,
    subdirs: Vec<PathBuf>,
    files: Vec<Listed>,
    /// What its listing skipped, each path with why (itself, when it could not be read).
    skipped: Vec<(PathBuf, String)>,
}

/// A run's tree, kept between listings.
#[derive(Debug)]
pub struct RunListing {
    root: PathBuf,
    dirs: BTreeMap<PathBuf, Dir>,
    /// Each directory's event files in run order, as last listed.
    last: BTreeMap<PathBuf, Vec<PathBuf>>,
}

impl RunListing {
    /// The run (with its sub-runs) at `root`, not listed yet.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        RunListing {
            root: root.into(),
            dirs: BTreeMap::new(),
            last: BTreeMap::new(),
        }
    }

    /// The run and its sub-runs now, as [`run_with_subruns`](crate::files::run_with_subruns)
    /// finds them.
    pub fn list(&mut self) -> Result<RunWithSubruns, Error> {
        if !self.root.is_dir() {
            return crate::files::run_with_subruns(&self.root);
        }
        let mut found: Vec<RunDir> = Vec::new();
        let mut seen = Vec::new();
        let mut stack = vec![self.root.clone()];
        while let Some(d) = stack.pop() {
            let dir = self.dirs.entry(d.clone()).or_default();
            if let Err(e) = refresh(&d, dir) {
                if d == self.root {
                    return Err(e);
                }
                // Skipped and named, the rest listed; read again at the next listing.
                *dir = Dir {
                    skipped: vec![(d.clone(), format!("directory not read: {}", io_reason(&e)))],
                    ..Dir::default()
                };
            }
            stack.extend(dir.subdirs.iter().cloned());
            let mut keyed: Vec<(f64, PathBuf)> = dir
                .files
                .iter_mut()
                .map(|f| (f.key(), f.path.clone()))
                .collect();
            if !keyed.is_empty() {
                tally::remote::sort_keyed(&mut keyed);
                found.push((d.clone(), keyed.into_iter().map(|(_, p)| p).collect()));
            }
            seen.push(d);
        }
        // Directories gone since: forgotten.
        self.dirs.retain(|d, _| seen.contains(d));
        found.sort_by(|a, b| a.0.cmp(&b.0));
        self.last = found.iter().cloned().collect();
        with_subruns(&self.root, found)
    }

    /// What the last listing skipped, each path with why, in path order.
    pub fn skipped(&self) -> Vec<(PathBuf, String)> {
        self.dirs.values().flat_map(|d| d.skipped.clone()).collect()
    }

    /// The event files directly in `dir` (a sub-run's), in run order, as last listed.
    pub fn files_of(&self, dir: &Path) -> Vec<PathBuf> {
        self.last.get(dir).cloned().unwrap_or_default()
    }
}

impl Listed {
    /// The run order key: the first event's wall time, looked for again only when the file's
    /// size changed since the last look (a file that holds no event yet).
    fn key(&mut self) -> f64 {
        if self.wall.is_none() {
            let len = std::fs::metadata(&self.path).ok().map(|m| m.len());
            if len != self.len {
                self.len = len;
                if len.is_some_and(|l| l > 0) {
                    self.wall = tally::remote::first_event_wall(&self.path);
                }
            }
        }
        self.wall.unwrap_or(f64::INFINITY)
    }
}

/// Read `path` again into `dir` unless its settled modification time says nothing changed.
fn refresh(path: &Path, dir: &mut Dir) -> Result<(), Error> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    if modified.is_some() && modified == dir.settled {
        return Ok(());
    }
    let now = SystemTime::now();
    let mut skipped = Vec::new();
    let (subdirs, names) = dir_entries(path, &mut skipped)?;
    dir.skipped = skipped;
    let mut old: BTreeMap<PathBuf, Listed> = std::mem::take(&mut dir.files)
        .into_iter()
        .map(|f| (f.path.clone(), f))
        .collect();
    dir.files = names
        .into_iter()
        .map(|p| {
            old.remove(&p).unwrap_or(Listed {
                path: p,
                len: None,
                wall: None,
            })
        })
        .collect();
    dir.subdirs = subdirs;
    dir.settled = modified.filter(|m| now.duration_since(*m).is_ok_and(|age| age >= SETTLED));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::RunListing;
    use crate::files::run_with_subruns;
    use tally_tfevents::{encode_scalar_event, RecordWriter};

    fn record(step: i64, wall: f64) -> Vec<u8> {
        let mut data = Vec::new();
        encode_scalar_event(step, wall, &[("x", 1.0)], &mut data);
        let mut w = RecordWriter::new(Vec::new());
        w.write_record(&data).unwrap();
        w.into_inner()
    }

    #[test]
    fn a_listing_finds_what_run_with_subruns_finds_as_files_appear_and_fill() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut listing = RunListing::new(root);
        let same = |listing: &mut RunListing| {
            let (a, b) = (listing.list().unwrap(), run_with_subruns(root).unwrap());
            assert_eq!(a.files, b.files);
            assert_eq!(a.subruns, b.subruns);
            a.files
        };
        assert!(same(&mut listing).is_empty());
        // Empty files sort last, by name; one that gets its first event takes its place.
        for name in ["events.out.tfevents.3.h", "events.out.tfevents.1.h"] {
            std::fs::write(root.join(name), b"").unwrap();
        }
        same(&mut listing);
        std::fs::write(root.join("events.out.tfevents.3.h"), record(1, 5.0)).unwrap();
        let files = same(&mut listing);
        assert!(files[0].ends_with("events.out.tfevents.3.h"), "{files:?}");
        std::fs::write(root.join("events.out.tfevents.2.h"), record(1, 1.0)).unwrap();
        let files = same(&mut listing);
        assert!(files[0].ends_with("events.out.tfevents.2.h"), "{files:?}");
        // A sub-run, then a file removed.
        std::fs::create_dir(root.join("loss_train")).unwrap();
        std::fs::write(
            root.join("loss_train/events.out.tfevents.4.h"),
            record(1, 2.0),
        )
        .unwrap();
        same(&mut listing);
        std::fs::remove_file(root.join("events.out.tfevents.1.h")).unwrap();
        assert_eq!(same(&mut listing).len(), 2);
    }

    #[test]
    fn special_files_and_links_leading_nowhere_are_skipped_named_and_the_run_listed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("events.out.tfevents.1.h"), record(1, 1.0)).unwrap();
        let fifo = root.join("events.out.tfevents.2.fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::RUSR).unwrap();
        let dangling = root.join("events.out.tfevents.3.gone");
        std::os::unix::fs::symlink(root.join("nothing"), &dangling).unwrap();
        let looped = root.join("events.out.tfevents.4.self");
        std::os::unix::fs::symlink(&looped, &looped).unwrap();
        let mut listing = RunListing::new(root);
        let listed = listing.list().unwrap();
        assert_eq!(listed.files, vec![root.join("events.out.tfevents.1.h")]);
        assert_eq!(listed.files, run_with_subruns(root).unwrap().files);
        let mut skipped: Vec<_> = listing.skipped().into_iter().map(|(p, _)| p).collect();
        skipped.sort();
        assert_eq!(skipped, vec![fifo, dangling, looped]);
    }
}
