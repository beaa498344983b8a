//! How a `tally` command ends: [`CliError`] for every failure, [`Exit`] for the ways it can
//! succeed, and the one mapping of both to process exit codes.

use std::process::ExitCode;

/// Everything a `tally` command can fail with; printed as `tally: <message>` on stderr.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A flag value the argument parser cannot check (exit 2, like the parser's own errors).
    #[error("{0}")]
    Usage(String),
    /// The input breaks a rule the command itself checks: a file that failed validation, a
    /// soak that failed, a run `sync` cannot continue, `schema`'s listed metrics. (Reading a
    /// run refuses through [`CliError::Read`].)
    #[error("{0}")]
    Refused(String),
    /// Writing the command's output failed.
    #[error("{0}")]
    Output(#[from] std::io::Error),
    /// Reading, analysing or exporting a run failed (the message names the culprit).
    #[error(transparent)]
    Read(#[from] tally_read::Error),
    /// `tally soak` could not start or its monitor failed. Its usage errors become `Usage`
    /// and a soak that ran and failed is `Refused`.
    #[error(transparent)]
    Soak(tally_soak::Error),
    /// `tally demo` refused a setting or failed while running (a thread, a sink, its logger).
    #[error(transparent)]
    Demo(#[from] tally_demo::Error),
    /// The core library failed: `tally sync`'s cursor, scan or send.
    #[error(transparent)]
    Logger(#[from] tally::Error),
    /// A command failed while running: `tally sync`'s remote sink could not be built.
    #[error("{0}")]
    Run(String),
}

impl CliError {
    /// Whether writing the command's output failed because its reader went away
    /// (`tally export ... | head`): the command's end, not an error worth a message.
    pub fn is_closed_pipe(&self) -> bool {
        let io = match self {
            CliError::Output(e) | CliError::Read(tally_read::Error::Output(e)) => e,
            _ => return false,
        };
        io.kind() == std::io::ErrorKind::BrokenPipe
    }

    /// The process exit code: 2 for usage errors (as the argument parser uses), 1 otherwise.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Usage(_) => ExitCode::from(2),
            _ => ExitCode::FAILURE,
        }
    }
}

#[cfg(feature = "sql")]
impl From<tally_sql::Error> for CliError {
    /// A query that does not parse or plan is a usage error (exit 2): the query is an argument.
    fn from(e: tally_sql::Error) -> CliError {
        match e {
            tally_sql::Error::Read(e) => CliError::Read(e),
            e @ tally_sql::Error::Query(_) => CliError::Usage(e.to_string()),
        }
    }
}

impl From<tally_soak::Error> for CliError {
    /// A setting `tally soak` refuses is a usage error (exit 2), as the parser's own are.
    fn from(e: tally_soak::Error) -> CliError {
        match e {
            tally_soak::Error::Usage(m) => CliError::Usage(m),
            e => CliError::Soak(e),
        }
    }
}

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It ran to its end (exit 0).
    Success,
    /// It ran to its end and a health rule fired (exit 1: `tally health`, for cron and CI).
    Findings,
    /// Ctrl-C or SIGTERM stopped it after it closed what it opened (exit 130, the shell's
    /// code for a SIGINT).
    Interrupted,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        match exit {
            Exit::Success => ExitCode::SUCCESS,
            Exit::Findings => ExitCode::FAILURE,
            Exit::Interrupted => ExitCode::from(130),
        }
    }
}
