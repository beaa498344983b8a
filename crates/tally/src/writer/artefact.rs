//! A JSON artefact (`run_config.json`, `run_summary.json`) the writer thread rewrites: a failed
//! rewrite is kept and retried on the next one.

use super::failures::{record, Failures, SinkFailure};
use crate::atomic::{json_bytes, replace};
use crate::room::Room;
use std::path::Path;

/// A JSON artefact rewrite that failed, kept until a later rewrite (or a flush) succeeds.
pub(super) struct Artefact<T> {
    file: &'static str,
    pub(super) pending: Option<Box<T>>,
    /// The last document written, to put back if the run directory is removed.
    pub(super) last: Option<Box<T>>,
    /// Its failure was reported; reported again only after a success.
    failing: bool,
    /// Whether each rewrite is fsynced.
    sync: bool,
    /// Room kept on disk for it (the summary's), spent when the disk is full.
    room: Option<Room>,
}

impl<T: serde::Serialize> Artefact<T> {
    pub(super) fn new(file: &'static str, sync: bool, room: Option<Room>) -> Self {
        Artefact {
            file,
            pending: None,
            last: None,
            failing: false,
            sync,
            room,
        }
    }

    /// Write `doc` (or retry the kept one when `doc` is `None`); a failure keeps it.
    pub(super) fn write(
        &mut self,
        doc: Option<Box<T>>,
        iteration: u64,
        run_dir: &Path,
        failures: &Failures,
    ) {
        let Some(doc) = doc.or_else(|| self.pending.take()) else {
            return;
        };
        // Redacted like the artefacts written at start and close: a summary holds the runtime
        // manifest and free text (docs/contract/run-artifacts.md "Secrets").
        let clean = serde_json::to_value(&*doc).map(|v| crate::redact::redact_value(&v));
        let path = run_dir.join(self.file);
        let written = clean
            .map_err(|source| crate::Error::Json {
                path: path.clone(),
                source,
            })
            .and_then(|v| json_bytes(&path, &v))
            .and_then(|bytes| match &self.room {
                Some(room) => room.replace(&path, &bytes, self.sync),
                None => replace(&path, &bytes, self.sync),
            });
        match written {
            Ok(()) => {
                // A newer document replaces a kept one: the kept one is never written after it.
                self.pending = None;
                self.last = Some(doc);
                self.failing = false;
            }
            Err(e) => {
                if !self.failing {
                    self.failing = true;
                    record(
                        failures,
                        SinkFailure {
                            sink: self.file.trim_end_matches(".json").into(),
                            iteration,
                            message: format!("{e}; retried on the next rewrite"),
                        },
                    );
                }
                self.pending = Some(doc);
            }
        }
    }
}
