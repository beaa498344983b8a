//! Remote sinks (W&B): fed from the run's persisted event files, never from the training loop
//! (docs/contract/remote-sinks.md).
//!
//! The event file is the truth. A remote sink reads the run's event files from a [`Cursor`]
//! kept in the run directory (`.tally/<sink>.cursor.json`), one row per step, on a
//! [`Follower`] thread of its own: a slow or failing sink never makes `step` wait, and after a
//! failure it catches up from the file. The cursor is saved after each acknowledged batch, so a
//! later follower or `tally sync` starts exactly where the last one stopped.

mod fleet;
mod follower;
mod rows;

pub use fleet::RemoteSinks;
pub use follower::{send_run, Follower, Notify, SyncReport};
// A default of `LoggerConfig`, kept reachable at its old path.
pub use crate::input::DEFAULT_FINISH_TIMEOUT_SECS;

use crate::atomic::write_json_atomic;
use crate::error::{Error, Result};
use crate::run::RUN_SUMMARY_FILE;
use rows::{Pos, RowReader};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tally_schema::artifacts::RemoteSinkProgress;
use tally_tfevents::reader::{is_event_file_name, open_event_file};
use tally_tfevents::{Damage, OnCorruption};

/// The directory of the run's remote-sink cursors, inside the run directory.
pub const CURSOR_DIR: &str = ".tally";

/// Where a remote sink stands in the run's event files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cursor {
    /// The event file (a name in the run directory) the next row is read from; `None` before
    /// the first row was sent.
    pub file: Option<String>,
    /// Byte offset in `file` just past the last row sent.
    pub offset: u64,
    /// Rows the sink acknowledged, over the life of the run: the next row's index.
    pub rows: u64,
    /// The step of the last row sent.
    pub step: Option<i64>,
    /// The destination the rows went to (W&B: `entity/project/run id`), when the sink names it.
    #[serde(default)]
    pub remote_run: Option<String>,
}

impl Cursor {
    /// `<run_dir>/.tally/<sink>.cursor.json`.
    pub fn path(run_dir: &Path, sink: &str) -> PathBuf {
        run_dir.join(CURSOR_DIR).join(format!("{sink}.cursor.json"))
    }

    /// The saved cursor of `sink`, or the start of the run when there is none.
    pub fn load(run_dir: &Path, sink: &str) -> Result<Option<Cursor>> {
        let path = Self::path(run_dir, sink);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", &path)(e)),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|source| Error::Json { path, source })
    }

    /// Save atomically (a crash leaves the old cursor or the new one).
    pub fn save(&self, run_dir: &Path, sink: &str) -> Result<()> {
        let dir = run_dir.join(CURSOR_DIR);
        std::fs::create_dir_all(&dir).map_err(Error::io("create", &dir))?;
        write_json_atomic(&Self::path(run_dir, sink), self)
    }

    /// The position in `files` the cursor names: a cursor naming a file the run no longer
    /// has is refused rather than guessed.
    fn position(&self, files: &[PathBuf]) -> Result<Pos> {
        let Some(name) = &self.file else {
            return Ok(Pos::default());
        };
        files
            .iter()
            .position(|f| f.file_name().is_some_and(|n| n.to_string_lossy() == **name))
            .map(|file| Pos {
                file,
                offset: self.offset,
            })
            .ok_or_else(|| {
                Error::Config(format!(
                    "the remote-sink cursor names event file {name}, which is not among the \
                     run's event files: delete {CURSOR_DIR}/ to send the run again from its start"
                ))
            })
    }
}

/// The event files directly in `dir`, in run order: by their first event's wall time, then by
/// name (a file with no readable first event sorts last). A resumed run's files follow each
/// other this way (docs/contract/consumers.md "A run's event files").
pub fn ordered_event_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file()
            && entry.file_name().to_str().is_some_and(is_event_file_name)
        {
            files.push(entry.path());
        }
    }
    Ok(order_event_files(files))
}

/// Sort one run's event files into run order (see [`ordered_event_files`]).
pub fn order_event_files(files: Vec<PathBuf>) -> Vec<PathBuf> {
    let first_wall = |f: &Path| {
        let mut r = open_event_file(f)
            .ok()?
            .with_on_corruption(OnCorruption::Skip);
        r.read_event()
            .ok()
            .flatten()
            .map(|e| e.wall_time)
            .filter(|w| w.is_finite())
    };
    let mut keyed: Vec<(f64, PathBuf)> = files
        .into_iter()
        .map(|f| (first_wall(&f).unwrap_or(f64::INFINITY), f))
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    keyed.into_iter().map(|(_, f)| f).collect()
}

/// What a sink has not received yet: the rows of the run's files after its cursor.
#[derive(Debug, Default)]
pub struct Pending {
    /// Rows (steps) to send.
    pub rows: u64,
    /// The first and last of their steps.
    pub steps: Option<(i64, i64)>,
    /// The scalar tags they hold.
    pub tags: BTreeSet<String>,
    /// Truncated tails read past.
    pub damage: Vec<Damage>,
}

/// The rows of `files` (in run order, read to their current end) after `cursor`.
pub fn scan_pending(files: &[PathBuf], cursor: &Cursor) -> Result<Pending> {
    let at = cursor.position(files)?;
    let mut reader = RowReader::new(files.to_vec(), at);
    let mut p = Pending::default();
    loop {
        let row = reader.next(true)?;
        let Some((row, _)) = row else { break };
        p.rows += 1;
        p.steps = Some(p.steps.map_or((row.step, row.step), |(a, _)| (a, row.step)));
        p.tags
            .extend(row.scalars.iter().map(|(t, _)| t.as_str().to_owned()));
    }
    p.damage = std::mem::take(&mut reader.damage);
    Ok(p)
}

/// Record `progress` in a closed run's `run_summary.json` (the entry of its sink replaced, the
/// rest of the document kept): after `tally sync` the summary no longer says rows are pending.
/// A run without a summary (another writer's), or one still running (its logger owns the
/// file), is left alone.
pub fn record_in_summary(run_dir: &Path, progress: &RemoteSinkProgress) -> Result<()> {
    let path = run_dir.join(RUN_SUMMARY_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("read", &path)(e)),
    };
    let mut doc: serde_json::Value = serde_json::from_str(&text).map_err(|source| Error::Json {
        path: path.clone(),
        source,
    })?;
    let Some(obj) = doc.as_object_mut() else {
        return Ok(());
    };
    if obj.get("status").and_then(|s| s.as_str()) == Some("running") {
        return Ok(());
    }
    let entry = serde_json::to_value(progress).map_err(|source| Error::Json {
        path: path.clone(),
        source,
    })?;
    let list = obj
        .entry("remote_sinks")
        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
    if let Some(list) = list.as_array_mut() {
        list.retain(|e| e.get("name").and_then(|n| n.as_str()) != Some(progress.name.as_str()));
        list.push(entry);
    }
    write_json_atomic(&path, &doc)
}
