//! One module per `tally` subcommand, each its flags (`Args`), their checks and the printing;
//! `lib.rs` names the commands and dispatches. Here too what several commands share: the
//! progress, panel and table-format flags, and writing to stdout.

pub mod board;
pub mod compare;
pub mod curves;
pub mod demo;
pub mod diagnose;
pub mod export;
pub mod extract;
pub mod health;
pub mod runs;
pub mod scaling;
pub mod schema;
pub mod soak;
pub mod sql;
pub mod sync;
pub mod trace_stats;
pub mod validate;
pub mod watch;

use crate::error::{CliError, Exit};
use clap::ValueEnum;
use std::io::Write;

/// When to draw a progress line (export, sync).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProgressMode {
    /// When stderr is a terminal.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ProgressMode {
    /// Whether to draw it now.
    pub fn enabled(self) -> bool {
        match self {
            ProgressMode::Auto => std::io::IsTerminal::is_terminal(&std::io::stderr()),
            ProgressMode::Always => true,
            ProgressMode::Never => false,
        }
    }
}

/// When to show the live panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PanelMode {
    /// The panel on a terminal, plain progress lines otherwise.
    Auto,
    /// Always the panel.
    On,
    /// Plain progress lines (the command's output is its progress, so `off` is not silent).
    Off,
}

impl From<PanelMode> for tally_tui::Mode {
    fn from(m: PanelMode) -> Self {
        match m {
            PanelMode::Auto => tally_tui::Mode::Auto,
            PanelMode::On => tally_tui::Mode::On,
            PanelMode::Off => tally_tui::Mode::Plain,
        }
    }
}

/// Run `command` writing to a buffered, locked stdout, and flush it.
pub(crate) fn to_stdout(
    command: impl FnOnce(&mut dyn Write) -> Result<(), CliError>,
) -> Result<Exit, CliError> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = command(&mut out);
    let flushed = out.flush().map_err(CliError::Output);
    match result.and(flushed) {
        Ok(()) => Ok(Exit::Success),
        // A closed pipe (`tally export ... | head`) is not an error worth a message.
        Err(e) if e.is_closed_pipe() => Ok(Exit::Success),
        Err(e) => Err(e),
    }
}

/// `--json` / `--csv`: how a table is printed (`tally runs`, `tally sql`).
#[derive(Debug, clap::Args)]
pub struct TableFlags {
    /// Print a JSON array of objects, one per row (every column).
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV with a header row (every column).
    #[arg(long)]
    pub csv: bool,
}

/// How a table is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Aligned columns for a terminal.
    Table,
    /// A JSON array of objects, one per row.
    Json,
    /// CSV with a header row.
    Csv,
}

impl TableFlags {
    /// The output the flags ask for.
    pub fn output(&self) -> Output {
        match (self.json, self.csv) {
            (true, _) => Output::Json,
            (_, true) => Output::Csv,
            _ => Output::Table,
        }
    }
}
