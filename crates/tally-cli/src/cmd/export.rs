//! `tally export`: stream every scalar of event files as JSON lines, CSV or Parquet, in
//! constant memory, with tag filters, optional legacy→canonical migration, and a progress bar.

use crate::error::CliError;
use crate::run_files::{runs_under, warn, RunDir, RunScalars};
use crate::run_reader::{read_json, RunConfigFacts};
use clap::ValueEnum;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tally_schema::legacy::glob_match;
use tally_schema::{legacy_mapping, Profile};
use tally_tfevents::{Damage, Interner, OnCorruption, ScalarRef};

mod blocks;
mod hybrid;
mod pages;
mod spliced;
mod to_parquet;
mod windows;
use to_parquet::ParquetSink;
use windows::{export_windows, Windows, PARALLEL_FILE_BYTES};

/// Output format of `tally export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON object per line: run, tag, step, wall_time, value (non-finite values as the
    /// Python-compatible tokens NaN, Infinity, -Infinity).
    Jsonl,
    /// CSV with a header row: run,tag,step,wall_time,value.
    Csv,
    /// Apache Parquet (uncompressed unless `--compression`, run and tag dictionary-encoded),
    /// columns run, tag, step, wall_time, value; needs `--output`.
    Parquet,
}

/// How Parquet pages are compressed (`docs/contract/consumers.md` "Exporting to Parquet").
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Compression {
    /// Not at all: the fastest export, the largest file.
    None,
    /// Snappy, as pandas and pyarrow write by default: a smaller file, a slower export.
    Snappy,
}

/// Everything `tally export` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Output format.
    pub format: Format,
    /// Keep only tags matching one of these `*` globs (after migration); empty keeps all.
    pub tags: Vec<String>,
    /// Rename legacy tags to their canonical names, scaling units.
    pub migrate_legacy: bool,
    /// Corruption policy.
    pub policy: OnCorruption,
    /// Write here instead of stdout (required for Parquet).
    pub output: Option<PathBuf>,
    /// Parquet page compression (Parquet only).
    pub compression: Compression,
    /// Show a progress bar on stderr (default: when stderr is a terminal).
    pub progress: bool,
}

/// The runs `path` stands for, each a directory and its event files in reading order: a
/// file is read alone, as given; a directory holds one run per directory at or below it that
/// has event files (a resumed run's files read as one, [`crate::run_files`]).
pub fn runs_of(path: &Path) -> Result<Vec<RunDir>, CliError> {
    let meta = std::fs::metadata(path).map_err(|source| CliError::Io {
        path: path.to_owned(),
        source,
    })?;
    if meta.is_file() {
        let dir = path.parent().unwrap_or(Path::new(".")).to_owned();
        return Ok(vec![(dir, vec![path.to_owned()])]);
    }
    let found = runs_under(path)?;
    if found.is_empty() {
        return Err(CliError::Refused(format!(
            "{}: no events.out.tfevents.* file found",
            path.display()
        )));
    }
    Ok(found)
}

/// Writes `v` as a JSON number (the shortest representation that round-trips, as serde_json
/// prints it), or one of the Python-compatible tokens for non-finite values.
fn write_json_number(out: &mut dyn Write, v: f64) -> std::io::Result<()> {
    if v.is_nan() {
        out.write_all(b"NaN")
    } else if v.is_infinite() {
        out.write_all(if v > 0.0 { b"Infinity" } else { b"-Infinity" })
    } else {
        serde_json::to_writer(out, &v).map_err(std::io::Error::other)
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// Each distinct tag's encoded form, made once: rows repeat a few tags millions of times.
struct Encoded<T> {
    ids: Interner,
    encoded: Vec<T>,
    encode: fn(&str) -> T,
}

impl<T> Encoded<T> {
    fn new(encode: fn(&str) -> T) -> Self {
        Encoded {
            ids: Interner::new(),
            encoded: Vec::new(),
            encode,
        }
    }

    fn get(&mut self, s: &str) -> &T {
        let id = self.ids.id(s);
        if id == self.encoded.len() {
            self.encoded.push((self.encode)(s));
        }
        &self.encoded[id]
    }
}

fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// A JSON line's start up to its run.
fn json_run(run: &str) -> String {
    format!("{{\"run\":{}", json_string(run))
}

/// Where rows go.
trait RowSink {
    fn header(&mut self) -> Result<(), CliError> {
        Ok(())
    }
    /// The rows that follow are of `run`.
    fn start_run(&mut self, run: &str);
    fn row(&mut self, s: ScalarRef<'_>) -> Result<(), CliError>;
    fn finish(&mut self) -> Result<(), CliError>;
    /// The Parquet sink, which also takes whole windows of a file read on every core.
    fn windows(&mut self) -> Option<&mut ParquetSink> {
        None
    }
}

struct TextSink<'a> {
    out: &'a mut dyn Write,
    format: Format,
    /// The current run's row start, and each tag's field, encoded once.
    run: String,
    tags: Encoded<String>,
}

impl<'a> TextSink<'a> {
    fn new(out: &'a mut dyn Write, format: Format) -> Self {
        let tags = match format {
            Format::Csv => Encoded::new(csv_field),
            _ => Encoded::new(json_string),
        };
        TextSink {
            out,
            format,
            run: String::new(),
            tags,
        }
    }
}

impl RowSink for TextSink<'_> {
    fn header(&mut self) -> Result<(), CliError> {
        if self.format == Format::Csv {
            writeln!(self.out, "run,tag,step,wall_time,value")?;
        }
        Ok(())
    }

    fn start_run(&mut self, run: &str) {
        self.run = match self.format {
            Format::Csv => csv_field(run),
            _ => json_run(run),
        };
    }

    fn row(&mut self, s: ScalarRef<'_>) -> Result<(), CliError> {
        let out = &mut *self.out;
        out.write_all(self.run.as_bytes())?;
        match self.format {
            Format::Csv => {
                out.write_all(b",")?;
                out.write_all(self.tags.get(s.tag).as_bytes())?;
                writeln!(out, ",{},{},{}", s.step, s.wall_time, s.value)?;
            }
            _ => {
                out.write_all(b",\"tag\":")?;
                out.write_all(self.tags.get(s.tag).as_bytes())?;
                write!(out, ",\"step\":{},\"wall_time\":", s.step)?;
                write_json_number(out, s.wall_time)?;
                out.write_all(b",\"value\":")?;
                write_json_number(out, s.value)?;
                out.write_all(b"}\n")?;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), CliError> {
        Ok(self.out.flush()?)
    }
}

/// A one-line progress bar on stderr, redrawn at most 5 times a second.
struct Progress {
    total: u64,
    done_before: u64,
    rows: u64,
    last: Instant,
    on: bool,
}

impl Progress {
    fn tick(&mut self, position: u64, force: bool) {
        if !self.on || (!force && self.last.elapsed() < Duration::from_millis(200)) {
            return;
        }
        self.last = Instant::now();
        let done = self.done_before + position;
        let pct = if self.total > 0 {
            done as f64 / self.total as f64 * 100.0
        } else {
            100.0
        };
        eprint!(
            "\rexport: {pct:5.1}% ({:.1} / {:.1} MB, {} scalars)",
            done as f64 / 1e6,
            self.total as f64 / 1e6,
            self.rows
        );
    }

    fn end(&mut self) {
        if self.on {
            self.tick(0, true);
            eprintln!();
        }
    }
}

/// What a run's tags become: renamed from legacy names (with their unit scale) when migrating,
/// and kept only when they match a glob, if any was given.
struct TagRule<'o> {
    migrate: Option<Profile>,
    globs: &'o [String],
}

impl TagRule<'_> {
    /// Every tag kept as it is.
    fn is_trivial(&self) -> bool {
        self.migrate.is_none() && self.globs.is_empty()
    }

    /// The exported name of `tag` and the factor its values are scaled by, or `None` when the
    /// tag is not exported.
    fn rename<'t>(&self, tag: &'t str) -> Option<(&'t str, Option<f64>)> {
        let (tag, scale) = match self.migrate.and_then(|p| legacy_mapping(tag, Some(p))) {
            Some(row) => (row.new, Some(row.scale)),
            None => (tag, None),
        };
        let kept = self.globs.is_empty() || self.globs.iter().any(|g| glob_match(g, tag));
        kept.then_some((tag, scale))
    }

    fn apply<'a>(&self, s: ScalarRef<'a>) -> Option<ScalarRef<'a>> {
        if self.is_trivial() {
            return Some(s);
        }
        let (tag, scale) = self.rename(s.tag)?;
        Some(ScalarRef {
            tag,
            // A renamed tag is not the one the reader numbered.
            tag_id: if scale.is_some() { None } else { s.tag_id },
            value: scale.map_or(s.value, |k| s.value * k),
            ..s
        })
    }
}

/// Export every scalar of `paths`. Rows already written stay written when a later file fails;
/// the error names the file and byte offset. Truncated tails and skipped records are reported
/// on stderr as they are found.
pub fn run(paths: &[PathBuf], opts: &Options, stdout: &mut dyn Write) -> Result<(), CliError> {
    if opts.compression != Compression::None && opts.format != Format::Parquet {
        let format = opts
            .format
            .to_possible_value()
            .map(|v| v.get_name().to_owned());
        return Err(CliError::Usage(format!(
            "--compression applies to --format parquet only, not {}",
            format.unwrap_or_default()
        )));
    }
    let mut runs = Vec::new();
    for p in paths {
        runs.extend(runs_of(p)?);
    }
    let size = |f: &PathBuf| std::fs::metadata(f).map_or(0, |m| m.len());
    let total = runs.iter().flat_map(|(_, files)| files).map(size).sum();
    let mut file_out;
    let mut sink: Box<dyn RowSink + '_> = match (opts.format, &opts.output) {
        (Format::Parquet, Some(path)) => Box::new(ParquetSink::create(path, opts.compression)?),
        (Format::Parquet, None) => {
            return Err(CliError::Setting(
                "--format parquet writes a binary file: pass --output FILE.parquet".into(),
            ))
        }
        (format, Some(path)) => {
            file_out = std::io::BufWriter::new(std::fs::File::create(path).map_err(|source| {
                CliError::Io {
                    path: path.clone(),
                    source,
                }
            })?);
            Box::new(TextSink::new(&mut file_out, format))
        }
        (format, None) => Box::new(TextSink::new(stdout, format)),
    };
    sink.header()?;
    let mut progress = Progress {
        total,
        done_before: 0,
        rows: 0,
        last: Instant::now(),
        on: opts.progress,
    };
    let mut skipped = 0;
    let mut report = |damage: Vec<Damage>| {
        skipped += damage
            .iter()
            .filter(|d| matches!(d, Damage::Skipped { .. }))
            .count();
        warn(&damage);
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (dir, files) in runs {
        sink.start_run(&dir.display().to_string());
        let migrate = if opts.migrate_legacy {
            let config = read_json(&dir.join("run_config.json"))?;
            let profile = RunConfigFacts::from_config(config.as_ref()).profile();
            Some(profile.unwrap_or(Profile::SacFamily))
        } else {
            None
        };
        let rule = TagRule {
            migrate,
            globs: &opts.tags,
        };
        // One large file: every core reads it, a window at a time. Whatever that could not
        // read (damage to report, boundaries in doubt) the sequential reader reads after the
        // scalars already exported.
        let mut exported = 0;
        if let (Some(parquet), [file]) = (sink.windows(), files.as_slice()) {
            if cores > 1 && size(file) >= PARALLEL_FILE_BYTES {
                let outcome = export_windows(file, cores, &rule, parquet, |at, rows| {
                    progress.rows += rows;
                    progress.tick(at, false);
                })?;
                match outcome {
                    Windows::Done => {
                        progress.done_before += size(file);
                        continue;
                    }
                    Windows::Stopped { exported_scalars } => exported = exported_scalars,
                }
            }
        }
        let mut scalars = RunScalars::new(files, opts.policy);
        let mut file_index = 0;
        while let Some(index) = scalars.advance()? {
            report(scalars.take_damage());
            while file_index < index {
                progress.done_before += size(&scalars.files()[file_index]);
                file_index += 1;
            }
            let Some(s) = scalars.current() else {
                continue;
            };
            if exported > 0 {
                exported -= 1;
                continue;
            }
            let Some(s) = rule.apply(s) else {
                continue;
            };
            sink.row(s)?;
            progress.rows += 1;
            if progress.rows % 4096 == 0 {
                progress.tick(scalars.position(), false);
            }
        }
        report(scalars.take_damage());
        progress.done_before += scalars.files()[file_index..].iter().map(size).sum::<u64>();
    }
    sink.finish()?;
    progress.end();
    if skipped > 0 {
        eprintln!("tally: skipped {skipped} corrupt record(s)");
    }
    Ok(())
}
