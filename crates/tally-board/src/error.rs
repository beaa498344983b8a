//! The board's one error type: each message names the culprit.

use thiserror::Error;

/// Why the board could not start or answer.
#[derive(Debug, Error)]
pub enum Error {
    /// An I/O failure on `what` (a path, an address, the random source).
    #[error("{what}: {source}")]
    Io {
        /// What was being read, written or bound.
        what: String,
        /// The failure.
        source: std::io::Error,
    },
    /// A run's read was stopped because no one waits for it any more (the page asking went
    /// away); what was read is kept for the next request.
    #[error("{0}: the read was stopped, no one is waiting for it any more")]
    NotWanted(String),
    /// Reading runs failed.
    #[error(transparent)]
    Read(#[from] tally_read::Error),
}
