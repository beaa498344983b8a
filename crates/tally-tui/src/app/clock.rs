//! Which clock a snapshot's times are on, and estimating "now" on it.

use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tally::terminal::PanelSnapshot;

/// Which clock the snapshot's times (`Message::t`, `training_started_at`) are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// A logger's monotonic clock: "now" is estimated from the state's `updated_at`.
    #[default]
    Logger,
    /// Seconds since the Unix epoch (event-file wall times; `tally watch`).
    Unix,
}

/// Estimates "now" on the logger's clock from the times the state was updated.
pub(super) struct NowSource {
    pub(super) clock: Clock,
    pub(super) origin: Instant,
    pub(super) offset: Option<f64>,
}

impl NowSource {
    pub(super) fn observe(&mut self, snap: &PanelSnapshot) {
        if let (Clock::Logger, Some(t)) = (self.clock, snap.updated_at) {
            // The update happened before we saw it, so each observation bounds the offset
            // from below; the largest bound is the best estimate.
            let o = t - self.origin.elapsed().as_secs_f64();
            self.offset = Some(self.offset.map_or(o, |p: f64| p.max(o)));
        }
    }

    pub(super) fn now(&self) -> f64 {
        match self.clock {
            Clock::Unix => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            Clock::Logger => self
                .offset
                .map_or(0.0, |o| o + self.origin.elapsed().as_secs_f64()),
        }
    }
}
