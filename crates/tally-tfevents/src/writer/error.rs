//! What opening, writing and restoring an event file can fail with, each naming the file.

use crate::tf_record::WriteRecordError;
use std::io;
use std::path::PathBuf;
use std::time::SystemTime;

/// Errors from [`EventFileWriter::open`](crate::EventFileWriter::open).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The host name cannot be part of a file name.
    #[error("hostname {hostname:?} cannot be part of an event file name (empty, or contains a path separator or NUL)")]
    InvalidHostname {
        /// The rejected host name.
        hostname: String,
    },
    /// The creation time is before the Unix epoch.
    #[error("creation time {created_at:?} is before the unix epoch")]
    CreationTimeBeforeEpoch {
        /// The rejected time.
        created_at: SystemTime,
    },
    /// The file could not be created.
    #[error("{}: cannot create event file: {source}", .path.display())]
    Create {
        /// The file that could not be created.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The first event could not be written.
    #[error("{}: cannot write the file_version event: {source}", .path.display())]
    WriteHeader {
        /// The new file.
        path: PathBuf,
        /// The underlying error.
        source: WriteRecordError,
    },
    /// The new file could not be fsynced.
    #[error("{}: fsync of new event file failed: {source}", .path.display())]
    Sync {
        /// The new file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// Errors from writing to an [`EventFileWriter`](crate::EventFileWriter).
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A tag is empty; nothing was written.
    #[error("{}: step {step}: tag #{index} is empty; nothing written", .path.display())]
    EmptyTag {
        /// The event file.
        path: PathBuf,
        /// The step being written.
        step: i64,
        /// Position of the empty tag in the call's list.
        index: usize,
    },
    /// A tag appears twice in one step; nothing was written.
    #[error("{}: step {step}: tag {tag:?} appears more than once; nothing written", .path.display())]
    DuplicateTag {
        /// The event file.
        path: PathBuf,
        /// The step being written.
        step: i64,
        /// The repeated tag.
        tag: String,
    },
    /// Writing the record failed.
    #[error("{}: {source}", .path.display())]
    Record {
        /// The event file.
        path: PathBuf,
        /// The underlying error, with the record's offset.
        source: WriteRecordError,
    },
    /// A failed write left part of a record at the end of the file, and cutting the file back
    /// to the last whole record failed; nothing more is written until that succeeds.
    #[error("{}: cannot cut a partly written record back to byte {offset}: {source}", .path.display())]
    Repair {
        /// The event file.
        path: PathBuf,
        /// The last record boundary.
        offset: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// fsync failed.
    #[error("{}: fsync after byte {offset} failed: {source}", .path.display())]
    Sync {
        /// The event file.
        path: PathBuf,
        /// Bytes written when fsync was attempted.
        offset: u64,
        /// The underlying error.
        source: io::Error,
    },
}

/// An unlinked event file could not be put back at its path.
#[derive(Debug, thiserror::Error)]
#[error("cannot restore the event file {}: {source}", path.display())]
pub struct RelinkError {
    /// The event file's path.
    pub path: PathBuf,
    /// The OS error.
    #[source]
    pub source: io::Error,
}
