//! The `sink` rule's measure: how long the oldest row of the event file a remote sink has not
//! acknowledged has waited (`docs/contract/health.md` "Sink").
//!
//! Two counts of the same rows meet here: the writer thread's rows complete in the logger's
//! event file (every step written but the last, which is a row only once the next one begins:
//! docs/contract/remote-sinks.md "Following the event file"), and each follower's rows of that
//! file the sink acknowledged ([`SinkAcks`], moved only once the sink's `flush` returned). Both
//! count the rows in file order, so "acknowledged ≥ complete at time T" says every row complete
//! at T reached the sink. The writer's timer records marks (time, complete) as the count grows;
//! the oldest mark not yet acknowledged is when the oldest waiting row was first seen complete.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

/// Most marks kept while a sink is behind (a sink down for hours): past it every other mark
/// after the oldest is dropped, so a row's wait is underestimated, never overestimated.
const MAX_MARKS: usize = 4096;

/// Marks closer together than `max_lag_s` / this are not kept apart: the wait is then measured
/// to within that (under 5 s at the default 300 s), in bounded memory.
const RESOLUTION: f64 = 64.0;

/// What a remote sink's follower publishes for the `sink` rule: the rows of the logger's own
/// event file the sink acknowledged (one atomic each way, no lock).
#[derive(Debug, Default)]
pub struct SinkAcks {
    rows: AtomicU64,
}

impl SinkAcks {
    /// `n` more rows of the logger's event file acknowledged (the follower, after `flush`).
    pub fn acknowledged(&self, n: u64) {
        if n > 0 {
            self.rows.fetch_add(n, Ordering::Release);
        }
    }

    /// Rows of the logger's event file acknowledged so far.
    pub fn rows(&self) -> u64 {
        self.rows.load(Ordering::Acquire)
    }
}

/// How far a sink is behind: rows complete and not acknowledged, and how long the oldest of
/// them has waited, seconds (0 when none waits).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lag {
    /// Rows waiting.
    pub rows: u64,
    /// The oldest one's wait.
    pub secs: f64,
}

/// One sink's marks: (the time a count was first seen, rows complete then), oldest first, each
/// count above the sink's acknowledged rows.
#[derive(Debug, Default)]
pub struct LagMarks {
    marks: VecDeque<(f64, u64)>,
}

impl LagMarks {
    /// At `now`, with `complete` rows complete in the event file and `acked` acknowledged:
    /// how far behind the sink is. `max_lag_s` sets how finely marks are kept.
    pub fn observe(&mut self, now: f64, complete: u64, acked: u64, max_lag_s: f64) -> Lag {
        let newest = self.marks.back().map_or(acked, |m| m.1.max(acked));
        // Close to the last mark, the new rows wait for the next one: their wait is then
        // measured from a later time, underestimated, never overestimated.
        let close = self
            .marks
            .back()
            .is_some_and(|m| now - m.0 < max_lag_s / RESOLUTION);
        if complete > newest && !close {
            if self.marks.len() >= MAX_MARKS {
                self.thin();
            }
            self.marks.push_back((now, complete));
        }
        while self.marks.front().is_some_and(|m| m.1 <= acked) {
            self.marks.pop_front();
        }
        Lag {
            rows: complete.saturating_sub(acked),
            secs: self.marks.front().map_or(0.0, |m| (now - m.0).max(0.0)),
        }
    }

    /// Keeps the oldest mark and the later of each following pair.
    fn thin(&mut self) {
        let mut i = 0;
        // 1-based: the first, then the third of (2, 3), the fifth of (4, 5), ...
        self.marks.retain(|_| {
            i += 1;
            i % 2 == 1
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_the_oldest_unacknowledged_mark_s_age() {
        let mut m = LagMarks::default();
        assert_eq!(m.observe(0.0, 0, 0, 64.0).secs, 0.0);
        assert_eq!(m.observe(1.0, 5, 0, 64.0), Lag { rows: 5, secs: 0.0 });
        assert_eq!(m.observe(2.0, 9, 0, 64.0), Lag { rows: 9, secs: 1.0 });
        // The rows seen at t = 1 acknowledged: those seen at t = 2 are the oldest waiting.
        assert_eq!(m.observe(4.0, 9, 5, 64.0), Lag { rows: 4, secs: 2.0 });
        assert_eq!(m.observe(5.0, 9, 9, 64.0), Lag { rows: 0, secs: 0.0 });
    }

    #[test]
    fn marks_stay_bounded_and_never_overestimate() {
        let mut m = LagMarks::default();
        for t in 0..100_000u64 {
            m.observe(t as f64, t + 1, 0, 64.0);
        }
        assert!(m.marks.len() <= MAX_MARKS);
        // The oldest mark survives thinning: the wait is exact for the oldest row.
        assert_eq!(m.observe(100_000.0, 100_001, 0, 64.0).secs, 100_000.0);
        // Once it is acknowledged, the next kept mark is no older than the rows it stands for.
        let next = m.observe(100_000.0, 100_001, 1, 64.0).secs;
        assert!(next <= 100_000.0 - 1.0, "{next}");
    }
}
