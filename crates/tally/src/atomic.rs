//! Atomic JSON artefacts: write a temp file beside the target, fsync it, rename over the target.
//!
//! A reader (or a crash) therefore sees either the previous complete file or the new complete
//! file, never half of one.

use crate::error::{Error, Result};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// Serialise `value` as pretty JSON (2-space indent, trailing newline) and atomically replace `path`.
pub fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    write_json_replace(path, value, true)
}

/// As [`write_json_atomic`], fsyncing only when `sync`: without it the replace is still whole
/// for any reader and survives the process being killed, but not a power loss.
pub fn write_json_replace<T: Serialize + ?Sized>(path: &Path, value: &T, sync: bool) -> Result<()> {
    replace(path, &json_bytes(path, value)?, sync)
}

/// `value` as an artefact's bytes: pretty JSON (2-space indent) and a trailing newline.
pub fn json_bytes<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|source| Error::Json {
        path: path.to_owned(),
        source,
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Atomically replace `path` with `bytes`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    replace(path, bytes, true)
}

/// Replace `path` with `bytes` through a temporary file beside it, fsynced when `sync`.
pub fn replace(path: &Path, bytes: &[u8], sync: bool) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("artefact");
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp).map_err(Error::io("create", &tmp))?;
        f.write_all(bytes).map_err(Error::io("write", &tmp))?;
        if sync {
            f.sync_all().map_err(Error::io("sync", &tmp))?;
        }
        std::fs::rename(&tmp, path).map_err(Error::io("rename into place", path))?;
        if !sync {
            return Ok(());
        }
        // Make the rename itself durable; a directory that cannot be opened or synced (some
        // file systems) does not make the artefact any less complete.
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Removes the temporary files an interrupted rewrite of the artefacts `names` left in `dir`
/// (`.<name>.tmp.<pid>`: a process killed between writing one and renaming it into place).
/// Only for a run whose lock the caller holds, so no live writer of the run owns one
/// (docs/contract/run-artifacts.md "Atomic rewrites").
pub fn remove_stale_temporaries(dir: &Path, names: &[&str]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        let stale = names.iter().any(|name| {
            file.strip_prefix('.')
                .and_then(|f| f.strip_prefix(*name))
                .and_then(|f| f.strip_prefix(".tmp."))
                .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        });
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
