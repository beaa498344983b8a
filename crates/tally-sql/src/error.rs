//! [`Error`]: everything a query over runs can fail with.

/// Everything a query can fail with; each message names the culprit.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the runs failed (the message names the file or directory).
    #[error(transparent)]
    Read(#[from] tally_read::Error),
    /// The query does not parse, names an unknown table or column, or is not a read-only
    /// query (DataFusion's message, which quotes the offending part).
    #[error("the query failed: {0}")]
    Query(String),
}

/// The engine's error (or Arrow's) as a query error, its message kept.
pub(crate) fn query_error(e: impl std::fmt::Display) -> Error {
    Error::Query(e.to_string())
}
