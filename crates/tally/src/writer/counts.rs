//! Where the run's steps stand in its local storage: persisted, lost or pending, as the writer
//! thread last left them (docs/contract/run-artifacts.md "Storage faults").

use crate::backlog::Slot;
use crate::lost::LostSteps;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tally_schema::artifacts::RunSummary;

/// The run's local-storage counts, as the writer thread last left them.
#[derive(Debug, Default)]
pub(super) struct StorageCounts {
    /// Whether the run has a local-storage sink at all.
    pub(super) any: bool,
    pub(super) persisted: AtomicU64,
    pub(super) lost: AtomicU64,
    pub(super) pending: AtomicU64,
    /// The sink that lost the most steps and which iterations they were (locked only when
    /// more are lost).
    pub(super) lost_steps: Mutex<(String, LostSteps)>,
}

/// Where the run's steps stand in its local storage (docs/contract/run-artifacts.md
/// "Storage faults").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StorageTally {
    /// Steps in the file; `None` when the run has no local storage.
    pub persisted: Option<u64>,
    /// Steps that will never reach it.
    pub lost: u64,
    /// Steps kept for a retry.
    pub pending: u64,
}

impl StorageTally {
    /// Fill the summary's storage fields.
    pub fn fill(&self, s: &mut RunSummary) {
        s.persisted_iterations = self.persisted;
        s.lost_iterations = self.lost;
        s.pending_iterations = self.pending;
    }
}

impl StorageCounts {
    /// With several local sinks a step counts as persisted only if all hold it (the fewest
    /// persisted), and as lost or pending if any lost it or keeps it.
    pub(super) fn update(&self, slots: &[Slot]) {
        let local = || slots.iter().filter(|s| s.is_storage());
        let persisted = local().map(Slot::persisted).min().unwrap_or(0);
        self.persisted.store(persisted, Ordering::Release);
        let lost = local().map(|s| s.lost).max().unwrap_or(0);
        if lost != self.lost.load(Ordering::Acquire) {
            if let Some(most) = local().max_by_key(|s| s.lost) {
                *self.lost_steps.lock().unwrap_or_else(|e| e.into_inner()) =
                    (most.name().to_owned(), most.lost_steps.clone());
            }
        }
        self.lost.store(lost, Ordering::Release);
        let pending = local().map(Slot::pending).max().unwrap_or(0);
        self.pending.store(pending, Ordering::Release);
    }

    pub(super) fn lost_steps(&self) -> (String, LostSteps) {
        self.lost_steps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(super) fn tally(&self) -> StorageTally {
        StorageTally {
            persisted: self.any.then(|| self.persisted.load(Ordering::Acquire)),
            lost: self.lost.load(Ordering::Acquire),
            pending: self.pending.load(Ordering::Acquire),
        }
    }
}
