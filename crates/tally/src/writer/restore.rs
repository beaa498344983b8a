//! A run directory removed mid-run (docs/contract/run-artifacts.md "Storage faults").
//!
//! The event file stays open when its directory is removed, so every step written to it is
//! still held by its descriptor. At each summary rewrite, flush and close the writer thread
//! asks the local sinks whether their file lost its last link (one `fstat`, never per step);
//! an unlinked one is copied back to its path and written on there, and the JSON artefacts
//! tally holds in memory are rewritten. It is said once.

use super::artefact::Artefact;
use super::counts::StorageCounts;
use super::failures::{record, Failures};
use crate::backlog::Slot;
use std::path::{Path, PathBuf};
use tally_schema::artifacts::{RunConfig, RunSummary};

/// The writer thread's watch over its run directory.
pub(super) struct Restorer {
    run_dir: PathBuf,
    /// A restore failed and was reported: later failures of it are not reported again.
    failing: bool,
}

impl Restorer {
    pub(super) fn new(run_dir: PathBuf) -> Self {
        Restorer {
            run_dir,
            failing: false,
        }
    }

    /// Put back any unlinked local file, then the artefacts; count what is only in an open
    /// file as pending (`Slot::relink`).
    pub(super) fn check(
        &mut self,
        slots: &mut [Slot],
        iteration: u64,
        failures: &Failures,
        counts: &StorageCounts,
        summary: &mut Artefact<RunSummary>,
        config: &mut Artefact<RunConfig>,
    ) {
        let dir = self.run_dir.display();
        let mut restored = false;
        for slot in slots.iter_mut() {
            match slot.relink() {
                Ok(None) => {}
                Ok(Some(r)) => {
                    restored = true;
                    self.failing = false;
                    let held = summary.pending.as_deref().or(summary.last.as_deref());
                    let text = format!(
                        "run directory {dir} was removed; restored {} bytes from the open event \
                         file {}, and run_config.json and run_summary.json from memory{}",
                        r.bytes,
                        r.path.display(),
                        not_restored(&self.run_dir, held)
                    );
                    record(failures, slot.failure(iteration, text));
                }
                Err(e) if !self.failing => {
                    self.failing = true;
                    let text = format!(
                        "run directory {dir} was removed; {e}; the steps stay in the open file, \
                         counted pending, and are restored once the path takes them (at the \
                         next summary, flush or close)"
                    );
                    record(failures, slot.failure(iteration, text));
                }
                Err(_) => {}
            }
        }
        if restored {
            config.rewrite(&self.run_dir, failures);
            summary.rewrite(&self.run_dir, failures);
        }
        counts.update(slots);
    }
}

/// What the removed directory held that is not put back, as a clause of the message: named
/// from the run's summary when one is held, else in general.
fn not_restored(run_dir: &Path, summary: Option<&RunSummary>) -> String {
    let Some(s) = summary else {
        return "; not restored: any trace, remote-sink cursor or earlier segment's event file \
                it held"
            .into();
    };
    let mut lost = Vec::new();
    if let Some(trace) = s.trace_path.as_deref() {
        if Path::new(trace).starts_with(run_dir) {
            lost.push(format!("the trace {trace}"));
        }
    }
    if !s.resumed.is_empty() {
        lost.push(format!(
            "the event files of {} earlier segments",
            s.resumed.len()
        ));
    }
    if !s.remote_sinks.is_empty() {
        lost.push("the remote-sink cursors".into());
    }
    match lost.is_empty() {
        true => String::new(),
        false => format!("; not restored: {}", lost.join(", ")),
    }
}

impl<T: serde::Serialize> Artefact<T> {
    /// Write the kept document, or else the last one written, again.
    fn rewrite(&mut self, run_dir: &Path, failures: &Failures) {
        let doc = self.pending.take().or_else(|| self.last.take());
        self.write(doc, 0, run_dir, failures);
    }
}
