//! The `tally` command line as a library: parse flags, validate them into a command, run it.
//!
//! The binary (`main.rs`) and the Python package (`python -m tally ...`) both call [`run`].

pub mod demo;
pub mod export;

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
    /// Run a synthetic training job (real learner and collector threads) through the logger.
    Demo {
        /// Algorithm: sac, flashsac, warpsac, appo or ppo.
        #[arg(long, default_value = "sac")]
        algo: String,
        /// Task name (a run-directory component).
        #[arg(long, default_value = "go2_joystick_flat")]
        task: String,
        /// Simulation backend name (the run-directory suffix).
        #[arg(long, default_value = "mujoco")]
        sim: String,
        /// Iterations to run.
        #[arg(long, default_value_t = 2000)]
        iterations: u64,
        /// Simulated GPUs (ranks); their inputs go through the rank reducer.
        #[arg(long, default_value_t = 1)]
        gpus: u32,
        /// Environments per rank.
        #[arg(long, default_value_t = 4096)]
        num_envs: u64,
        /// Live panel: auto (on a terminal), on, or off (plain progress lines).
        #[arg(long, value_enum, default_value_t = PanelMode::Auto)]
        panel: PanelMode,
        /// Overrides: training.logger=tensorboard|none, training.log_root=DIR, training.log_dir=DIR,
        /// training.log_interval=N, training.trace_enabled=true|false.
        #[arg(value_name = "training.KEY=VALUE")]
        overrides: Vec<String>,
    },
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

/// When to show the live panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PanelMode {
    /// The panel on a terminal, plain progress lines otherwise.
    Auto,
    /// Always the panel.
    On,
    /// Plain progress lines.
    Off,
}

/// Corruption policy exposed on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum OnCorrupt {
    /// Stop at the first corrupt record with an error naming the file and byte offset.
    Error,
    /// Skip records whose data checksum fails, report how many, and go on.
    Skip,
}

/// Parse `args` (including the program name) and run the command; returns the exit code.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match cli.command {
        Command::Demo {
            algo,
            task,
            sim,
            iterations,
            gpus,
            num_envs,
            panel: _,
            overrides,
        } => {
            // The live panel arrives with the panel issue; until then every mode prints one
            // plain progress line per second.
            demo::DemoConfig::from_flags(algo, task, sim, iterations, gpus, num_envs, &overrides)
                .and_then(|c| {
                    let dir = demo::run(&c, &mut out)?;
                    writeln!(out, "run: {}", dir.display()).map_err(|e| e.to_string())
                })
        }
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
