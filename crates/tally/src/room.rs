//! Room kept on disk for `run_summary.json` (docs/contract/run-artifacts.md "Storage
//! faults"): a hidden file of spare bytes beside it, made at start. When the disk is full the
//! summary is written over those bytes and renamed into place, which needs no new space, so a
//! run whose disk stays full still ends with a summary that says what its event file lacks.

use crate::atomic::replace;
use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The room's file name in the run directory.
pub const ROOM_FILE: &str = ".run_summary.json.room";

/// The least room kept: a summary with many sink errors and findings is tens of KiB.
pub const ROOM_MIN_BYTES: u64 = 64 << 10;

/// The room of one run directory: its path and how many bytes it keeps. Cloning shares the
/// file (the writer thread rewrites the summary during the run, the logger at close).
#[derive(Debug, Clone)]
pub struct Room {
    path: PathBuf,
    bytes: u64,
}

impl Room {
    /// Keep room in `dir` for a summary of about `summary_bytes` (four times it, at least
    /// [`ROOM_MIN_BYTES`]); refused, naming the file, when the disk cannot hold it.
    pub fn keep(dir: &Path, summary_bytes: usize) -> Result<Room> {
        let room = Room {
            path: dir.join(ROOM_FILE),
            bytes: (summary_bytes as u64 * 4).max(ROOM_MIN_BYTES),
        };
        room.fill()
            .map_err(Error::io("keep room for run_summary.json in", &room.path))?;
        Ok(room)
    }

    /// Replace `target` with `bytes`: through a temporary file as usual, else (a full disk)
    /// over the room's bytes, whose file is then renamed into place and kept again.
    pub fn replace(&self, target: &Path, bytes: &[u8], sync: bool) -> Result<()> {
        match replace(target, bytes, sync) {
            Ok(()) => {
                // Room spent during an outage is taken back once the disk has space again.
                if self.len() < self.bytes {
                    let _ = self.fill();
                }
                Ok(())
            }
            Err(e) => match self.spend(target, bytes, sync) {
                Ok(()) => {
                    // The bytes the rename freed (the old summary's, the room's unused
                    // tail) make room again for the next rewrite.
                    let _ = self.fill();
                    Ok(())
                }
                Err(_) => Err(e),
            },
        }
    }

    /// Give the room back (the run is closed).
    pub fn release(&self) {
        let _ = std::fs::remove_file(&self.path);
    }

    fn len(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }

    /// Write `bytes` over the room's own, cut it to their length and rename it to `target`.
    fn spend(&self, target: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
        let mut f = OpenOptions::new().write(true).open(&self.path)?;
        f.write_all(bytes)?;
        f.set_len(bytes.len() as u64)?;
        if sync {
            f.sync_all()?;
        }
        std::fs::rename(&self.path, target)?;
        if sync {
            if let Some(d) = target.parent().and_then(|d| File::open(d).ok()) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }

    /// Grow the room's file to its size with real bytes (a sparse file keeps no room). A
    /// partial fill keeps what it got.
    fn fill(&self) -> std::io::Result<()> {
        let mut f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.path)?;
        let mut at = f.seek(SeekFrom::End(0))?;
        let chunk = [b' '; 4096];
        while at < self.bytes {
            let n = (self.bytes - at).min(chunk.len() as u64) as usize;
            f.write_all(&chunk[..n])?;
            at += n as u64;
        }
        f.sync_all()
    }
}
