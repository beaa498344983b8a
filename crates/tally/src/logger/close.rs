//! The durability point and the end of a run: `flush`, `close` and what they report
//! (docs/contract/run-artifacts.md "Storage faults", "Status").

use super::Logger;
use crate::error::{Error, Result};
use crate::input::OnStorageError;
use crate::run::{write_run_summary_in, RUN_CONFIG_FILE};
use crate::terminal::Level;
use tally_clock::Clock;
use tally_schema::artifacts::RunStatus;

impl Logger {
    /// Wait until every step so far is written and flushed to its sinks (steps kept after a
    /// storage fault are retried first; those the disk still refuses stay kept).
    ///
    /// The durability point: when it returns `Ok`, every accepted step is in the event file
    /// and fsynced; with `on_storage_error` `raise` it fails each time steps stay kept
    /// (docs/contract/run-artifacts.md "Storage faults").
    pub fn flush(&mut self) -> Result<()> {
        self.writer.flush();
        self.take_failure()?;
        let pending = self.writer.storage().pending;
        if pending == 0 || self.config.on_storage_error == OnStorageError::Warn {
            return Ok(());
        }
        let count = self.writer.failure_count();
        let cause = count
            .checked_sub(1)
            .and_then(|i| self.writer.failure(i))
            .map_or_else(String::new, |f| f.message);
        Err(Error::NotDurable { pending, cause })
    }

    /// Write the final `run_summary.json` and close every sink. Closing twice is harmless.
    ///
    /// The writer retries what storage faults kept before it stops; the final summary is
    /// written last, with the counts that leaves: a run that would end `completed` or
    /// `interrupted` but lost steps ends `degraded` (docs/contract/run-artifacts.md "Storage
    /// faults").
    pub fn close(&mut self, status: RunStatus) -> Result<()> {
        self.close_with_reason(status, None)
    }

    /// `close`, with why the run ended so (an uncaught exception's type and message) recorded
    /// as `status_reason` when no check of the close replaced it (docs/contract/run-artifacts.md
    /// "Status").
    pub fn close_with_reason(&mut self, status: RunStatus, reason: Option<String>) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        // No sample after the last step's close begins (docs/contract/system-metrics.md).
        if let Some(mut s) = self.system.take() {
            s.stop();
        }
        self.rank_feed = None;
        // A run being closed is not stalled.
        if let Some((x, _)) = self.stall_exit.as_mut() {
            x.stop();
        }
        // The video the script wrote beside its checkpoints is the run's, unless a call named
        // one (docs/contract/remote-sinks.md "The playback video").
        let video = self.run_dir.join(crate::run::PLAY_VIDEO_FILE);
        if self.summary.play_video_path.is_none() && video.is_file() {
            self.summary.play_video_path = Some(video.to_string_lossy().into_owned());
        }
        self.writer.finish();
        self.finish_remote();
        self.finish_webhook();
        let trace_error = self.tracer.finish().err();
        if status == RunStatus::Failed {
            if let Some(documents) = self.untouched.take() {
                return self.close_untouched(documents, trace_error);
            }
        }
        let mut config_error = None;
        if self.user.take_changed() {
            self.run_config.user_metrics = self.user_metrics_documented();
            let path = self.run_dir.join(RUN_CONFIG_FILE);
            // Redacted like every artefact (docs/contract/run-artifacts.md "Secrets").
            config_error = crate::run::write_redacted(&path, &self.run_config).err();
        }
        let storage = self.writer.storage();
        // Steps an earlier segment lost are still missing from the run's files.
        let lost_in_run = storage.lost + self.carried.lost_iterations;
        let status = match status {
            RunStatus::Completed | RunStatus::Interrupted
                if lost_in_run > 0 || storage.pending > 0 =>
            {
                RunStatus::Degraded
            }
            s => s,
        };
        let (status, manifest_error) = self.judge_completed(status);
        if self.summary.status_reason.is_none() {
            self.summary.status_reason = reason;
        }
        let summary = self.current_summary(status, true);
        let t = self.clock.monotonic();
        let mut text = format!("Run {}", status.as_str());
        if storage.lost > 0 {
            text += &format!(
                ": {} logged iterations are not in the event file",
                storage.lost
            );
        }
        self.with_terminal(|s| s.message(t, Level::Info, text));
        if let Some(e) = &manifest_error {
            let text = e.to_string();
            self.with_terminal(|s| s.message(t, Level::Error, text));
        }
        let written = write_run_summary_in(&self.run_dir, &summary, &self.room);
        self.room.release();
        let lost = (storage.lost > 0).then(|| self.writer.lost_steps());
        let storage = written.and(config_error.map_or(Ok(()), Err));
        self.end_close(storage, trace_error, manifest_error, lost)
    }

    /// The error `close` raises when steps were lost: how many, which iterations, why, and
    /// whether `run_summary.json` could record it (docs/contract/run-artifacts.md "Storage
    /// faults").
    fn lost_error(
        (sink, lost): (String, crate::lost::LostSteps),
        cause: Option<&str>,
        storage: &Result<()>,
    ) -> Error {
        let mut message = format!(
            "{} logged steps are lost, not in the event file ({})",
            lost.total(),
            lost.describe()
        );
        if let Some(why) = cause {
            message += &format!(": {why}");
        }
        match storage {
            Ok(()) => message += "; run_summary.json counts them in lost_iterations",
            Err(e) => message += &format!("; run_summary.json could not record them: {e}"),
        }
        Error::Sink {
            sink,
            iteration: lost.first().unwrap_or(0),
            message,
        }
    }

    /// The end of every close, once the run's documents are final: the run's lock freed (a
    /// resume, in this process too, may take it), the view stopped (its last frame shows the
    /// closed run, even when writing failed), then the first error, in order: storage (only
    /// said under `on_storage_error="warn"`), trace, a sink's failure, the manifest, the view.
    fn end_close(
        &mut self,
        storage: Result<()>,
        trace_error: Option<Error>,
        manifest_error: Option<Error>,
        lost: Option<(String, crate::lost::LostSteps)>,
    ) -> Result<()> {
        self.lock = None;
        let failure = self.take_failure();
        let shown = self.view.take().map_or(Ok(()), |mut v| v.stop());
        let warn = self.config.on_storage_error == OnStorageError::Warn;
        if let Some(lost) = lost.filter(|_| !warn) {
            // Said first, whatever else failed: what the run lost is what its user must hear.
            let cause = (0..self.writer.failure_count())
                .filter_map(|i| self.writer.failure(i))
                .find(|f| f.sink == lost.0)
                .map(|f| f.message.split(';').next().unwrap_or_default().to_owned());
            return Err(Self::lost_error(lost, cause.as_deref(), &storage));
        }
        match storage {
            Err(e) if self.config.on_storage_error == OnStorageError::Warn => {
                eprintln!("tally: warning: {e}");
            }
            other => other?,
        }
        if let Some(e) = trace_error {
            return Err(e);
        }
        failure?;
        if let Some(e) = manifest_error {
            return Err(e);
        }
        shown.map_err(Error::View)
    }

    /// Close a resumed run that failed before this logger accepted a step: its
    /// `run_config.json` and `run_summary.json` go back as the resume found them and the new
    /// event file (nothing but its header, and the purge marker of a rewind) is removed, so the
    /// run keeps its earlier status and files and resumes again as before
    /// (docs/contract/run-artifacts.md "Resume").
    fn close_untouched(
        &mut self,
        documents: crate::resume::PriorDocuments,
        trace_error: Option<Error>,
    ) -> Result<()> {
        let config = self.run_dir.join(RUN_CONFIG_FILE);
        let summary = self.run_dir.join(crate::run::RUN_SUMMARY_FILE);
        self.room.release();
        let mut put_back = crate::atomic::write_atomic(&config, documents.run_config.as_bytes())
            .and_then(|()| crate::atomic::write_atomic(&summary, documents.run_summary.as_bytes()));
        if let Some(file) = self.event_file.take() {
            if let Err(e) = std::fs::remove_file(&file) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    put_back = put_back.and(Err(Error::io("remove", file)(e)));
                }
            }
        }
        let t = self.clock.monotonic();
        self.with_terminal(|s| {
            s.message(
                t,
                Level::Info,
                "Resume failed before its first step: the run is left as it was".to_owned(),
            )
        });
        self.end_close(put_back, trace_error, None, None)
    }

    /// Let the webhook post the findings it has not, within its close bound; what it could
    /// not is counted undelivered and said in one line (docs/contract/health.md "Webhook").
    fn finish_webhook(&mut self) {
        let Some(w) = self.webhook.as_mut() else {
            return;
        };
        let p = w.finish();
        if p.undelivered > 0 {
            let text = format!(
                "health webhook: {} finding(s) not delivered to {}; counted in run_summary.json \
                 health_alerts",
                p.undelivered, p.destination
            );
            let t = self.clock.monotonic();
            self.with_terminal(|s| s.message(t, Level::Warning, text));
        }
    }

    /// Let the remote sinks send what the closed event file holds within
    /// `remote_finish_timeout`; what is left is recorded, and said in one line, for `tally sync`.
    fn finish_remote(&mut self) {
        if self.remotes.is_empty() {
            return;
        }
        let timeout = std::time::Duration::from_secs_f64(self.config.remote_finish_timeout_secs);
        let (progress, left) = self.remotes.finish(timeout, &self.run_dir);
        for text in left {
            eprintln!("tally: {text}");
            let t = self.clock.monotonic();
            self.with_terminal(|s| s.message(t, Level::Warning, text));
        }
        self.summary.remote_sinks = progress;
    }
}
