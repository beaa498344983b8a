//! Sink failures told through the next `step`, `flush` or `close`
//! (docs/contract/run-artifacts.md "Storage faults").

use super::Logger;
use crate::error::{Error, Result};
use crate::input::OnStorageError;
use crate::terminal::Level;
use tally_clock::Clock;

impl Logger {
    /// Report the sink failures not reported yet (one atomic read when there is none): each is
    /// shown on the terminal; the first is raised, or with `on_storage_error="warn"` every one
    /// goes to stderr and nothing is raised.
    pub(super) fn take_failure(&mut self) -> Result<()> {
        let count = self.writer.failure_count();
        if count <= self.reported_failures {
            return Ok(());
        }
        let new: Vec<_> = (self.reported_failures..count)
            .filter_map(|i| self.writer.failure(i))
            .collect();
        self.reported_failures = count;
        let t = self.clock.monotonic();
        let warn = self.config.on_storage_error == OnStorageError::Warn;
        for f in &new {
            if warn {
                eprintln!("tally: warning: {f}");
            }
            let level = if warn { Level::Warning } else { Level::Error };
            self.with_terminal(|s| s.message(t, level, f.to_string()));
        }
        match new.into_iter().next() {
            Some(f) if !warn => Err(Error::Sink {
                sink: f.sink,
                iteration: f.iteration,
                message: f.message,
            }),
            _ => Ok(()),
        }
    }
}
