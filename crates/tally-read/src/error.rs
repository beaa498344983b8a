//! [`Error`]: everything reading a run can fail with. Each message names the culprit (the
//! path, and for event files the byte offset); a front end prints it as it is.

use std::path::PathBuf;

/// Everything reading, analysing or exporting runs can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter out of its range (`last` of zero, say), named as the command line spells it.
    #[error("{0}")]
    Setting(String),
    /// The input breaks a rule a reader checks: not a run directory, no or several runs, steps
    /// going back across a run's files, the schema-v1 gate, a canonical/legacy mix.
    #[error("{0}")]
    Refused(String),
    /// A file or directory could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file beside an event file does not parse.
    #[error("{}: not valid JSON: {source}", .path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// Writing the output (an export's stream) failed.
    #[error("{0}")]
    Output(#[from] std::io::Error),
    /// An event file could not be read (the message names the file and byte offset).
    #[error(transparent)]
    Events(#[from] tally_tfevents::ReadError),
    /// The Parquet writer failed on the output file.
    #[error("{}: {source}", .path.display())]
    Parquet {
        /// The output file.
        path: PathBuf,
        /// The writer's error.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// The logger's own reader of a run artefact (the trace) failed.
    #[error(transparent)]
    Logger(#[from] tally::Error),
    /// A thread of the export stopped without saying why.
    #[error("{0}")]
    Stopped(String),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
