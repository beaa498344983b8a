//! What a soak can fail with before it has a verdict. A soak that ran and failed is not an
//! error but an [`Outcome`](crate::Outcome).

use std::path::PathBuf;

/// Everything `tally soak` can fail with; the messages are the ones it prints after `tally: `.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting that cannot be honoured, naming the flag (a usage error: the CLI exits 2).
    #[error("{0}")]
    Usage(String),
    /// A directory could not be created, or the working directory not read.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The monitor itself could not work: the signal handler could not be installed, or the
    /// artifact it wrote breaks its own contract.
    #[error("{0}")]
    Monitor(String),
    /// The artifact could not be written.
    #[error(transparent)]
    Write(#[from] tally::Error),
}
