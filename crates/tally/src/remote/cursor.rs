//! Where a remote sink stands in the run's event files, saved in the run directory
//! (`.tally/<sink>.cursor.json`) after each acknowledged batch, so a later follower or `tally
//! sync` starts exactly where the last one stopped (docs/contract/remote-sinks.md).

use super::rows::Pos;
use crate::atomic::write_json_atomic;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
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
    pub(super) fn position(&self, files: &[PathBuf]) -> Result<Pos> {
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
