//! `tally export`: the flags of an export, checked, handed to [`tally_read::export`], with
//! damage and a progress bar on stderr.

use crate::error::CliError;
use crate::stderr::StderrObserver;
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;
use tally_read::export;

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
