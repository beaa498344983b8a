//! The one clock of a run.
//!
//! Everything in tally that reads time — the logger's window and summary throttle, the writer
//! thread's back-pressure timer, the event file's fsync interval and timestamps, the trace,
//! and the panel — reads it from one injected [`Clock`], so a test can fix both kinds of time
//! and every component agrees on "now" without estimating another's offset.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A source of time: monotonic seconds (intervals, windows) and wall seconds (timestamps).
pub trait Clock: Send + Sync + fmt::Debug {
    /// Seconds on a monotonic clock; the origin is the clock's own (its creation).
    fn monotonic(&self) -> f64;

    /// Seconds since the Unix epoch.
    fn wall(&self) -> f64;

    /// The wall time of monotonic reading `t` (for stamping an event timed on this clock).
    fn wall_at(&self, t: f64) -> f64 {
        self.wall() - (self.monotonic() - t)
    }

    /// The monotonic reading of wall time `w` (for placing a recorded event on this clock).
    fn monotonic_at(&self, w: f64) -> f64 {
        self.monotonic() - (self.wall() - w)
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn monotonic(&self) -> f64 {
        (**self).monotonic()
    }

    fn wall(&self) -> f64 {
        (**self).wall()
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn monotonic(&self) -> f64 {
        (**self).monotonic()
    }

    fn wall(&self) -> f64 {
        (**self).wall()
    }
}

/// The machine's clocks: [`Instant`] from construction, and [`SystemTime`].
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn monotonic(&self) -> f64 {
        self.origin.elapsed().as_secs_f64()
    }

    fn wall(&self) -> f64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    }
}

/// A clock that moves only when told to (tests). Wall time is a fixed epoch plus the
/// monotonic reading, so the two move together.
#[derive(Debug, Default)]
pub struct ManualClock {
    t: Mutex<f64>,
    wall_at_zero: f64,
}

impl ManualClock {
    /// A clock reading `t`, with wall time `t` seconds after the Unix epoch.
    pub fn at(t: f64) -> Self {
        ManualClock {
            t: Mutex::new(t),
            wall_at_zero: 0.0,
        }
    }

    /// A clock reading `t` whose wall time at monotonic 0 is `wall_at_zero`.
    pub fn with_wall(t: f64, wall_at_zero: f64) -> Self {
        ManualClock {
            t: Mutex::new(t),
            wall_at_zero,
        }
    }

    fn reading(&self) -> std::sync::MutexGuard<'_, f64> {
        self.t.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Set the reading.
    pub fn set(&self, t: f64) {
        *self.reading() = t;
    }

    /// Move the reading forward by `dt` seconds.
    pub fn advance(&self, dt: f64) {
        *self.reading() += dt;
    }
}

impl Clock for ManualClock {
    fn monotonic(&self) -> f64 {
        *self.reading()
    }

    fn wall(&self) -> f64 {
        self.wall_at_zero + *self.reading()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_both_readings_together() {
        let c = ManualClock::with_wall(1.0, 1000.0);
        c.advance(2.5);
        assert_eq!(c.monotonic(), 3.5);
        assert_eq!(c.wall(), 1003.5);
        assert_eq!(c.wall_at(2.0), 1002.0);
        assert_eq!(c.monotonic_at(1001.0), 1.0);
    }

    #[test]
    fn system_clock_is_monotonic_and_near_the_epoch_now() {
        let c = SystemClock::default();
        let (a, b) = (c.monotonic(), c.monotonic());
        assert!(b >= a && a >= 0.0);
        assert!(c.wall() > 1.6e9, "wall time is seconds since the epoch");
    }
}
