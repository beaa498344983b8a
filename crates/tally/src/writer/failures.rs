//! Sink failures: each reported once through the next `step`/`close`, and all kept for the
//! summary's `sink_errors`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A sink failure, reported once through the next `step`/`close` and kept for the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkFailure {
    /// Sink name.
    pub sink: String,
    /// Iteration whose write failed (0 for close/flush).
    pub iteration: u64,
    /// The error text.
    pub message: String,
}

impl std::fmt::Display for SinkFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} sink failed at iteration {}: {}",
            self.sink, self.iteration, self.message
        )
    }
}

/// Failures shared between the writer thread and the logger. The count is read on every step
/// without taking the lock; the list is locked only when something new is to be reported.
#[derive(Debug, Default)]
pub(super) struct Failures {
    pub(super) count: AtomicUsize,
    pub(super) list: Mutex<Vec<SinkFailure>>,
}

pub(super) fn record(failures: &Failures, f: SinkFailure) {
    let mut list = failures.list.lock().unwrap_or_else(|e| e.into_inner());
    list.push(f);
    failures.count.store(list.len(), Ordering::Release);
}

pub(super) fn texts(failures: &Failures) -> Vec<String> {
    let list = failures.list.lock().unwrap_or_else(|e| e.into_inner());
    list.iter().map(ToString::to_string).collect()
}
