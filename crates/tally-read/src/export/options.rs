//! What an export is asked for: the format, the tags kept, legacy migration, the corruption
//! policy, strictness about steps, where it goes and how Parquet pages are compressed.

use std::path::PathBuf;
use tally_schema::Profile;
use tally_tfevents::OnCorruption;

/// Output format of `tally export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// How Parquet pages are compressed (`docs/contract/consumers.md` "Exporting to Parquet").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Not at all: the fastest export, the largest file.
    None,
    /// Snappy, as pandas and pyarrow write by default: a smaller file, a slower export.
    Snappy,
}

/// Everything an export is asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Output format.
    pub format: Format,
    /// Keep only tags matching one of these `*` globs (after migration); empty keeps all.
    pub tags: Vec<String>,
    /// Rename legacy tags to their canonical names, scaling units: only in pre-schema runs,
    /// the gate of `extract --legacy-unversioned` (`crate::legacy`).
    pub migrate_legacy: bool,
    /// The profile of migrated runs whose `run_config.json` names none (`--profile`).
    pub profile: Option<Profile>,
    /// Corruption policy.
    pub policy: OnCorruption,
    /// Refuse a run whose steps go back across its files (else kept and reported).
    pub strict: bool,
    /// Write here instead of stdout (required for Parquet).
    pub output: Option<PathBuf>,
    /// Parquet page compression (Parquet only).
    pub compression: Compression,
    /// Add to the Parquet dataset in this directory instead of writing one file (Parquet only,
    /// without `output`; `docs/contract/consumers.md` "A Parquet dataset").
    pub dataset: Option<PathBuf>,
}
