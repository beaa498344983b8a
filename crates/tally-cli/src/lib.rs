//! The `tally` command line as a library: parse flags, validate them into a command, run it.
//!
//! The binary (`main.rs`) and the Python package (`python -m tally ...`) both call [`run`]; the
//! package passes its W&B sink factories (the demo's, `sync`'s) through [`Extensions`], the
//! binary passes none.
//!
//! [`cmd`] holds one module per command: its flags, their checks, a call into the crate that
//! does the work, and the printing. Beside it, `stderr.rs` prints what a read tells its
//! observer, [`error`] turns a failure into an exit code, and `interrupt.rs` turns Ctrl-C and
//! SIGTERM into a flag.

pub mod cloud;
pub mod cmd;
pub mod error;
mod interrupt;
mod stderr;

pub use error::{CliError, Exit};

use cmd::{
    board, compare, demo, diagnose, export, extract, health, runs, scaling, schema, soak, sql,
    sync, trace_stats, validate, watch,
};

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// tally: one honest source of telemetry for RL training runs.
#[derive(Debug, Parser)]
// The about text is the doc comment above (not the package description).
#[command(name = "tally", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a synthetic training job (real learner and collector threads) through the logger.
    Demo(demo::Args),
    /// Render the live panel of any run from its event files, following them as they grow
    /// (`q` quits); a finished run shows its final state; another tool's run a generic dashboard.
    /// A folder of several runs (or --curves) shows every tag's curve, the runs overlaid.
    Watch(watch::Args),
    /// Print the canonical metric schema v1 (a table, JSON, or the docs/metrics.md markdown).
    Schema(schema::Args),
    /// The off-policy summary of a run: the mean of the last N values of each figure, fail-closed on the schema.
    Extract(extract::Args),
    /// Name a run's bottleneck: the bottleneck table applied to its learner and collector
    /// timelines (sac_family, appo), each finding with evidence, meaning and what to check first.
    Diagnose(diagnose::Args),
    /// Check runs against the health rules (NaN, divergence, collapse, flat rewards, stalls,
    /// slow throughput, your own): every finding of every run; exit 1 when any rule fires.
    Health(health::Args),
    /// The DP scaling report: throughput, speed-up and efficiency of one task at several GPU counts.
    Scaling(scaling::Args),
    /// Stream every scalar (run, tag, step, wall time, value) of event files or run directories.
    Export(export::Args),
    /// One row per run under the paths: status, last step, points, duration, configuration
    /// (run_config.json) and, for the tags chosen, last / min / max / final mean
    /// (docs/contract/consumers.md "The runs table").
    Runs(runs::Args),
    /// A read-only SQL query over the runs under the paths: tables `runs` (the runs table's
    /// columns) and `scalars` (run, tag, step, wall_time, value); Apache DataFusion's dialect
    /// (docs/contract/consumers.md "SQL over runs").
    Sql(sql::Args),
    /// Every run under the paths and every point of them in the browser: runs table, one chart
    /// per tag overlaying the selected runs, live runs followed (docs/contract/board.md).
    /// Serves until Ctrl-C.
    Board(board::Args),
    /// Seed statistics: runs grouped by configuration keys, each scored on a tag, per group the
    /// mean and interquartile mean with 95 % bootstrap intervals, best first
    /// (docs/contract/consumers.md "Comparing runs").
    Compare(compare::Args),
    /// Send runs' event files to W&B, MLflow or trackio exactly once, in step order, continuing
    /// from what each run already sent there (its cursor in RUN_DIR/.tally/); any run: tally's
    /// or another writer's.
    Sync(sync::Args),
    /// Per span name, iteration gaps and thread busy shares of a Perfetto trace (a truncated
    /// trace is read up to its last complete event).
    TraceStats(trace_stats::Args),
    /// Run a training command in its own process group and watch it: process tree, GPU memory
    /// and progress sampled, stalls and leftovers classified, the run summary checked; writes
    /// the soak artifact 0.3.0 and exits 0 only when the soak passed.
    Soak(soak::Args),
    /// Validate run summaries, runtime manifests and soak artifacts (a directory means its run_summary.json).
    Validate(validate::Args),
}

/// What a program embedding the command line adds to it (the Rust binary adds nothing).
#[derive(Clone, Copy, Default)]
pub struct Extensions<'a> {
    /// Builds the demo's extra sinks; with one, `training.logger=wandb` is accepted.
    pub demo_sinks: Option<&'a tally_demo::SinkFactory<'a>>,
    /// Builds `tally sync`'s remote sink; without one, only `sync --dry-run` works.
    pub remote_sinks: Option<&'a sync::RemoteSinkFactory<'a>>,
}

/// Parse `args` (including the program name) and run the command with `extensions`; returns
/// the exit code.
pub fn run<I, T>(args: I, extensions: &Extensions<'_>) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match execute(cli.command, extensions) {
        Ok(exit) => exit.into(),
        Err(e) => {
            crate::stderr::line(format_args!("tally: {e}"));
            e.exit_code()
        }
    }
}

/// Each read command's path arguments made local, a URL by its mirror (`cloud.rs`); a path a
/// command writes refuses a URL. The mirrors `watch` and `board` follow are polled while the
/// value returned lives.
fn local_paths(command: &mut Command) -> Result<cloud::Mirrors, CliError> {
    use cloud::{localize, refuse};
    use std::iter::once;
    match command {
        Command::Watch(a) => localize(vec![&mut a.run_dir], true),
        Command::Board(a) => localize(a.paths.iter_mut().collect(), true),
        Command::Runs(a) => localize(a.paths.iter_mut().collect(), false),
        Command::Compare(a) => localize(a.paths.iter_mut().collect(), false),
        Command::Sql(a) => localize(a.paths.iter_mut().collect(), false),
        Command::Health(a) => {
            refuse(a.rules.as_deref(), "--rules")?;
            localize(a.paths.iter_mut().collect(), false)
        }
        Command::Export(a) => {
            refuse(a.output.as_deref(), "--output")?;
            refuse(a.dataset.as_deref(), "--dataset")?;
            localize(a.paths.iter_mut().collect(), false)
        }
        Command::Extract(a) => localize(vec![&mut a.dir], false),
        Command::Diagnose(a) => localize(vec![&mut a.run_dir], false),
        Command::Scaling(a) => localize(a.dirs.iter_mut().collect(), false),
        Command::Validate(a) => localize(a.paths.iter_mut().collect(), false),
        Command::Sync(a) => {
            // sync keeps its cursor in the run directory: a local one.
            refuse(a.dirs.iter().map(|p| p.as_path()), "sync")?;
            Ok(cloud::Mirrors::default())
        }
        Command::TraceStats(a) => {
            refuse(once(a.file.as_path()), "trace-stats")?;
            Ok(cloud::Mirrors::default())
        }
        Command::Soak(a) => {
            refuse(a.output.as_deref(), "--output")?;
            refuse(a.progress_dir.as_deref(), "--progress-dir")?;
            Ok(cloud::Mirrors::default())
        }
        Command::Demo(_) | Command::Schema(_) => Ok(cloud::Mirrors::default()),
    }
}

/// Run one parsed command.
fn execute(mut command: Command, extensions: &Extensions<'_>) -> Result<Exit, CliError> {
    let _mirrors = local_paths(&mut command)?;
    // Demo and watch share stdout with the panel thread, so they never lock it.
    match command {
        Command::Demo(args) => args.execute(extensions.demo_sinks),
        // A folder of several runs has no one panel: it is shown as curves.
        Command::Watch(args) if args.curves || cmd::curves::is_folder_of_runs(&args.run_dir) => {
            cmd::curves::main(&cmd::curves::CurvesConfig {
                path: args.run_dir,
                panel: args.panel.into(),
            })
        }
        Command::Watch(args) => args.execute(),
        Command::Schema(args) => args.execute(),
        Command::Extract(args) => args.execute(),
        Command::Diagnose(args) => args.execute(),
        Command::Health(args) => args.execute(),
        Command::Scaling(args) => args.execute(),
        Command::Export(args) => args.execute(),
        Command::Runs(args) => args.execute(),
        Command::Sql(args) => args.execute(),
        Command::Board(args) => args.execute(),
        Command::Compare(args) => args.execute(),
        Command::Sync(args) => args.execute(extensions.remote_sinks),
        Command::TraceStats(args) => args.execute(),
        Command::Soak(args) => args.execute(),
        Command::Validate(args) => args.execute(),
    }
}
