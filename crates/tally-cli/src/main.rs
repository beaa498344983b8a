//! The `tally` command line: parse flags, validate them into a command, run it.

mod export;

use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// tally: one honest source of telemetry for RL training runs.
#[derive(Debug, Parser)]
#[command(name = "tally", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the canonical metric schema v1 (a table, JSON, or the docs/metrics.md markdown).
    Schema {
        /// Print the registry as JSON.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Print the generated docs/metrics.md.
        #[arg(long)]
        markdown: bool,
    },
    /// Stream every scalar (run, tag, step, wall time, value) of event files or run directories.
    Export {
        /// Event files, or directories searched recursively for `events.out.tfevents.*`.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = export::Format::Jsonl)]
        format: export::Format,
        /// What to do with a corrupt record.
        #[arg(long, value_enum, default_value_t = OnCorrupt::Error)]
        on_corrupt: OnCorrupt,
    },
}

/// Corruption policy exposed on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum OnCorrupt {
    /// Stop at the first corrupt record with an error naming the file and byte offset.
    Error,
    /// Skip records whose data checksum fails, report how many, and go on.
    Skip,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match cli.command {
        Command::Schema { json, markdown } => {
            let text = if json {
                tally_schema::render::to_json()
            } else if markdown {
                tally_schema::render::to_markdown()
            } else {
                tally_schema::render::to_table()
            };
            out.write_all(text.as_bytes()).map_err(|e| e.to_string())
        }
        Command::Export {
            paths,
            format,
            on_corrupt,
        } => {
            let policy = match on_corrupt {
                OnCorrupt::Error => tally_tfevents::OnCorruption::Error,
                OnCorrupt::Skip => tally_tfevents::OnCorruption::Skip,
            };
            export::run(&paths, format, policy, &mut out)
        }
    };
    let flushed = out.flush();
    match result {
        Ok(()) => match flushed {
            Ok(()) => ExitCode::SUCCESS,
            // A closed pipe (`tally export ... | head`) is not an error worth a message.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("tally: {e}");
                ExitCode::FAILURE
            }
        },
        Err(msg) => {
            eprintln!("tally: {msg}");
            ExitCode::FAILURE
        }
    }
}
