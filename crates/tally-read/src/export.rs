//! Exporting runs (`tally export`): every scalar of event files streamed as JSON lines, CSV or
//! Parquet, in constant memory, with tag filters and optional legacy→canonical migration of
//! pre-schema runs, and Parquet datasets added to run by run (`export/dataset.rs`;
//! `docs/contract/consumers.md` "export", "Exporting to Parquet", "A Parquet dataset").

mod blocks;
mod dataset;
mod hybrid;
mod migration;
mod options;
mod pages;
mod rule;
mod sink;
mod spliced;
mod text;
mod to_parquet;
mod windows;

pub use options::{Compression, Format, Options};

use crate::error::Error;
use crate::files::runs_of;
use crate::observer::Observer;
use crate::scalars::RunScalars;
use rule::TagRule;
use sink::RowSink;
use std::io::Write;
use std::path::PathBuf;
use text::TextSink;
use to_parquet::{Layout, ParquetSink};
use windows::{export_windows, Windows, PARALLEL_FILE_BYTES};

/// Where the rows go: the Parquet sink also takes whole windows of a file read on every core.
enum Out<'a> {
    Text(TextSink<'a>),
    Parquet(ParquetSink),
}

impl Out<'_> {
    fn rows(&mut self) -> &mut dyn RowSink {
        match self {
            Out::Text(t) => t,
            Out::Parquet(p) => p,
        }
    }
}

/// Bytes read so far and rows written, told to the observer.
struct Progress {
    total: u64,
    done_before: u64,
    rows: u64,
}

/// Export every scalar of `paths` (event files, or directories searched for runs) to
/// `opts.output`, or to `stdout` for the text formats. Rows already written stay written when
/// a later file fails; the error names the file and byte offset. Truncated tails and skipped
/// records go to `observer` as they are found, with the progress.
pub fn export(
    paths: &[PathBuf],
    opts: &Options,
    stdout: &mut dyn Write,
    observer: &mut dyn Observer,
) -> Result<(), Error> {
    if opts.profile.is_some() && !opts.migrate_legacy {
        return Err(Error::Setting(
            "--profile names the profile of a legacy migration: it goes with --migrate-legacy"
                .into(),
        ));
    }
    if let Some(dir) = &opts.dataset {
        if opts.format != Format::Parquet || opts.output.is_some() {
            return Err(Error::Setting(
                "--dataset DIR writes a Parquet dataset: it goes with --format parquet, \
                 without --output"
                    .into(),
            ));
        }
        return dataset::export_dataset(paths, opts, dir, observer);
    }
    let mut runs = Vec::new();
    for p in paths {
        runs.extend(runs_of(p, observer)?);
    }
    // Every run is checked before the first row, so a refused migration writes nothing.
    let mut migrations = Vec::with_capacity(runs.len());
    for (dir, files) in &runs {
        migrations.push(if opts.migrate_legacy {
            Some(migration::migration_profile(dir, files, opts, observer)?)
        } else {
            None
        });
    }
    let size = |f: &PathBuf| std::fs::metadata(f).map_or(0, |m| m.len());
    let total = runs.iter().flat_map(|(_, files)| files).map(size).sum();
    let mut file_out;
    let mut out = match (opts.format, &opts.output) {
        (Format::Parquet, Some(path)) => Out::Parquet(ParquetSink::create(
            path,
            opts.compression,
            Layout::WithRun,
        )?),
        (Format::Parquet, None) => return Err(Error::Setting(
            "--format parquet writes a binary file: pass --output FILE.parquet (or --dataset DIR)"
                .into(),
        )),
        (format, Some(path)) => {
            file_out = std::io::BufWriter::new(std::fs::File::create(path).map_err(|source| {
                Error::Io {
                    path: path.clone(),
                    source,
                }
            })?);
            Out::Text(TextSink::new(&mut file_out, format))
        }
        (format, None) => Out::Text(TextSink::new(stdout, format)),
    };
    out.rows().header()?;
    let mut progress = Progress {
        total,
        done_before: 0,
        rows: 0,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for ((dir, files), migrate) in runs.into_iter().zip(migrations) {
        out.rows().start_run(&dir.display().to_string());
        let rule = TagRule {
            migrate,
            globs: &opts.tags,
        };
        // One large file: every core reads it, a window at a time. Whatever that could not
        // read (damage to report, boundaries in doubt) the sequential reader reads after the
        // scalars already exported.
        let mut exported = 0;
        if let (Out::Parquet(parquet), [file]) = (&mut out, files.as_slice()) {
            if cores > 1 && size(file) >= PARALLEL_FILE_BYTES {
                let outcome = export_windows(file, cores, &rule, parquet, |at, rows| {
                    progress.rows += rows;
                    let done = progress.done_before + at;
                    observer.progress(done, progress.total, progress.rows, false);
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
        let sink = out.rows();
        let mut scalars = RunScalars::new(files, opts.policy).strict(opts.strict);
        let mut file_index = 0;
        while let Some(index) = scalars.advance()? {
            observer.damage(&scalars.take_damage());
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
            if progress.rows.is_multiple_of(4096) {
                let done = progress.done_before + scalars.position();
                observer.progress(done, progress.total, progress.rows, false);
            }
        }
        observer.damage(&scalars.take_damage());
        progress.done_before += scalars.files()[file_index..].iter().map(size).sum::<u64>();
    }
    out.rows().finish()?;
    observer.progress(progress.done_before, progress.total, progress.rows, true);
    Ok(())
}
