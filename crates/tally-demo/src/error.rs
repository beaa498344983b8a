//! [`Error`]: everything a demo run can fail with, each message the one `tally demo` prints
//! after `tally: `.

/// Why the demo refused its settings or could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag or `training.KEY=VALUE` setting the demo rejects.
    #[error("{0}")]
    Setting(String),
    /// The run's logger failed.
    #[error(transparent)]
    Logger(#[from] tally::Error),
    /// A demo thread stopped or could not start, or an extra sink could not be built.
    #[error("{0}")]
    Run(String),
}
