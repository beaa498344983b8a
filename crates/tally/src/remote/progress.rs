//! A remote sink's progress recorded in a closed run's `run_summary.json`, after `tally sync`.

use crate::atomic::write_json_atomic;
use crate::error::{Error, Result};
use crate::run::RUN_SUMMARY_FILE;
use std::path::Path;
use tally_schema::artifacts::RemoteSinkProgress;

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
