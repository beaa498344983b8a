//! Where an `EventWriter`'s events go: one event file on local disk, or the segments of a run
//! in object storage (docs/contract/object-storage.md "Writing"), behind the calls both share.

use std::path::Path;
use tally::kept_events::KeepingEventFile;
use tally_cloud::SegmentedEventFile;

/// The open event file of an `EventWriter`.
// One per writer, made once and never moved on the hot path: the sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Output {
    /// A file in a local directory, keeping what a full disk refuses.
    Local(KeepingEventFile),
    /// Segments staged locally and put to a bucket by the run's uploader.
    Bucket(SegmentedEventFile),
}

impl Output {
    /// Write one event at `step` (`None` when the caller does not know it), encoded into a
    /// reused buffer.
    pub fn write_with(
        &mut self,
        step: Option<i64>,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> Result<(), tally::Error> {
        match self {
            Output::Local(f) => f.write_with(encode),
            Output::Bucket(s) => s.write_with(step, encode),
        }
    }

    /// Write one serialized event at `step`.
    pub fn write_bytes(&mut self, step: Option<i64>, event: &[u8]) -> Result<(), tally::Error> {
        self.write_with(step, |buf| buf.extend_from_slice(event))
    }

    /// Local: every event in the file; bucket: every event in the store.
    pub fn flush(&mut self) -> Result<(), tally::Error> {
        match self {
            Output::Local(f) => f.flush(),
            Output::Bucket(s) => s.flush(),
        }
    }

    /// Close the file (and put the last segment).
    pub fn close(self) -> Result<(), tally::Error> {
        match self {
            Output::Local(f) => f.close(),
            Output::Bucket(s) => s.close(),
        }
    }

    /// The open file's path (the open segment's, in staging).
    pub fn path(&self) -> &Path {
        match self {
            Output::Local(f) => f.file().path(),
            Output::Bucket(s) => s.path(),
        }
    }
}
