//! A logger's system metrics' sampler: its samples go to the writer thread (the event file)
//! and the terminal state's System column (docs/contract/system-metrics.md).

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where a logger's samples go: its writer thread (the event file) and its panel.
struct ToLogger {
    feed: crate::writer::SystemFeed,
    terminal: Arc<Mutex<crate::terminal::TerminalState>>,
    clock: Arc<dyn tally_clock::Clock>,
}

impl crate::system::Deliver for ToLogger {
    fn sample(&mut self, sample: crate::system::Sample) {
        let mut t = self.terminal.lock().unwrap_or_else(|e| e.into_inner());
        t.system_sample(&sample.values);
        drop(t);
        self.feed.send(sample);
    }

    fn note(&mut self, text: &str) {
        let now = self.clock.monotonic();
        let mut t = self.terminal.lock().unwrap_or_else(|e| e.into_inner());
        t.note(now, text.to_owned());
    }
}

/// Start a logger's sampler (`config.system_metrics` on), its wall times on the run's clock.
pub(super) fn start(
    config: &crate::input::LoggerConfig,
    run_dir: &std::path::Path,
    feed: crate::writer::SystemFeed,
    terminal: Arc<Mutex<crate::terminal::TerminalState>>,
    clock: Arc<dyn tally_clock::Clock>,
) -> crate::Result<crate::system::Sampler> {
    let wall_clock = clock.clone();
    crate::system::Sampler::spawn(
        Duration::from_secs_f64(config.system_interval_secs),
        run_dir.to_owned(),
        crate::system::gpu::Devices::All,
        Box::new(move || wall_clock.wall()),
        Box::new(ToLogger {
            feed,
            terminal,
            clock,
        }),
    )
    .map_err(crate::Error::io("start the system metrics thread", run_dir))
}
