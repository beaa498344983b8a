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
    /// The event file could not be created (a bad host name is a configuration error).
    #[error(transparent)]
    EventFile(#[from] tally_tfevents::OpenError),
    /// A write to an event file failed in a way that keeping the event cannot help (a record
    /// over the size cap, an fsync, a bad tag).
    #[error(transparent)]
    EventWrite(tally_tfevents::WriteError),
    /// A writer's event file refused writes: what it refused is kept, or lost as said
    /// (docs/contract/run-artifacts.md "Storage faults").
    #[error("{}: {message}", .path.display())]
    EventFileFault {
        /// The event file.
        path: PathBuf,
        /// What happened to the refused events.
        message: String,
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
    /// An explicit `log_dir` already holds another run (and `resume` was not asked for).
    #[error("log_dir {} already holds a run ({} exists): pass resume=True (Rust: LoggerConfig::resume) to append to it, or choose another directory", .0.display(), .1)]
    RunDirTaken(PathBuf, &'static str),
    /// Another live logger or writer holds the directory, named by the second field (`this
    /// process`, `process <pid>`) (docs/contract/run-artifacts.md "Resume").
    #[error("run directory {dir} is in use by {holder}: a live logger or writer holds its lock; a directory takes one writer at a time, so close that one first, or write to another directory", dir = .0.display(), holder = .1)]
    RunInUse(PathBuf, String),
    /// A step submission broke the schema or the step-axis contract; nothing was logged for it.
    #[error("invalid step at iteration {iteration}: {field}['{key}']: {reason}")]
    InvalidStep {
        /// The submitted iteration.
        iteration: u64,
        /// The StepInput field (`metrics`, `learner`, `collector`, `rewards`, ...).
        field: &'static str,
        /// The offending key.
        key: String,
        /// What is wrong, naming the replacement where one exists.
        reason: String,
    },
    /// A sink failed writing an earlier step; that step stays in the other sinks.
    #[error("{sink} sink failed at iteration {iteration}: {message}")]
    Sink {
        /// The sink name (`tensorboard`, `wandb`, ...).
        sink: String,
        /// The iteration whose write failed.
        iteration: u64,
        /// The sink's error.
        message: String,
    },
    /// `flush` returned with accepted steps still kept in memory after a storage fault: they
    /// are not in the event file yet.
    #[error(
        "{pending} accepted steps are not in the event file yet (kept in memory and retried \
         at the next step, flush and close): {cause}"
    )]
    NotDurable {
        /// Steps kept for a retry.
        pending: u64,
        /// The storage fault, as last reported.
        cause: String,
    },
    /// A health rule in `stop_on` fired: this step was not taken, the run stays open for
    /// `close` (docs/contract/health.md "In the logger").
    #[error("health stop: {}", crate::health::live::finding_text(.0))]
    HealthStop(Box<crate::health::Finding>),
    /// The ranks of one multi-rank step disagree on something that must be equal.
    #[error("rank reduction: {0}")]
    Ranks(String),
    /// The logger configuration is unusable.
    #[error("invalid logger config: {0}")]
    Config(String),
    /// The live view (the panel) failed to draw its last frame or restore the terminal.
    #[error("panel: {0}")]
    View(#[source] std::io::Error),
    /// The run's event files could not be read back (a remote sink's thread, `tally sync`);
    /// the message names the file and byte.
    #[error(transparent)]
    ReadBack(#[from] tally_tfevents::ReadError),
    /// A document the runner recorded for `run_summary.json` (the runtime manifest, backend
    /// diagnostics) breaks its contract; every violation names its `$` path.
    #[error("{what}: {}", .violations.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("; "))]
    Document {
        /// What was refused and what happened instead.
        what: String,
        /// Every violation, as `tally validate` reports it.
        violations: Vec<tally_schema::conformance::Violation>,
    },
    /// The logger was already closed.
    #[error("the logger is closed")]
    Closed,
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
    pub(crate) fn io(
        op: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { op, path, source }
    }
}
