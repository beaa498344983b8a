//! The one error type of the tally facade.

use std::path::PathBuf;

/// Everything that can go wrong in the tally facade, each naming its culprit.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file-system operation failed.
    #[error("{op} {}: {source}", .path.display())]
    Io {
        /// What was being done (`create run directory`, `write`, ...).
        op: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A name that would become a path component is unusable.
    #[error("invalid {kind} '{value}': {reason}")]
    InvalidName {
        /// Which name (`task`, `sim backend`, `algo`).
        kind: &'static str,
        /// The rejected value (escaped for display).
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An explicit `log_dir` already holds another run.
    #[error("log_dir {} already holds a run ({} exists): choose another directory", .0.display(), .1)]
    RunDirTaken(PathBuf, &'static str),
    /// Encoding an artefact failed.
    #[error("encode {}: {source}", .path.display())]
    Json {
        /// The artefact path.
        path: PathBuf,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
}

/// Result alias of the facade.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { op, path, source }
    }
}
