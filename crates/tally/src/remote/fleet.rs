//! A logger's remote sinks: one [`Follower`] each over the run's event files, finished
//! together within one deadline at close (docs/contract/remote-sinks.md "Finishing with a
//! deadline").

use super::follower::Follower;
use super::order::ordered_event_files;
use crate::error::{Error, Result};
use crate::health::SinkAcks;
use crate::sink::Sink;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tally_schema::artifacts::RemoteSinkProgress;

/// The remote sinks of one logger.
#[derive(Default)]
pub struct RemoteSinks {
    followers: Vec<Follower>,
}

impl RemoteSinks {
    /// Start a follower for each sink over the event files in `run_dir` (the logger's own,
    /// just created, is among them); `notify` reports outages and recoveries.
    pub fn start(
        sinks: Vec<Box<dyn Sink>>,
        run_dir: &Path,
        notify: impl Fn(String) + Send + Sync + 'static,
    ) -> Result<Self> {
        if sinks.is_empty() {
            return Ok(RemoteSinks::default());
        }
        let files =
            ordered_event_files(run_dir).map_err(Error::io("list event files in", run_dir))?;
        let notify = Arc::new(notify);
        let mut followers = Vec::new();
        for sink in sinks {
            let n = notify.clone();
            followers.push(Follower::spawn(
                sink,
                run_dir,
                files.clone(),
                Box::new(move |text| n(text)),
            )?);
        }
        Ok(RemoteSinks { followers })
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.followers.is_empty()
    }

    /// Each sink's name and what it acknowledged of the logger's event file, for the `sink`
    /// health rule (docs/contract/health.md "Sink").
    pub fn acks(&self) -> Vec<(String, Arc<SinkAcks>)> {
        self.followers
            .iter()
            .map(|f| (f.name().to_owned(), f.acks()))
            .collect()
    }

    /// Where each sink stands now, during the run (nothing once [`RemoteSinks::finish`]ed).
    pub fn progress(&self) -> Vec<RemoteSinkProgress> {
        self.followers.iter().map(Follower::progress).collect()
    }

    /// The event files are complete: let every sink send the rest, all within `timeout`.
    /// Returns where each stands, and one line for each that still has rows to receive.
    pub fn finish(
        &mut self,
        timeout: Duration,
        run_dir: &Path,
    ) -> (Vec<RemoteSinkProgress>, Vec<String>) {
        let deadline = Instant::now() + timeout;
        let mut progress = Vec::new();
        let mut left = Vec::new();
        for mut f in std::mem::take(&mut self.followers) {
            let p = f.finish(deadline.saturating_duration_since(Instant::now()));
            if p.pending > 0 {
                let sent = p.sent_through_step.map_or_else(
                    || "none sent yet".to_owned(),
                    |s| format!("sent through step {s}"),
                );
                left.push(format!(
                    "{} has {} rows of this run still to receive ({sent}); they are in the event \
                     file: tally sync {} --to {}",
                    p.name,
                    p.pending,
                    run_dir.display(),
                    p.name
                ));
            }
            progress.push(p);
        }
        (progress, left)
    }
}
