//! The state of the rules that watch the run rather than a tag: `stall`, `ranks`, `overhead`,
//! `sink` (docs/contract/health.md).

use super::findings::NONE;
use crate::health::rules::{Overhead, Stall};
use crate::health::sink_lag::LagMarks;
use crate::health::window::RobustWindow;

#[derive(Debug)]
pub(super) struct StallState {
    pub(super) p: Stall,
    pub(super) gaps: RobustWindow,
    pub(super) last: Option<(i64, f64)>,
    /// The last step an open pause was reported at ([`Evaluator::overdue`]).
    pub(super) overdue_at: Option<i64>,
    pub(super) finding: u32,
}

impl StallState {
    pub(super) fn threshold(&self) -> Option<(f64, f64)> {
        let (median, _) = self.gaps.stats()?;
        Some(((self.p.k * median).max(self.p.min_gap_s), median))
    }
}

/// The `ranks` rule's state (see [`Evaluator::ranks`]).
#[derive(Debug)]
pub(super) struct RanksState {
    pub(super) nonfinite: u32,
    pub(super) straggler: u32,
    /// The rank straggling now, since which step, for how many steps.
    pub(super) slow: Option<(usize, i64, u32)>,
}

impl Default for RanksState {
    fn default() -> Self {
        RanksState {
            nonfinite: NONE,
            straggler: NONE,
            slow: None,
        }
    }
}

/// The `overhead` rule's state (see [`Evaluator::overhead`]).
#[derive(Debug)]
pub(super) struct OverheadState {
    pub(super) p: Overhead,
    /// The block being summed: its first step, steps, seconds between calls, seconds inside.
    pub(super) first: i64,
    pub(super) steps: u32,
    pub(super) elapsed: f64,
    pub(super) inside: f64,
    /// The stretch of blocks over budget: its first step, its seconds, and whether it fired.
    pub(super) over: Option<(i64, f64, bool)>,
    pub(super) finding: u32,
}

/// One remote sink's state for the `sink` rule (see [`Evaluator::sink`]).
#[derive(Debug)]
pub(super) struct SinkState {
    pub(super) name: Box<str>,
    pub(super) marks: LagMarks,
    /// In a stretch behind (fired, not caught up since).
    pub(super) behind: bool,
    pub(super) finding: u32,
}
