//! Where a remote sink stands in the run's event files, saved in the run directory
//! (`.tally/<sink>.cursor.json`) after each acknowledged batch, so a later follower or `tally
//! sync` starts exactly where the last one stopped (docs/contract/remote-sinks.md).

use super::rows::Pos;
use crate::atomic::write_json_atomic;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    /// Where the sink stands in each sub-run (docs/contract/remote-sinks.md "Sub-runs"), by
    /// the sub-run's path relative to the run directory.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub subruns: BTreeMap<String, FilePos>,
    /// The rows handed to the sink and not yet acknowledged, when the run has sub-runs: which
    /// rows come next is then chosen among several growing files, so a later follower sends
    /// exactly these first and each row keeps its index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inflight: Option<Inflight>,
}

/// A position in a sub-run's event files (as [`Cursor::file`] and [`Cursor::offset`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FilePos {
    /// The event file (a name in the sub-run's directory).
    pub file: Option<String>,
    /// Byte offset in `file` just past the last row sent.
    pub offset: u64,
}

/// Rows handed to the sink but not acknowledged: `rows` rows of one stream (`""` the run's own
/// files, else a sub-run's path) after the cursor's position in it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Inflight {
    /// The stream.
    pub subrun: String,
    /// How many rows.
    pub rows: u64,
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

    /// The position in `files` (the run's own) the cursor names: a cursor naming a file the
    /// run no longer has is refused rather than guessed.
    pub(super) fn position(&self, files: &[PathBuf]) -> Result<Pos> {
        position(self.file.as_ref(), self.offset, files)
    }

    /// The position in the files of stream `subrun` (`""`: the run's own files).
    pub(super) fn position_in(&self, subrun: &str, files: &[PathBuf]) -> Result<Pos> {
        if subrun.is_empty() {
            return self.position(files);
        }
        match self.subruns.get(subrun) {
            Some(p) => position(p.file.as_ref(), p.offset, files),
            None => Ok(Pos::default()),
        }
    }

    /// Record a row of stream `subrun` acknowledged, ending at `offset` in event file `file`.
    pub(super) fn advance(&mut self, subrun: &str, file: &str, offset: u64) {
        if subrun.is_empty() {
            self.file = Some(file.to_owned());
            self.offset = offset;
        } else {
            self.subruns.insert(
                subrun.to_owned(),
                FilePos {
                    file: Some(file.to_owned()),
                    offset,
                },
            );
        }
    }
}

fn position(file: Option<&String>, offset: u64, files: &[PathBuf]) -> Result<Pos> {
    let Some(name) = file else {
        return Ok(Pos::default());
    };
    files
        .iter()
        .position(|f| f.file_name().is_some_and(|n| n.to_string_lossy() == **name))
        .map(|file| Pos { file, offset })
        .ok_or_else(|| {
            Error::Config(format!(
                "the remote-sink cursor names event file {name}, which is not among the \
                     run's event files: delete {CURSOR_DIR}/ to send the run again from its start"
            ))
        })
}
