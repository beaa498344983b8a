//! The `tally` command line as a library: parse flags, validate them into a command, run it.
//!
//! The binary (`main.rs`) and the Python package (`python -m tally ...`) both call [`run`]; the
//! package passes its W&B sink factories (the demo's, `sync`'s) through [`Extensions`], the
//! binary passes none.

pub mod cmd;
pub mod error;
mod interrupt;
mod stderr;

pub use error::{CliError, Exit};

use cmd::{
    board, compare, demo, diagnose, export, extract, health, runs, scaling, schema, soak, sql,
    sync, trace_stats, validate, watch,
};

use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use stderr::StderrObserver;
use tally_read::diagnose::Thresholds;

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
    Demo {
        /// Algorithm: sac, flashsac, warpsac, appo, ppo or grpo.
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
        /// Panic inside the training loop at this iteration (tests terminal restoration).
        #[arg(long, hide = true)]
        panic_at_iteration: Option<u64>,
        /// Multiply a simulated phase's duration (repeatable): `--slow learning=6` makes the
        /// learner the bottleneck, `--slow env_step=6` the collector, `--slow all=4` every phase.
        #[arg(long, value_name = "PHASE=FACTOR")]
        slow: Vec<String>,
        /// Overrides: training.logger=tensorboard|wandb|none, training.log_root=DIR, training.log_dir=DIR,
        /// training.log_interval=N, training.trace_enabled=true|false, training.trace_output_dir=DIR,
        /// training.trace_thread_time=true|false, training.trace_cuda_events=true|false (with a trace:
        /// the SAC-family demo's stand-in GPU work on a `gpu` track). With training.logger=wandb (Python package only:
        /// `python -m tally demo`): training.wandb_project=P (default unilab), training.wandb_entity=E,
        /// training.wandb_group=G (default: the task), training.wandb_job_type=J (default: the algo),
        /// training.wandb_name=N (default: ALGO__TASK__RUN_DIR_NAME), training.wandb_tags=[a,b] (added to
        /// algo, task, sim and user-USER), training.wandb_notes=TEXT, training.wandb_mode=online|offline|disabled.
        #[arg(value_name = "training.KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Render the live panel of any run from its event files, following them as they grow
    /// (`q` quits); a finished run shows its final state; another tool's run a generic dashboard.
    /// A folder of several runs (or --curves) shows every tag's curve, the runs overlaid.
    Watch {
        /// A run directory (holds events.out.tfevents.*, and run_config.json for a tally run),
        /// one event file, or a folder of runs (shown as curves).
        run_dir: PathBuf,
        /// Each tag's whole series as a curve in the terminal, the runs under the path overlaid
        /// (arrows or j/k scroll, h/l and space pick runs, / filters tags, q quits); with
        /// --panel off or off a terminal, one frame printed as text.
        #[arg(long)]
        curves: bool,
        /// Live panel: auto (on a terminal), on, or off (plain summary lines until the run ends).
        #[arg(long, value_enum, default_value_t = PanelMode::Auto)]
        panel: PanelMode,
        /// Seconds between plain summary lines.
        #[arg(long, default_value_t = 10.0)]
        every: f64,
    },
    /// Print the canonical metric schema v1 (a table, JSON, or the docs/metrics.md markdown).
    Schema {
        /// A run directory: also print the user metrics its run_config.json lists.
        run_dir: Option<PathBuf>,
        /// Print the registry as JSON.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Print the generated docs/metrics.md.
        #[arg(long)]
        markdown: bool,
    },
    /// The off-policy summary of a run: the mean of the last N values of each figure, fail-closed on the schema.
    Extract {
        /// The run directory (its event files and run_summary.json).
        dir: PathBuf,
        /// How many trailing values each figure averages.
        #[arg(long, default_value_t = 20)]
        last: usize,
        /// Print JSON instead of aligned text.
        #[arg(long)]
        json: bool,
        /// Read a pre-schema run through the legacy map (never a fallback for modern runs).
        #[arg(long)]
        legacy_unversioned: bool,
        /// Extract a run whose summary says completed although its event files end early
        /// (the damage is still reported).
        #[arg(long)]
        allow_truncated: bool,
    },
    /// Name a run's bottleneck: the bottleneck table applied to its learner and collector
    /// timelines (sac_family, appo), each finding with evidence, meaning and what to check first.
    Diagnose {
        /// The run directory (a schema-v1 run, as for extract).
        run_dir: PathBuf,
        /// How many trailing values each figure averages.
        #[arg(long, default_value_t = tally_read::diagnose::DEFAULT_LAST)]
        last: usize,
        /// Print JSON: {"healthy", "findings": [{"symptom", "meaning", "check_first", "evidence"}]}.
        #[arg(long)]
        json: bool,
        /// learner Collector Wait, % of Iter Wall, at or above which it is high.
        #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().wait_high_pct)]
        wait_high: f64,
        /// learner Collector Wait, % of Iter Wall, below which it is low.
        #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().wait_low_pct)]
        wait_low: f64,
        /// collector Learner Action Wait, % of the collector cycle, that is high.
        #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().action_wait_high_pct)]
        action_wait_high: f64,
        /// learner Inference, % of Iter Wall, that is high.
        #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().inference_high_pct)]
        inference_high: f64,
        /// learner Replay Batch Wait, % of Iter Wall, that is high.
        #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().batch_wait_high_pct)]
        batch_wait_high: f64,
        /// collector Replay Write, % of the collector cycle, that is high.
        #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().replay_write_high_pct)]
        replay_write_high: f64,
        /// Replay H2D Submit, % of Iter Wall, that is high.
        #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().submit_high_pct)]
        submit_high: f64,
    },
    /// Check runs against the health rules (NaN, divergence, collapse, flat rewards, stalls,
    /// slow throughput, your own): every finding of every run; exit 1 when any rule fires.
    Health {
        /// Event files, run directories, or folders of runs.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print JSON: {"healthy", "runs": [{"run", "dir", "live", "values", "findings":
        /// [{"rule", "tag", "first_step", "last_step", "count", "last_value", "message"}]}]}.
        #[arg(long)]
        json: bool,
        /// A JSON rules file: {"off": [rule names], "rules": [{"kind", "tag", parameters}]}.
        #[arg(long, value_name = "FILE")]
        rules: Option<PathBuf>,
        /// Start from no rule (only the rules file's).
        #[arg(long)]
        no_defaults: bool,
    },
    /// The DP scaling report: throughput, speed-up and efficiency of one task at several GPU counts.
    Scaling {
        /// Run directories of the same task (schema-v1 runs).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// How many trailing values each figure averages.
        #[arg(long, default_value_t = 20)]
        last: usize,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
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
        /// Refuse a run whose steps go back across its files (without a purge marker); by
        /// default they are exported and reported, as TensorBoard draws them.
        #[arg(long)]
        strict: bool,
        /// Keep only tags matching these globs (`*` matches anything), after migration.
        #[arg(long, num_args = 1..)]
        tags: Vec<String>,
        /// Export legacy tags under their canonical names, with unit scaling: pre-schema runs
        /// only (extract --legacy-unversioned's rules); any other run is refused.
        #[arg(long)]
        migrate_legacy: bool,
        /// The profile (sac_family, appo, onpolicy, rft) of migrated runs whose
        /// run_config.json names none; it decides what timing/learner_incremental_h2d_ms means.
        #[arg(long, value_name = "NAME", requires = "migrate_legacy",
              value_parser = |s: &str| s.parse::<tally::Profile>())]
        profile: Option<tally::Profile>,
        /// Write to this file instead of stdout (required for parquet).
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Add to the Hive-partitioned Parquet dataset in this directory (scalars/run=NAME/,
        /// runs/run=NAME/): only what is new since the last export into it
        /// (docs/contract/consumers.md "A Parquet dataset"). Parquet only.
        #[arg(long, value_name = "DIR", conflicts_with = "output")]
        dataset: Option<PathBuf>,
        /// Parquet page compression: none (fastest) or snappy (smaller, as pandas writes).
        #[arg(long, value_enum, default_value_t = export::Compression::None)]
        compression: export::Compression,
        /// Progress bar on stderr: auto (when stderr is a terminal), always, never.
        #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
        progress: ProgressMode,
    },
    /// One row per run under the paths: status, last step, points, duration, configuration
    /// (run_config.json) and, for the tags chosen, last / min / max / final mean
    /// (docs/contract/consumers.md "The runs table").
    Runs {
        /// Event files, or directories searched recursively for `events.out.tfevents.*`.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Summarize the tags matching these globs (`*` matches anything).
        #[arg(long, num_args = 1..)]
        tags: Vec<String>,
        /// Skip a run whose steps go back across its files (without a purge marker).
        #[arg(long)]
        strict: bool,
        /// Print a JSON array of flat objects (every column).
        #[arg(long, conflicts_with = "csv")]
        json: bool,
        /// Print CSV (every column).
        #[arg(long)]
        csv: bool,
    },
    /// A read-only SQL query over the runs under the paths: tables `runs` (the runs table's
    /// columns) and `scalars` (run, tag, step, wall_time, value); Apache DataFusion's dialect
    /// (docs/contract/consumers.md "SQL over runs").
    Sql {
        /// Event files, or directories searched recursively for `events.out.tfevents.*`.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The query, e.g. "SELECT tag, count(*) FROM scalars GROUP BY tag".
        query: String,
        /// Skip a run whose steps go back across its files (without a purge marker).
        #[arg(long)]
        strict: bool,
        /// Print a JSON array of objects.
        #[arg(long, conflicts_with = "csv")]
        json: bool,
        /// Print CSV with a header row.
        #[arg(long)]
        csv: bool,
    },
    /// Every run under the paths and every point of them in the browser: runs table, one chart
    /// per tag overlaying the selected runs, live runs followed (docs/contract/board.md).
    /// Serves until Ctrl-C.
    Board {
        /// Directories searched recursively for `events.out.tfevents.*` (or event files).
        #[arg(default_value = ".")]
        paths: Vec<PathBuf>,
        /// The address to listen on; any other than loopback requires the printed token.
        #[arg(long, default_value = "127.0.0.1")]
        host: std::net::IpAddr,
        /// The port (0: a free one).
        #[arg(long, default_value_t = 6007)]
        port: u16,
        /// Open the page in the desktop's browser.
        #[arg(long)]
        open: bool,
    },
    /// Seed statistics: runs grouped by configuration keys, each scored on a tag, per group the
    /// mean and interquartile mean with 95 % bootstrap intervals, best first
    /// (docs/contract/consumers.md "Comparing runs").
    Compare {
        /// Event files, or directories searched recursively for `events.out.tfevents.*`.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The tag each run is scored on.
        #[arg(long)]
        metric: String,
        /// Group by these configuration keys (`config.lr`, `run.algo`; `tally runs --json`
        /// lists a run's keys); none: all runs are one group.
        #[arg(long, num_args = 1..)]
        by: Vec<String>,
        /// The score: final (mean of the last 10 % of steps), auc (mean height) or a step.
        #[arg(long, default_value = "final", value_parser = |s: &str| s.parse::<tally_read::compare::At>())]
        at: tally_read::compare::At,
        /// Bootstrap resamples.
        #[arg(long, default_value_t = 50_000)]
        reps: usize,
        /// The bootstrap's seed (numpy RandomState's stream).
        #[arg(long, default_value_t = 0)]
        seed: u32,
        /// Print the groups as JSON (with their runs, scores and aligned curves).
        #[arg(long)]
        json: bool,
    },
    /// Send runs' event files to W&B, MLflow or trackio exactly once, in step order, continuing
    /// from what each run already sent there (its cursor in RUN_DIR/.tally/); any run: tally's
    /// or another writer's.
    Sync {
        /// Run directories (each holds one run's events.out.tfevents.* files).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where to send them.
        #[arg(long, value_enum, default_value_t = sync::Service::Wandb)]
        to: sync::Service,
        /// The W&B project (default: WANDB_PROJECT, else `tally`), or the trackio project
        /// (default `tally`).
        #[arg(long)]
        project: Option<String>,
        /// The W&B entity.
        #[arg(long)]
        entity: Option<String>,
        /// MLflow's tracking server (default: MLFLOW_TRACKING_URI; one of the two is needed).
        #[arg(long)]
        tracking_uri: Option<String>,
        /// MLflow's experiment (default: MLFLOW_EXPERIMENT_NAME, else `tally`).
        #[arg(long)]
        experiment: Option<String>,
        /// Only continue runs sent before: refuse a run that has no cursor yet.
        #[arg(long)]
        resume: bool,
        /// Print what would be sent (rows, steps, tags), send nothing.
        #[arg(long)]
        dry_run: bool,
        /// Progress line on stderr: auto (when stderr is a terminal), always, never.
        #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
        progress: ProgressMode,
    },
    /// Per span name, iteration gaps and thread busy shares of a Perfetto trace (a truncated
    /// trace is read up to its last complete event).
    TraceStats {
        /// The trace file (perfetto_offpolicy_timeline.json).
        file: PathBuf,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// Run a training command in its own process group and watch it: process tree, GPU memory
    /// and progress sampled, stalls and leftovers classified, the run summary checked; writes
    /// the soak artifact 0.3.0 and exits 0 only when the soak passed.
    Soak {
        /// The artifact's path (default: PROGRESS_DIR/soak_artifact.json).
        #[arg(long)]
        output: Option<PathBuf>,
        /// Where the run writes its progress (default: the command's training.log_dir=DIR).
        #[arg(long)]
        progress_dir: Option<PathBuf>,
        /// Seconds between samples.
        #[arg(long, value_name = "S", default_value_t = 5.0)]
        sample_interval_seconds: f64,
        /// Seconds allowed before the first progress byte (else timeout/startup).
        #[arg(long, value_name = "S", default_value_t = 600.0)]
        startup_timeout_seconds: f64,
        /// Seconds progress may stay unchanged (else timeout/stale_tick).
        #[arg(long, value_name = "S", default_value_t = 120.0)]
        stale_progress_seconds: f64,
        /// Seconds the command's group may outlive it (else resource_leak), and the command a
        /// SIGTERM before SIGKILL.
        #[arg(long, value_name = "S", default_value_t = 5.0)]
        post_shutdown_grace_seconds: f64,
        /// Shortest run that can pass.
        #[arg(long, value_name = "S", default_value_t = 0.0)]
        min_duration_seconds: f64,
        /// Run the command through `sh -c` (its words joined by spaces).
        #[arg(long)]
        shell: bool,
        /// The training command, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Validate run summaries, runtime manifests and soak artifacts (a directory means its run_summary.json).
    Validate {
        /// Files, or run directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Check standalone runtime manifests as a completed run's (lifecycle members required).
        #[arg(long)]
        completed: bool,
    },
}

/// When to draw a progress line (export, sync).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProgressMode {
    /// When stderr is a terminal.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ProgressMode {
    fn enabled(self) -> bool {
        match self {
            ProgressMode::Auto => std::io::IsTerminal::is_terminal(&std::io::stderr()),
            ProgressMode::Always => true,
            ProgressMode::Never => false,
        }
    }
}

/// When to show the live panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PanelMode {
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

/// Corruption policy exposed on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum OnCorrupt {
    /// Stop at the first corrupt record with an error naming the file and byte offset.
    Error,
    /// Skip records whose data checksum fails, report how many, and go on.
    Skip,
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

/// Run one parsed command.
fn execute(command: Command, extensions: &Extensions<'_>) -> Result<Exit, CliError> {
    // Demo and watch share stdout with the panel thread, so they never lock it.
    match command {
        Command::Demo {
            algo,
            task,
            sim,
            iterations,
            gpus,
            num_envs,
            panel,
            panic_at_iteration,
            slow,
            overrides,
        } => {
            let mut c = tally_demo::DemoConfig::from_flags(
                algo,
                task,
                sim,
                iterations,
                gpus,
                num_envs,
                &overrides,
                extensions.demo_sinks.is_some(),
            )?;
            c.panel = panel.into();
            c.panic_at = panic_at_iteration;
            let profile = tally_demo::profile_of(&c.algo)?;
            c.slow = tally_demo::Slowdown::parse(&slow, &c.algo, profile)?;
            demo::main(&c, extensions.demo_sinks)
        }
        Command::Watch {
            run_dir,
            curves,
            panel,
            every,
        } => {
            // A folder of several runs has no one panel: it is shown as curves.
            if curves || cmd::curves::is_folder_of_runs(&run_dir) {
                return cmd::curves::main(&cmd::curves::CurvesConfig {
                    path: run_dir,
                    panel: panel.into(),
                });
            }
            if !(every.is_finite() && every > 0.0) {
                return Err(CliError::Usage(format!(
                    "--every {every} must be a positive number of seconds"
                )));
            }
            let c = watch::WatchConfig {
                run_dir,
                panel: panel.into(),
                every: std::time::Duration::from_secs_f64(every),
            };
            watch::main(&c)
        }
        Command::Extract {
            dir,
            last,
            json,
            legacy_unversioned,
            allow_truncated,
        } => {
            let mode = if legacy_unversioned {
                tally_read::extract::Mode::LegacyUnversioned
            } else {
                tally_read::extract::Mode::Versioned
            };
            let mut notes = StderrObserver::new(None);
            let extraction =
                tally_read::extract::extract(&dir, last, mode, allow_truncated, &mut notes)?;
            stderr::warn(&extraction.damage);
            to_stdout(|out| Ok(extract::print(&extraction, json, out)?))
        }
        Command::Diagnose {
            run_dir,
            last,
            json,
            wait_high,
            wait_low,
            action_wait_high,
            inference_high,
            batch_wait_high,
            replay_write_high,
            submit_high,
        } => {
            let thresholds = Thresholds {
                wait_high_pct: wait_high,
                wait_low_pct: wait_low,
                action_wait_high_pct: action_wait_high,
                inference_high_pct: inference_high,
                batch_wait_high_pct: batch_wait_high,
                replay_write_high_pct: replay_write_high,
                submit_high_pct: submit_high,
            };
            thresholds.check([
                "--wait-high",
                "--wait-low",
                "--action-wait-high",
                "--inference-high",
                "--batch-wait-high",
                "--replay-write-high",
                "--submit-high",
            ])?;
            let diagnosis = tally_read::diagnose::diagnose(&run_dir, last, thresholds)?;
            stderr::warn(&diagnosis.damage);
            to_stdout(|out| Ok(diagnose::print(&diagnosis, json, out)?))
        }
        Command::Health {
            paths,
            json,
            rules,
            no_defaults,
        } => {
            let rules = health::rules(rules.as_deref(), no_defaults)?;
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let exit = health::run(&paths, &rules, json, &mut out);
            let flushed = out.flush().map_err(CliError::Output);
            match (exit, flushed) {
                (Err(e), _) if e.is_closed_pipe() => Ok(Exit::Success),
                (Err(e), _) | (Ok(_), Err(e)) => Err(e),
                (Ok(exit), Ok(())) => Ok(exit),
            }
        }
        Command::Scaling { dirs, last, json } => {
            let report = tally_read::scaling::report(&dirs, last)?;
            stderr::warn(&report.damage);
            to_stdout(|out| Ok(scaling::print(&report, json, out)?))
        }
        Command::Schema {
            run_dir,
            json,
            markdown,
        } => {
            let rendering = if json {
                schema::Rendering::Json
            } else if markdown {
                schema::Rendering::Markdown
            } else {
                schema::Rendering::Table
            };
            to_stdout(|out| schema::run(rendering, run_dir.as_deref(), out))
        }
        Command::Export {
            paths,
            format,
            on_corrupt,
            strict,
            tags,
            migrate_legacy,
            profile,
            output,
            dataset,
            compression,
            progress,
        } => {
            let policy = match on_corrupt {
                OnCorrupt::Error => tally_tfevents::OnCorruption::Error,
                OnCorrupt::Skip => tally_tfevents::OnCorruption::Skip,
            };
            export::check_compression(format, compression)?;
            export::check_dataset(format, dataset.is_some())?;
            let opts = tally_read::export::Options {
                format: format.into(),
                tags,
                migrate_legacy,
                profile,
                policy,
                strict,
                output,
                compression: compression.into(),
                dataset,
            };
            to_stdout(|out| export::run(&paths, &opts, progress.enabled(), out))
        }
        Command::Sync {
            dirs,
            to,
            project,
            entity,
            tracking_uri,
            experiment,
            resume,
            dry_run,
            progress,
        } => {
            let c = sync::SyncConfig {
                dirs,
                target: sync::Target {
                    to,
                    project,
                    entity,
                    tracking_uri,
                    experiment,
                },
                resume,
                dry_run,
                progress: progress.enabled(),
            };
            to_stdout(|out| sync::main(&c, extensions.remote_sinks, out))
        }
        Command::Compare {
            paths,
            metric,
            by,
            at,
            reps,
            seed,
            json,
        } => {
            let s = tally_read::compare::Settings {
                by,
                at,
                reps,
                seed,
                ..tally_read::compare::Settings::new(metric)
            };
            to_stdout(|out| compare::run(&paths, &s, json, out))
        }
        Command::Board {
            paths,
            host,
            port,
            open,
        } => board::main(paths, host, port, open),
        Command::Sql {
            paths,
            query,
            strict,
            json,
            csv,
        } => {
            let output = match (json, csv) {
                (true, _) => sql::Output::Json,
                (_, true) => sql::Output::Csv,
                _ => sql::Output::Table,
            };
            to_stdout(|out| sql::run(&paths, &query, strict, output, out))
        }
        Command::Runs {
            paths,
            tags,
            strict,
            json,
            csv,
        } => {
            let output = match (json, csv) {
                (true, _) => runs::Output::Json,
                (_, true) => runs::Output::Csv,
                _ => runs::Output::Table,
            };
            to_stdout(|out| runs::run(&paths, &tags, strict, output, out))
        }
        Command::TraceStats { file, json } => to_stdout(|out| trace_stats::run(&file, json, out)),
        Command::Soak {
            output,
            progress_dir,
            sample_interval_seconds,
            startup_timeout_seconds,
            stale_progress_seconds,
            post_shutdown_grace_seconds,
            min_duration_seconds,
            shell,
            command,
        } => soak::main(&soak::SoakConfig {
            command,
            shell,
            progress_dir,
            output,
            sample_interval_s: sample_interval_seconds,
            startup_timeout_s: startup_timeout_seconds,
            stale_progress_s: stale_progress_seconds,
            post_shutdown_grace_s: post_shutdown_grace_seconds,
            min_duration_s: min_duration_seconds,
        }),
        Command::Validate { paths, completed } => {
            to_stdout(|out| validate::run(&paths, completed, out))
        }
    }
}

/// Run `command` writing to a buffered, locked stdout, and flush it.
fn to_stdout(
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
