//! `tally sync RUN_DIR... --to wandb|mlflow|trackio`: send runs' event files to a remote service exactly once,
//! in step order, from the cursor each run directory keeps (docs/contract/remote-sinks.md
//! "tally sync").
//!
//! Any run works: a tally run whose W&B sink fell behind or was offline, a run recorded with
//! `logger="tensorboard"`, another writer's event files. The sink comes from the program
//! embedding the command line (the Python package's W&B, MLflow and trackio sinks), each
//! with its own cursor; `--dry-run` needs none.

use super::to_stdout;
use super::ProgressMode;
use crate::error::CliError;
use crate::error::Exit;
use crate::stderr::warn;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tally::remote::{scan_pending, send_run, Cursor};
use tally_read::files::run_with_subruns;

/// `tally sync`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run directories (each holds one run's events.out.tfevents.* files).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The destination: `--to` and that service's flags.
    #[command(flatten)]
    pub target: Target,
    /// Only continue runs sent before: refuse a run that has no cursor yet.
    #[arg(long)]
    pub resume: bool,
    /// Print what would be sent (rows, steps, tags), send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Progress line on stderr: auto (when stderr is a terminal), always, never.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self, sinks: Option<&RemoteSinkFactory<'_>>) -> Result<Exit, CliError> {
        to_stdout(|out| main(&self, sinks, out))
    }
}

/// Where `tally sync` sends runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Service {
    /// Weights & Biases (needs the W&B Python SDK).
    Wandb,
    /// An MLflow tracking server (needs the mlflow Python package).
    Mlflow,
    /// trackio, local mode (needs the trackio Python package).
    Trackio,
}

impl Service {
    /// The sink's name (its cursor is `.tally/<name>.cursor.json`).
    pub fn as_str(self) -> &'static str {
        match self {
            Service::Wandb => "wandb",
            Service::Mlflow => "mlflow",
            Service::Trackio => "trackio",
        }
    }

    /// The Python package the sink is written over, and how a message names it.
    pub fn package(self) -> (&'static str, &'static str) {
        match self {
            Service::Wandb => ("wandb", "W&B Python SDK"),
            Service::Mlflow => ("mlflow", "mlflow Python package"),
            Service::Trackio => ("trackio", "trackio Python package"),
        }
    }
}

/// The destination a sink factory builds a sink for (`tally sync`'s flags naming it).
#[derive(Debug, Clone, clap::Args)]
pub struct Target {
    /// Where to send them.
    #[arg(long, value_enum, default_value_t = Service::Wandb)]
    pub to: Service,
    /// The W&B project (default: WANDB_PROJECT, else `tally`), or the trackio project
    /// (default `tally`).
    #[arg(long)]
    pub project: Option<String>,
    /// The W&B entity.
    #[arg(long)]
    pub entity: Option<String>,
    /// MLflow's tracking server (default: MLFLOW_TRACKING_URI; one of the two is needed).
    #[arg(long)]
    pub tracking_uri: Option<String>,
    /// MLflow's experiment (default: MLFLOW_EXPERIMENT_NAME, else `tally`).
    #[arg(long)]
    pub experiment: Option<String>,
}

impl Target {
    /// A flag of another service is refused, naming it: a setting that silently does
    /// nothing sends the run where the user does not look.
    pub fn check(&self) -> Result<(), CliError> {
        let given = [
            (
                "--project",
                self.project.is_some(),
                [Service::Wandb, Service::Trackio].as_slice(),
            ),
            (
                "--entity",
                self.entity.is_some(),
                [Service::Wandb].as_slice(),
            ),
            (
                "--tracking-uri",
                self.tracking_uri.is_some(),
                [Service::Mlflow].as_slice(),
            ),
            (
                "--experiment",
                self.experiment.is_some(),
                [Service::Mlflow].as_slice(),
            ),
        ];
        for (flag, set, applies) in given {
            if set && !applies.contains(&self.to) {
                return Err(CliError::Usage(format!(
                    "{flag} is not a setting of --to {}: it applies to --to {}",
                    self.to.as_str(),
                    applies
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(" or ")
                )));
            }
        }
        Ok(())
    }
}

/// Builds a remote sink for a target (the Python package passes its W&B, MLflow and trackio
/// sinks).
pub type RemoteSinkFactory<'a> =
    dyn Fn(&Target) -> Result<Box<dyn tally::Sink>, CliError> + Sync + 'a;

/// Send (or preview) each run in turn; the first failure stops the command (what was sent
/// is kept by the run's cursor).
pub fn main(
    c: &Args,
    factory: Option<&RemoteSinkFactory<'_>>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let name = c.target.to.as_str();
    c.target.check()?;
    if !c.dry_run && factory.is_none() {
        let (package, named) = c.target.to.package();
        return Err(CliError::Refused(format!(
            "tally sync --to {name} needs the {named}, which this binary cannot load: run it \
             from the Python package (python -m tally sync ..., or the tally command that pip \
             install tally-rl puts on PATH) with {package} installed; --dry-run works here"
        )));
    }
    for dir in &c.dirs {
        // A run with its sub-runs (`add_scalars`' series), sent with it
        // (docs/contract/remote-sinks.md "Sub-runs").
        let files = run_with_subruns(dir)?.files;
        if files.is_empty() {
            return Err(CliError::Read(tally_read::Error::Refused(format!(
                "{}: no events.out.tfevents.* file: pass one run directory",
                dir.display()
            ))));
        }
        let run_dir = files[0].parent().unwrap_or(dir).to_owned();
        let cursor = Cursor::load(&run_dir, name)?;
        if c.resume && cursor.is_none() {
            return Err(CliError::Refused(format!(
                "{}: --resume: nothing of this run was sent to {name} before (no {})",
                run_dir.display(),
                Cursor::path(&run_dir, name).display()
            )));
        }
        let cursor = cursor.unwrap_or_default();
        let pending = scan_pending(&files, &cursor)?;
        warn(&pending.damage);
        if c.dry_run || pending.rows == 0 {
            preview(&run_dir, name, &cursor, &pending, c.dry_run, out)?;
            continue;
        }
        let Some(factory) = factory else { continue };
        let sink = factory(&c.target)?;
        let mut bar = Progress::new(c.progress.enabled(), &run_dir);
        let report = send_run(sink, &run_dir, files, |sent, total, step| {
            bar.show(sent, total, step)
        })?;
        bar.end();
        warn(&report.damage);
        writeln!(
            out,
            "{}: sent {} rows to {name} (through step {}){}{}",
            run_dir.display(),
            report.sent,
            report
                .progress
                .sent_through_step
                .map_or_else(|| "none".to_owned(), |s| s.to_string()),
            match report.sent_before {
                0 => String::new(),
                n => format!("; {n} were sent before"),
            },
            report.url.map(|u| format!(": {u}")).unwrap_or_default()
        )?;
    }
    Ok(())
}

fn preview(
    run_dir: &Path,
    name: &str,
    cursor: &Cursor,
    pending: &tally::remote::Pending,
    dry_run: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let verb = if dry_run { "would send" } else { "sent" };
    match pending.steps {
        Some((first, last)) => writeln!(
            out,
            "{}: {verb} {} rows to {name}, steps {first} to {last}, {} tags: {}",
            run_dir.display(),
            pending.rows,
            pending.tags.len(),
            pending.tags.iter().cloned().collect::<Vec<_>>().join(", ")
        )?,
        None => writeln!(out, "{}: nothing to send to {name}", run_dir.display())?,
    }
    if cursor.rows > 0 {
        writeln!(
            out,
            "{}: {} rows were sent before (through step {})",
            run_dir.display(),
            cursor.rows,
            cursor
                .step
                .map_or_else(|| "none".to_owned(), |s| s.to_string())
        )?;
    }
    Ok(())
}

/// A progress line on stderr, redrawn at most twice a second, for runs long enough to need it.
struct Progress {
    on: bool,
    label: String,
    last: Option<Instant>,
    drawn: bool,
}

impl Progress {
    fn new(on: bool, run_dir: &Path) -> Self {
        Progress {
            on,
            label: run_dir.display().to_string(),
            last: None,
            drawn: false,
        }
    }

    fn show(&mut self, sent: u64, total: u64, step: i64) {
        let now = Instant::now();
        let due = self
            .last
            .is_none_or(|t| now.duration_since(t) >= Duration::from_millis(500));
        if !self.on || !due {
            return;
        }
        self.last = Some(now);
        let pct = (sent * 100).checked_div(total).unwrap_or(100);
        let end = if std::io::stderr().is_terminal() {
            "\r"
        } else {
            "\n"
        };
        crate::stderr::part(format_args!(
            "sync {}: {sent}/{total} rows ({pct}%), step {step}{end}",
            self.label
        ));
        self.drawn = true;
    }

    fn end(&mut self) {
        if self.drawn && std::io::stderr().is_terminal() {
            crate::stderr::line("");
        }
    }
}
