//! When the writer thread rewrites `run_summary.json` during a run
//! (docs/contract/threads-and-signals.md "The summary during a run").
//!
//! After every persisted step, as long as it stays cheap: never while the previous rewrite is
//! still queued or being written, and no sooner after it than `DUTY` times what it cost, so
//! summary rewrites take at most a quarter of the writer's time and the training thread builds
//! at most one summary per rewrite the disk can take.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A rewrite waits at least this many times the previous rewrite's cost after it was sent.
const DUTY: u32 = 4;

#[derive(Default)]
struct Shared {
    written: AtomicU64,
    cost_ns: AtomicU64,
}

/// The logger's side: whether a rewrite is due.
#[derive(Default)]
pub struct SummaryPace {
    shared: Arc<Shared>,
    sent: u64,
    last_sent: Option<Instant>,
}

/// The writer thread's side: records each rewrite done and what it cost.
pub struct SummaryDone(Arc<Shared>);

impl SummaryPace {
    /// The handle the writer thread reports rewrites through.
    pub fn recorder(&self) -> SummaryDone {
        SummaryDone(self.shared.clone())
    }

    /// Whether a rewrite sent now would be cheap (two atomic reads).
    pub fn due(&self) -> bool {
        if self.shared.written.load(Ordering::Acquire) < self.sent {
            return false;
        }
        let cost = Duration::from_nanos(self.shared.cost_ns.load(Ordering::Relaxed));
        self.last_sent.is_none_or(|t| t.elapsed() >= cost * DUTY)
    }

    /// A rewrite was queued.
    pub fn sent(&mut self) {
        self.sent += 1;
        self.last_sent = Some(Instant::now());
    }
}

impl SummaryDone {
    /// A queued rewrite was done (written, or failed and kept) in `cost`.
    pub fn done(&self, cost: Duration) {
        let ns = u64::try_from(cost.as_nanos()).unwrap_or(u64::MAX);
        self.0.cost_ns.store(ns, Ordering::Relaxed);
        self.0.written.fetch_add(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_is_not_due_while_the_previous_one_is_in_flight() {
        let mut pace = SummaryPace::default();
        assert!(pace.due());
        pace.sent();
        assert!(!pace.due());
        pace.recorder().done(Duration::ZERO);
        assert!(pace.due());
    }

    #[test]
    fn a_costly_rewrite_spaces_the_next_one() {
        let mut pace = SummaryPace::default();
        pace.sent();
        pace.recorder().done(Duration::from_secs(3600));
        assert!(
            !pace.due(),
            "due before four times an hour-long rewrite passed"
        );
    }
}
