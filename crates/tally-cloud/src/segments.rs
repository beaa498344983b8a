//! An event file written to object storage as immutable segments (docs/contract/object-storage.md
//! "Writing"): object stores have no append, so the run's events go into a sequence of event
//! files, each written in the local staging directory and put whole by the [`Uploader`] once it
//! is closed. A segment closes after [`Roll::after`] of writing or [`Roll::bytes`], and only
//! before an event whose step passes every step written so far: a later file repeating an
//! earlier file's step is a step going back to the readers (docs/contract/consumers.md "A run's
//! event files"), so the roll is decided here, in the write path, never by a thread beside it.
//! Names sort in writing order (`<stem>.<sequence, 10 digits><suffix>`), and each segment's
//! `file_version` wall time is never before its predecessor's: TensorBoard's order (names)
//! and tally's (first wall time, then name) are both the writing order.

use crate::upload::{Report, Uploader};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tally::kept_events::KeepingEventFile;
use tally::{Error, OnStorageError, Result};
use tally_tfevents::{event_file_name, EventFileWriter, WriterOptions};

pub use tally::upload::Roll;

/// How long `flush` waits for the store before it says the events are not in it yet.
pub const FLUSH_WAIT: Duration = Duration::from_secs(30);
/// How long `close` waits for a store that refuses before leaving the rest to the uploader.
pub const CLOSE_WAIT: Duration = Duration::from_secs(10);

/// Numbers the segment sequences of this process: two in one directory never share a stem.
static NEXT_STEM: AtomicU64 = AtomicU64::new(0);

/// The open segment of a run's event file in the bucket, and how to name and roll the next.
#[derive(Debug)]
pub struct SegmentedEventFile {
    file: KeepingEventFile,
    dir: PathBuf,
    /// `events.out.tfevents.<secs>.<host>.<pid>.<n>`: every segment's name starts so.
    stem: String,
    seq: u64,
    options: WriterOptions,
    on_error: OnStorageError,
    opened: Instant,
    /// The open segment's `file_version` wall time.
    created: SystemTime,
    /// The largest step written to any segment so far.
    max_step: Option<i64>,
    /// A roll that could not open the next segment: said once, retried at the next roll.
    roll_failed: bool,
    roll: Roll,
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
        let secs = options
            .created_at
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let n = NEXT_STEM.fetch_add(1, Ordering::Relaxed);
        let stem = event_file_name(secs, &options.hostname, options.pid, n);
        let created = options.created_at;
        let file = open_segment(dir, &stem, 0, &options, created)?;
        Ok(SegmentedEventFile {
            file: KeepingEventFile::new(file, on_error),
            dir: dir.to_owned(),
            stem,
            seq: 0,
            options,
            on_error,
            opened: Instant::now(),
            created,
            max_step: None,
            roll_failed: false,
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
            let passes = self.max_step.is_none_or(|m| s > m);
            if passes && self.due() {
                self.roll_over();
            }
            self.max_step = Some(self.max_step.map_or(s, |m| m.max(s)));
        }
        let written = self.file.write_with(encode);
        let reported = self.report_store();
        written.and(reported)
    }

    fn due(&self) -> bool {
        self.file.pending() == 0
            && (self.opened.elapsed() >= self.roll.after
                || self.file.file().bytes_written() >= self.roll.bytes)
    }

    /// Close the open segment, hand it to the uploader and open the next. A next segment that
    /// cannot be opened (the staging disk) leaves the open one open: nothing is lost.
    fn roll_over(&mut self) {
        // Never before its predecessor: tally orders a run's files by this wall time.
        let created = SystemTime::now().max(self.created);
        let next = match open_segment(&self.dir, &self.stem, self.seq + 1, &self.options, created) {
            Ok(f) => f,
            Err(e) => {
                if !self.roll_failed {
                    self.roll_failed = true;
                    eprintln!(
                        "tally: warning: {e}; the open segment stays open (its events reach the \
                         bucket at its next roll, flush or close)"
                    );
                }
                return;
            }
        };
        self.roll_failed = false;
        let done = std::mem::replace(&mut self.file, KeepingEventFile::new(next, self.on_error));
        let path = done.file().path().to_owned();
        if let Err(e) = done.close() {
            // Nothing was kept (a roll waits for that): a failure here is the file's close.
            eprintln!("tally: warning: {e}");
        }
        self.uploader.put(&path, None, true);
        self.seq += 1;
        self.created = created;
        self.opened = Instant::now();
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

/// Segment `seq` of `stem` in `dir`, its `file_version` event at `created`.
fn open_segment(
    dir: &Path,
    stem: &str,
    seq: u64,
    options: &WriterOptions,
    created: SystemTime,
) -> Result<EventFileWriter> {
    let name = format!("{stem}.{seq:010}{}", options.suffix);
    let options = WriterOptions {
        created_at: created,
        ..options.clone()
    };
    Ok(EventFileWriter::open_named(dir, &name, options)?)
}
