//! Watching the running command: a sample every interval until it exits, is cancelled, or
//! stops making progress (`docs/contract/manifest-and-soak.md` "The soak monitor").

use super::child::{Group, POLL};
use super::sample::Sampler;
use super::samples::SampleLog;
use super::status::Status;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tally_schema::artifacts::FailureClassification as C;

/// When the progress files say the run is stuck.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressClock {
    /// `--startup-timeout-seconds`.
    pub startup_timeout_s: f64,
    /// `--stale-progress-seconds`.
    pub stale_progress_s: f64,
    last_bytes: u64,
    last_change_s: f64,
    seen_progress: bool,
}

impl ProgressClock {
    /// A clock started at elapsed 0, when the progress files held `initial_bytes` (a resumed
    /// run's directory is not empty: its old files are not progress of this run).
    pub fn new(startup_timeout_s: f64, stale_progress_s: f64, initial_bytes: u64) -> ProgressClock {
        ProgressClock {
            startup_timeout_s,
            stale_progress_s,
            last_bytes: initial_bytes,
            last_change_s: 0.0,
            seen_progress: false,
        }
    }

    /// Take the progress size `bytes` seen at `elapsed_s`: `timeout/startup` when it has not
    /// changed from the start within the startup timeout, `timeout/stale_tick` when it has not
    /// changed for more than the stale timeout since it first did; the reason names `dir`.
    pub fn observe(&mut self, elapsed_s: f64, bytes: u64, dir: &Path) -> Option<(C, String)> {
        if self.last_bytes != bytes {
            self.last_bytes = bytes;
            self.last_change_s = elapsed_s;
            self.seen_progress = true;
        }
        let unchanged = elapsed_s - self.last_change_s;
        if !self.seen_progress && elapsed_s > self.startup_timeout_s {
            Some((
                C::TimeoutStartup,
                format!(
                    "no progress bytes under {} within --startup-timeout-seconds {}",
                    dir.display(),
                    self.startup_timeout_s
                ),
            ))
        } else if self.seen_progress && unchanged > self.stale_progress_s {
            Some((
                C::TimeoutStaleTick,
                format!(
                    "progress under {} unchanged for {unchanged:.1}s (more than \
                     --stale-progress-seconds {})",
                    dir.display(),
                    self.stale_progress_s
                ),
            ))
        } else {
            None
        }
    }

    /// Seconds since the progress last changed; None before the first byte.
    pub fn age_s(&self, elapsed_s: f64) -> Option<f64> {
        self.seen_progress.then_some(elapsed_s - self.last_change_s)
    }
}

/// What watching found.
pub struct Watched {
    /// The monitor's classification when it stopped watching before the command exited.
    pub monitor: Option<(C, String)>,
    /// The samples.
    pub samples: SampleLog,
    /// Every process of the tree a sample saw, by pid and start ticks.
    pub seen: HashSet<(u32, u64)>,
}

/// Sample `g` every `interval` from `start` until it exits, `stop` is set, or `clock` says it
/// is stuck; every sample is shown on `status`.
pub fn watch(
    g: &mut Group,
    sampler: &Sampler,
    interval: Duration,
    mut clock: ProgressClock,
    stop: &AtomicBool,
    status: &mut Status,
    start: Instant,
) -> Watched {
    let (pgid, root) = (g.pgid, g.pid());
    let mut samples = SampleLog::new(super::samples::MAX_UNITS);
    let mut seen = HashSet::new();
    let mut next_sample = start;
    let monitor = loop {
        if stop.load(Ordering::SeqCst) {
            break Some((
                C::ExternalCancellation,
                "cancelled (SIGINT/SIGTERM to tally); the command's group was ended".into(),
            ));
        }
        match g.poll() {
            Ok(true) => break None,
            Ok(false) => {}
            Err(e) => {
                break Some((
                    C::MonitorFailure,
                    format!("cannot wait for the command: {e}"),
                ))
            }
        }
        let now = Instant::now();
        if now >= next_sample {
            let elapsed = (now - start).as_secs_f64();
            let s = match sampler.sample(elapsed, pgid, root) {
                Ok(s) => s,
                Err(e) => break Some((C::MonitorFailure, format!("cannot sample: {e}"))),
            };
            let stuck = clock.observe(elapsed, s.progress.bytes_total, &sampler.progress_dir);
            status.sample(samples.taken() + 1, &s, clock.age_s(elapsed));
            for p in &s.process {
                if let Ok(pid) = u32::try_from(p.pid) {
                    seen.insert((pid, p.start_ticks));
                }
            }
            samples.push(s);
            next_sample = (next_sample + interval).max(now);
            if stuck.is_some() {
                break stuck;
            }
        }
        std::thread::sleep(POLL.min(next_sample.saturating_duration_since(Instant::now())));
    };
    Watched {
        monitor,
        samples,
        seen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(clock: &mut ProgressClock, series: &[(f64, u64)]) -> Option<(C, String)> {
        series
            .iter()
            .find_map(|(t, b)| clock.observe(*t, *b, Path::new("/runs/a")))
    }

    #[test]
    fn no_byte_before_the_startup_timeout() {
        let mut c = ProgressClock::new(10.0, 2.0, 0);
        let got = run(&mut c, &[(0.0, 0), (5.0, 0), (10.0, 0), (10.5, 0)]).unwrap();
        assert_eq!(got.0, C::TimeoutStartup);
        assert_eq!(
            got.1,
            "no progress bytes under /runs/a within --startup-timeout-seconds 10"
        );
        // Waiting for the first byte is not staleness, however long under the timeout.
        let mut c = ProgressClock::new(10.0, 2.0, 0);
        assert_eq!(run(&mut c, &[(0.0, 0), (9.0, 0), (9.5, 100)]), None);
        // A resumed run's old files are no progress; a change of them is.
        let mut c = ProgressClock::new(10.0, 2.0, 5000);
        assert_eq!(run(&mut c, &[(0.0, 5000), (9.0, 5000)]), None);
        assert_eq!(c.age_s(9.0), None);
        let got = run(&mut c, &[(10.5, 5000)]).unwrap();
        assert_eq!(got.0, C::TimeoutStartup);
        let mut c = ProgressClock::new(10.0, 2.0, 5000);
        assert_eq!(run(&mut c, &[(0.0, 5000), (9.0, 5100), (10.5, 5100)]), None);
    }

    #[test]
    fn unchanged_bytes_for_longer_than_the_stale_timeout() {
        let mut c = ProgressClock::new(600.0, 2.0, 0);
        assert_eq!(run(&mut c, &[(0.0, 10), (1.0, 20), (3.0, 20)]), None);
        assert_eq!(c.age_s(3.0), Some(2.0));
        let got = run(&mut c, &[(3.5, 20)]).unwrap();
        assert_eq!(got.0, C::TimeoutStaleTick);
        assert!(got.1.contains("unchanged for 2.5s"), "{}", got.1);
        // Any change resets it, shrinking too (a rotated log).
        let mut c = ProgressClock::new(600.0, 2.0, 0);
        assert_eq!(
            run(&mut c, &[(0.0, 10), (2.0, 10), (2.5, 5), (4.0, 5)]),
            None
        );
        assert_eq!(c.age_s(4.0), Some(1.5));
    }
}
