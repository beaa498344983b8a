//! Injectable monotonic clocks, so windows, throttles and timers are exact in tests.

use std::sync::Mutex;
use std::time::Instant;

/// Seconds on a monotonic clock with an arbitrary origin.
pub trait MonotonicClock: Send + Sync {
    /// The current time in seconds.
    fn now_secs(&self) -> f64;
}

/// The real monotonic clock, with its origin at construction.
#[derive(Debug)]
pub struct SystemClock(Instant);

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock(Instant::now())
    }
}

impl MonotonicClock for SystemClock {
    fn now_secs(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

/// A clock that moves only when told to (tests).
#[derive(Debug, Default)]
pub struct ManualClock(Mutex<f64>);

impl ManualClock {
    /// A clock reading `t`.
    pub fn at(t: f64) -> Self {
        ManualClock(Mutex::new(t))
    }

    /// Set the reading.
    pub fn set(&self, t: f64) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = t;
    }

    /// Move the reading forward by `dt`.
    pub fn advance(&self, dt: f64) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) += dt;
    }
}

impl MonotonicClock for ManualClock {
    fn now_secs(&self) -> f64 {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
