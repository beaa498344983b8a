//! An event file written to object storage as immutable segments (docs/contract/object-storage.md
//! "Writing"): object stores have no append, so the run's events go into a sequence of event
//! files, each written in the local staging directory and put whole by the [`Uploader`] once it
//! is closed. How segments are named and when one closes is [`SegmentRoll`]'s, the rule the
//! Logger's segments follow too; the roll is decided here, in the write path, never by a
//! thread beside it. What is this writer's own: a segment with events kept from a refusing
//! disk never closes, and `flush`/`close` wait for the store and raise or warn.

use crate::upload::{Report, Uploader};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tally::kept_events::KeepingEventFile;
use tally::segments::SegmentRoll;
use tally::{Error, OnStorageError, Result};
use tally_tfevents::WriterOptions;

pub use tally::upload::Roll;

/// How long `flush` waits for the store before it says the events are not in it yet.
pub const FLUSH_WAIT: Duration = Duration::from_secs(30);
/// How long `close` waits for a store that refuses before leaving the rest to the uploader.
pub const CLOSE_WAIT: Duration = Duration::from_secs(10);

/// The open segment of a run's event file in the bucket, and how to name and roll the next.
#[derive(Debug)]
pub struct SegmentedEventFile {
    file: KeepingEventFile,
    on_error: OnStorageError,
    roll: SegmentRoll,
    uploader: Arc<Uploader>,
}

impl SegmentedEventFile {
    /// The first segment in `dir` (a directory below `uploader`'s staging directory).
    pub fn open(
        dir: &Path,
        options: WriterOptions,
        on_error: OnStorageError,
        roll: Roll,
        uploader: Arc<Uploader>,
    ) -> Result<Self> {
        let (roll, file) = SegmentRoll::open_first(dir, options, roll)?;
        Ok(SegmentedEventFile {
            file: KeepingEventFile::new(file, on_error),
            on_error,
            roll,
            uploader,
        })
    }

    /// The open segment's path in staging.
    pub fn path(&self) -> &Path {
        self.file.file().path()
    }

    /// Write one event at `step` (`None`: a step not known here, which never rolls), closing
    /// the open segment first when it is due and `step` passes every step written so far.
    /// Faults are the staging disk's (as [`KeepingEventFile::write_with`]) and the store's
    /// outage begun or ended, said once ([`Self::report_store`]).
    pub fn write_with(
        &mut self,
        step: Option<i64>,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> Result<()> {
        if let Some(s) = step {
            // Events kept from a refusing disk are in no file yet: the segment waits for them.
            if self.file.pending() == 0 && self.roll.due(s, self.file.file().bytes_written()) {
                self.roll_over();
            }
            self.roll.written(s);
        }
        let written = self.file.write_with(encode);
        let reported = self.report_store();
        written.and(reported)
    }

    /// Close the open segment, hand it to the uploader and write on in the next (none when it
    /// cannot be opened: the open one stays open, [`SegmentRoll::open_next`]).
    fn roll_over(&mut self) {
        let Some(next) = self.roll.open_next() else {
            return;
        };
        let done = std::mem::replace(&mut self.file, KeepingEventFile::new(next, self.on_error));
        let path = done.file().path().to_owned();
        if let Err(e) = done.close() {
            // Nothing was kept (a roll waits for that): a failure here is the file's close.
            eprintln!("tally: warning: {e}");
        }
        self.uploader.put(&path, None, true);
    }

    /// The store's outage begun or ended: raised once with `raise` (the call's event is kept),
    /// printed with `warn`; the end is always printed.
    pub fn report_store(&mut self) -> Result<()> {
        let mut raised = Ok(());
        for report in self.uploader.take_report() {
            let began = matches!(report, Report::Began(_));
            if began && self.on_error == OnStorageError::Raise && raised.is_ok() {
                raised = Err(fault(self.path(), report.to_string()));
            } else {
                eprintln!("tally: warning: {report}");
            }
        }
        raised
    }

    /// Write what the staging disk kept, then put the open segment as it stands and wait for
    /// it and every segment before it to be in the store: when it returns `Ok`, every event
    /// so far is durable there. A store that refuses or does not answer within
    /// [`FLUSH_WAIT`]: an error with `raise` (each time, as a full disk's `flush`), nothing
    /// with `warn`; the events stay in staging and are put later either way.
    pub fn flush(&mut self) -> Result<()> {
        self.file.flush()?;
        let len = self.file.file().bytes_written();
        let ticket = self.uploader.put(self.path(), Some(len), false);
        let waited = self.uploader.wait(ticket, FLUSH_WAIT);
        let reported = self.report_store();
        match waited {
            Err(cause) if self.on_error == OnStorageError::Raise => Err(fault(
                self.path(),
                format!(
                    "{} files are not in the bucket yet (kept in {} and put again until the \
                     store takes them): {cause}",
                    self.uploader.pending(),
                    self.uploader.staging().display()
                ),
            )),
            _ => reported,
        }
    }

    /// Close the open segment and put it; wait for every segment to be in the store, for at
    /// most [`CLOSE_WAIT`] while it refuses. What is still not in it is said (raised with
    /// `raise`): it stays in staging, put by the uploader while the process lives.
    pub fn close(self) -> Result<()> {
        let path = self.path().to_owned();
        let closed = self.file.close();
        self.uploader.put(&path, None, true);
        let left = self.uploader.drain(CLOSE_WAIT);
        // An outage's start and end not said yet: said now, whatever the outcome.
        for report in self.uploader.take_report() {
            eprintln!("tally: warning: {report}");
        }
        closed?;
        if left == 0 {
            return Ok(());
        }
        let staging = self.uploader.staging().display().to_string();
        let e = fault(
            &path,
            format!(
                "{left} files are not in {} after {} s of the store refusing: they stay in \
                 {staging} and are put while this process lives; copy that directory to the \
                 bucket if it ends first",
                self.uploader.url(),
                CLOSE_WAIT.as_secs(),
            ),
        );
        match self.on_error {
            OnStorageError::Raise => Err(e),
            OnStorageError::Warn => {
                eprintln!("tally: warning: {e}");
                Ok(())
            }
        }
    }
}

fn fault(path: &Path, message: String) -> Error {
    Error::EventFileFault {
        path: path.to_owned(),
        message,
    }
}
