//! The event file as segments, for a run written to object storage
//! (docs/contract/object-storage.md "Writing"): object stores have no append, so the event file
//! is a sequence of event files, each closed and handed to the run's upload whole.
//! [`SegmentRoll`] is the one rule both writers follow (the Logger's [`Segments`] here, on the
//! writer thread, and `tally-cloud`'s `SegmentedEventFile` for a `SummaryWriter`): a segment
//! closes only when due and only before a step past every step written (a later file repeating
//! a step is a step going back to the readers, docs/contract/consumers.md "A run's event
//! files"); names sort in writing order (`<stem>.<sequence, 10 digits><suffix>`) and each
//! segment's `file_version` wall time is never before its predecessor's: TensorBoard's order
//! (names) and tally's (first wall time, then name) are both the writing order.

use crate::run::RUN_SUMMARY_FILE;
use crate::upload::{Roll, Upload};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tally_tfevents::{event_file_name, EventFileWriter, OpenError, WriterOptions};

/// Numbers the segment sequences of this process: two in one directory never share a stem.
static NEXT_STEM: AtomicU64 = AtomicU64::new(0);

/// How the open segment is named and when the next one opens.
#[derive(Debug)]
pub struct SegmentRoll {
    dir: PathBuf,
    /// `events.out.tfevents.<secs>.<host>.<pid>.<n>`: every segment's name starts so.
    stem: String,
    seq: u64,
    options: WriterOptions,
    roll: Roll,
    opened: Instant,
    /// The open segment's `file_version` wall time.
    created: SystemTime,
    /// The largest step written to any segment so far.
    max_step: Option<i64>,
    /// A roll that could not open the next segment: said once, retried at the next roll.
    roll_failed: bool,
}

impl SegmentRoll {
    /// The first segment in `dir`, and the rule for the segments that follow it.
    pub fn open_first(
        dir: &Path,
        options: WriterOptions,
        roll: Roll,
    ) -> Result<(SegmentRoll, EventFileWriter), OpenError> {
        let secs = options
            .created_at
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let n = NEXT_STEM.fetch_add(1, Ordering::Relaxed);
        let created = options.created_at;
        let segments = SegmentRoll {
            dir: dir.to_owned(),
            stem: event_file_name(secs, &options.hostname, options.pid, n),
            seq: 0,
            options,
            roll,
            opened: Instant::now(),
            created,
            max_step: None,
            roll_failed: false,
        };
        let first = segments.segment(0, created)?;
        Ok((segments, first))
    }

    /// The directory the segments are written in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the open segment (`bytes_written` so far) closes before an event at `step`:
    /// its time or size is up and `step` passes every step written.
    pub fn due(&self, step: i64, bytes_written: u64) -> bool {
        self.max_step.is_none_or(|m| step > m)
            && (self.opened.elapsed() >= self.roll.after || bytes_written >= self.roll.bytes)
    }

    /// The next segment, now the open one; the caller closes and hands on the one before.
    /// `None` when it cannot be opened (said once until a roll succeeds): the open segment
    /// stays open and nothing is lost.
    pub fn open_next(&mut self) -> Option<EventFileWriter> {
        // Never before its predecessor: tally orders a run's files by this wall time.
        let created = SystemTime::now().max(self.created);
        match self.segment(self.seq + 1, created) {
            Ok(next) => {
                self.roll_failed = false;
                self.seq += 1;
                self.created = created;
                self.opened = Instant::now();
                Some(next)
            }
            Err(e) => {
                if !std::mem::replace(&mut self.roll_failed, true) {
                    eprintln!(
                        "tally: warning: {e}; the open segment stays open (its events reach \
                         the bucket at its next roll, flush or close)"
                    );
                }
                None
            }
        }
    }

    /// An event at `step` is in the open segment.
    pub fn written(&mut self, step: i64) {
        self.max_step = Some(self.max_step.map_or(step, |m| m.max(step)));
    }

    /// Segment `seq`, its `file_version` event at `created`.
    fn segment(&self, seq: u64, created: SystemTime) -> Result<EventFileWriter, OpenError> {
        let name = format!("{}.{seq:010}{}", self.stem, self.options.suffix);
        let options = WriterOptions {
            created_at: created,
            ..self.options.clone()
        };
        EventFileWriter::open_named(&self.dir, &name, options)
    }
}

/// The Logger's segments: each closed one handed to the run's [`Upload`], with
/// `run_summary.json` put again.
pub struct Segments {
    upload: Arc<dyn Upload>,
    roll: SegmentRoll,
}

impl Segments {
    /// The first segment in `dir`, and the segments that follow it.
    pub fn open(
        dir: &Path,
        options: WriterOptions,
        upload: Arc<dyn Upload>,
    ) -> Result<(Segments, EventFileWriter), OpenError> {
        let (roll, first) = SegmentRoll::open_first(dir, options, Roll::from_env())?;
        Ok((Segments { upload, roll }, first))
    }

    /// Before an event at `step`: when the open segment is due, close it, hand it to the
    /// upload and write on in the next ([`SegmentRoll`]).
    pub fn before(&mut self, writer: &mut EventFileWriter, step: i64) {
        self.say();
        if !self.roll.due(step, writer.bytes_written()) {
            return;
        }
        let Some(next) = self.roll.open_next() else {
            return;
        };
        let done = std::mem::replace(writer, next);
        let path = done.path().to_owned();
        if let Err(e) = done.close() {
            eprintln!("tally: warning: {e}");
        }
        self.upload.put(&path, None, true);
        // The summary the writer thread last wrote goes up with each segment: the bucket's is
        // at most one segment behind its events.
        self.upload
            .put(&self.roll.dir().join(RUN_SUMMARY_FILE), None, false);
    }

    /// An event at `step` is in the open segment.
    pub fn written(&mut self, step: i64) {
        self.roll.written(step);
    }

    /// Put the open segment as it stands (`len` bytes; the same key is put again whole when
    /// it closes). Returns at once: the binding waits for the upload.
    pub fn flush(&mut self, path: &Path, len: u64) {
        self.upload.put(path, Some(len), false);
        self.say();
    }

    /// The last segment, closed: put whole and removed from staging once in the store.
    pub fn close(&mut self, path: &Path) {
        self.upload.put(path, None, true);
        self.say();
    }

    /// The store's outage begun or ended, said once each (docs/contract/object-storage.md
    /// "Writing"); steps never wait for the store.
    fn say(&self) {
        for report in self.upload.take_reports() {
            eprintln!("tally: warning: {report}");
        }
    }
}
