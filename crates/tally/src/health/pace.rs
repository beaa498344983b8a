//! The `overhead` rule's measure, taken on the step's thread: how long each `step()` call took
//! and how long from one call to the next (docs/contract/health.md "Overhead").

use std::time::{Duration, Instant};

/// The calls of the steps since the last written one: the time from the first's start to the
/// written step's start, and the time spent inside them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    /// Seconds from one written step's call to the next's.
    pub elapsed_s: f64,
    /// Seconds inside `step()` in that time.
    pub inside_s: f64,
}

/// Sums the calls' times between written steps (a step the log interval skips is summed into
/// the next written one).
#[derive(Debug, Default)]
pub struct PaceMeter {
    since: Option<Instant>,
    inside: Duration,
}

impl PaceMeter {
    /// A call that began at `entered` ends now.
    pub fn ended(&mut self, entered: Instant) {
        self.inside += entered.elapsed();
    }

    /// The step whose call began at `entered` is written: the facts of the calls before it
    /// (none before the first written step).
    pub fn written(&mut self, entered: Instant) -> Option<Pace> {
        let inside = std::mem::take(&mut self.inside);
        let since = self.since.replace(entered)?;
        Some(Pace {
            elapsed_s: entered.saturating_duration_since(since).as_secs_f64(),
            inside_s: inside.as_secs_f64(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calls_between_two_written_steps_are_summed() {
        let t0 = Instant::now();
        let mut m = PaceMeter::default();
        assert_eq!(m.written(t0), None);
        m.ended(t0);
        let t1 = t0 + Duration::from_millis(10);
        let p = m.written(t1).unwrap();
        assert!((p.elapsed_s - 0.010).abs() < 1e-9, "{p:?}");
        // The first call's time inside is in the second's facts, and counted once.
        assert!(p.inside_s > 0.0 && p.inside_s < 0.010, "{p:?}");
        let p = m.written(t1 + Duration::from_millis(5)).unwrap();
        assert_eq!(p.inside_s, 0.0);
    }
}
