//! `tally export`: the flags of an export, checked, handed to [`tally_read::export`], with
//! damage and a progress bar on stderr.

use super::to_stdout;
use super::ProgressMode;
use crate::error::CliError;
use crate::error::Exit;
use crate::stderr::StderrObserver;
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;
use tally_read::export;

/// Corruption policy exposed on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum OnCorrupt {
    /// Stop at the first corrupt record with an error naming the file and byte offset.
    Error,
    /// Skip records whose data checksum fails, report how many, and go on.
    Skip,
}

/// `tally export`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Event files, or directories searched recursively for `events.out.tfevents.*`.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    pub format: Format,
    /// What to do with a corrupt record.
    #[arg(long, value_enum, default_value_t = OnCorrupt::Error)]
    pub on_corrupt: OnCorrupt,
    /// Refuse a run whose steps go back across its files (without a purge marker); by
    /// default they are exported and reported, as TensorBoard draws them.
    #[arg(long)]
    pub strict: bool,
    /// Keep only tags matching these globs (`*` matches anything), after migration.
    #[arg(long, num_args = 1..)]
    pub tags: Vec<String>,
    /// Export legacy tags under their canonical names, with unit scaling: pre-schema runs
    /// only (extract --legacy-unversioned's rules); any other run is refused.
    #[arg(long)]
    pub migrate_legacy: bool,
    /// The profile (sac_family, appo, onpolicy, rft) of migrated runs whose
    /// run_config.json names none; it decides what timing/learner_incremental_h2d_ms means.
    #[arg(long, value_name = "NAME", requires = "migrate_legacy",
          value_parser = |s: &str| s.parse::<tally::Profile>())]
    pub profile: Option<tally::Profile>,
    /// Write to this file instead of stdout (required for parquet).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Add to the Hive-partitioned Parquet dataset in this directory (scalars/run=NAME/,
    /// runs/run=NAME/): only what is new since the last export into it
    /// (docs/contract/consumers.md "A Parquet dataset"). Parquet only.
    #[arg(long, value_name = "DIR", conflicts_with = "output")]
    pub dataset: Option<PathBuf>,
    /// Parquet page compression: none (fastest) or snappy (smaller, as pandas writes).
    #[arg(long, value_enum, default_value_t = Compression::None)]
    pub compression: Compression,
    /// Progress bar on stderr: auto (when stderr is a terminal), always, never.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args {
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
        } = self;
        let policy = match on_corrupt {
            OnCorrupt::Error => tally_tfevents::OnCorruption::Error,
            OnCorrupt::Skip => tally_tfevents::OnCorruption::Skip,
        };
        check_compression(format, compression)?;
        check_dataset(format, dataset.is_some())?;
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
        to_stdout(|out| run(&paths, &opts, progress.enabled(), out))
    }
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON object per line: run, tag, step, wall_time, value (non-finite values as the
    /// Python-compatible tokens NaN, Infinity, -Infinity).
    Jsonl,
    /// CSV with a header row: run,tag,step,wall_time,value.
    Csv,
    /// Apache Parquet (uncompressed unless `--compression`, run and tag dictionary-encoded),
    /// columns run, tag, step, wall_time, value; needs `--output` (or `--dataset`).
    Parquet,
}

/// `--compression` (`docs/contract/consumers.md` "Exporting to Parquet").
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Compression {
    /// Not at all: the fastest export, the largest file.
    None,
    /// Snappy, as pandas and pyarrow write by default: a smaller file, a slower export.
    Snappy,
}

impl From<Format> for export::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Jsonl => export::Format::Jsonl,
            Format::Csv => export::Format::Csv,
            Format::Parquet => export::Format::Parquet,
        }
    }
}

impl From<Compression> for export::Compression {
    fn from(c: Compression) -> Self {
        match c {
            Compression::None => export::Compression::None,
            Compression::Snappy => export::Compression::Snappy,
        }
    }
}

/// `--compression` goes with `--format parquet` only.
pub fn check_compression(format: Format, compression: Compression) -> Result<(), CliError> {
    if compression != Compression::None && format != Format::Parquet {
        let name = format.to_possible_value().map(|v| v.get_name().to_owned());
        return Err(CliError::Usage(format!(
            "--compression applies to --format parquet only, not {}",
            name.unwrap_or_default()
        )));
    }
    Ok(())
}

/// `--dataset` goes with `--format parquet` only (`docs/contract/consumers.md` "A Parquet
/// dataset").
pub fn check_dataset(format: Format, dataset: bool) -> Result<(), CliError> {
    if dataset && format != Format::Parquet {
        let name = format.to_possible_value().map(|v| v.get_name().to_owned());
        return Err(CliError::Usage(format!(
            "--dataset writes a Parquet dataset: it goes with --format parquet, not {}",
            name.unwrap_or_default()
        )));
    }
    Ok(())
}

/// Export every scalar of `paths`; truncated tails and skipped records are reported on stderr
/// as they are found, and how many records were skipped at the end; `progress` draws a
/// progress bar.
pub fn run(
    paths: &[PathBuf],
    opts: &export::Options,
    progress: bool,
    stdout: &mut dyn Write,
) -> Result<(), CliError> {
    let mut observer = StderrObserver::new(progress.then_some("export"));
    export::export(paths, opts, stdout, &mut observer)?;
    if observer.skipped > 0 {
        crate::stderr::line(format_args!(
            "tally: skipped {} corrupt record(s)",
            observer.skipped
        ));
    }
    Ok(())
}
