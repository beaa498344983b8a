//! `tally export --format parquet --dataset DIR`: both tables as a Hive-partitioned Parquet
//! dataset, by run, added to incrementally (`docs/contract/consumers.md` "A Parquet dataset"):
//!
//! - `DIR/scalars/run=<name>/part-<file>-<byte>.parquet`: tag, step, wall_time, value, a part
//!   per export that found new points, named by where its reading started;
//! - `DIR/runs/run=<name>/part-0.parquet`: the run's row of the runs table, every run's file
//!   rewritten with the same columns;
//! - `DIR/_tally/state.json`: how far each run's files were read ([`state`]).
//!
//! A part is written under a dot-name and renamed into place, then the state saved: an export
//! stopped in between starts the same part again and replaces it. A run whose exported rows no
//! longer hold ([`changes`]) is exported whole into `DIR/_tally/staging` and swapped in.

mod changes;
mod hive;
mod runs_file;
mod state;
#[cfg(test)]
mod tests;

use super::options::Options;
use super::rule::TagRule;
use super::sink::RowSink;
use super::to_parquet::{Layout, ParquetSink};
use crate::columns::{resolve_inputs, run_name};
use crate::config::run_configuration;
use crate::error::Error;
use crate::meta::read_status;
use crate::observer::Observer;
use crate::runs::RunRow;
use crate::scalars::{Resume, RunScalars};
use changes::Plan;
use state::{Figures, FileState, Head, RuleKey, RunState, State};
use std::path::{Path, PathBuf};
use tally_schema::Profile;

/// The dataset's directories and files.
struct Dataset {
    root: PathBuf,
}

impl Dataset {
    fn scalars(&self, run: &str) -> PathBuf {
        self.root.join("scalars").join(hive::partition(run))
    }
    fn runs(&self, run: &str) -> PathBuf {
        self.root.join("runs").join(hive::partition(run))
    }
    fn private(&self) -> PathBuf {
        self.root.join("_tally")
    }
    fn state_file(&self) -> PathBuf {
        self.private().join("state.json")
    }
    /// Where a run exported whole is written before it replaces its partition.
    fn staging(&self, run: &str) -> PathBuf {
        self.private().join("staging").join(hive::partition(run))
    }
    /// Where a replaced partition waits for its removal.
    fn replaced(&self, run: &str) -> PathBuf {
        self.private().join("replaced").join(hive::partition(run))
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_owned(),
        source,
    }
}

/// A scalars part's name: where its reading started, so the same start is the same part.
fn part_name(file: usize, offset: u64) -> String {
    format!("part-{file:06}-{offset:020}.parquet")
}

/// The hidden name a file is written under before it is renamed to `path`: no reader of the
/// dataset lists it (a leading dot, and no `.parquet` ending).
fn in_progress(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp"))
}

/// Exports every scalar of the runs under `paths` into the dataset `dir` (created if need be),
/// adding to what earlier exports wrote. Runs are named as `tally.read` names them (relative to
/// the paths' common directory). Each run is saved in the state as soon as its part is in
/// place, so a later run's failure loses nothing; the runs table is rewritten either way.
pub(super) fn export_dataset(
    paths: &[PathBuf],
    opts: &Options,
    dir: &Path,
    observer: &mut dyn Observer,
) -> Result<(), Error> {
    let (root, runs) = resolve_inputs(paths, observer).map_err(Error::Refused)?;
    // Every run is checked before anything is written, so a refused migration writes nothing.
    let mut migrations: Vec<Option<Profile>> = Vec::with_capacity(runs.len());
    for (run_dir, files) in &runs {
        migrations.push(if opts.migrate_legacy {
            Some(super::migration::migration_profile(
                run_dir, files, opts, observer,
            )?)
        } else {
            None
        });
    }
    let ds = Dataset {
        root: dir.to_owned(),
    };
    for d in [ds.root.join("scalars"), ds.root.join("runs"), ds.private()] {
        std::fs::create_dir_all(&d).map_err(io(&d))?;
    }
    let state_file = ds.state_file();
    let mut state = State::load(&state_file)?;
    let size = |f: &PathBuf| std::fs::metadata(f).map_or(0, |m| m.len());
    let total = runs.iter().flat_map(|(_, files)| files).map(size).sum();
    let (mut done, mut rows) = (0, 0);
    let mut failure = None;
    for ((run_dir, files), migrate) in runs.into_iter().zip(migrations) {
        let name = run_name(&root, &run_dir);
        let rule = TagRule {
            migrate,
            globs: &opts.tags,
        };
        let key = RuleKey {
            tags: opts.tags.clone(),
            migrate: migrate.map(|p| p.to_string()),
        };
        let run = Run {
            name: &name,
            dir: &run_dir,
            files: &files,
            rule: &rule,
            key,
        };
        let exported = export_run(&ds, &state, &run, opts, observer)
            .and_then(|new| {
                state.runs.insert(name.clone(), new.state);
                rows += new.rows;
                state.save(&state_file).map(|()| new.replaced)
            })
            .map(|replaced| {
                if let Some(old) = replaced {
                    let _ = std::fs::remove_dir_all(old);
                }
            });
        if let Err(e) = exported {
            failure = Some(e);
            break;
        }
        done += files.iter().map(size).sum::<u64>();
        observer.progress(done, total, rows, false);
    }
    let table = write_runs_table(&ds, &state);
    observer.progress(done, total, rows, true);
    match failure {
        Some(e) => Err(e),
        None => table,
    }
}

/// One run to export.
struct Run<'a> {
    name: &'a str,
    dir: &'a Path,
    files: &'a [PathBuf],
    rule: &'a TagRule<'a>,
    key: RuleKey,
}

/// A run exported: its new state, the rows added, and the partition it replaced (removed once
/// the state is saved).
struct Exported {
    state: RunState,
    rows: u64,
    replaced: Option<PathBuf>,
}

/// Exports what is new in one run (or all of it, when what was exported no longer holds).
fn export_run(
    ds: &Dataset,
    state: &State,
    run: &Run<'_>,
    opts: &Options,
    observer: &mut dyn Observer,
) -> Result<Exported, Error> {
    let known = state.runs.get(run.name);
    let partition = ds.scalars(run.name);
    let plan = changes::plan(known, run.dir, run.files, &run.key, partition.is_dir())?;
    let status = read_status(run.dir);
    let config = run_configuration(run.dir)?;
    let fresh = |figures, files, rows| RunState {
        dir: run.dir.to_owned(),
        rule: run.key.clone(),
        files,
        rows,
        figures,
        status: status.clone(),
        config: config.clone(),
    };
    match (plan, known) {
        (Plan::Nothing, Some(known)) => Ok(Exported {
            state: RunState {
                status: status.clone(),
                config: config.clone(),
                ..known.clone()
            },
            rows: 0,
            replaced: None,
        }),
        (
            Plan::From {
                resume,
                file,
                offset,
            },
            Some(known),
        ) => {
            let part = partition.join(part_name(file, offset));
            let read = read_run(run, resume, known.figures.clone(), &part, opts, observer)?;
            Ok(Exported {
                state: fresh(read.figures, read.files, known.rows + read.rows),
                rows: read.rows,
                replaced: None,
            })
        }
        (plan, _) => {
            if let Plan::Whole(Some(why)) = &plan {
                observer.note(&format!(
                    "{}: {why}: run '{}' is exported again whole, its partition {} replaced",
                    run.dir.display(),
                    run.name,
                    partition.display()
                ));
            }
            let staging = ds.staging(run.name);
            if staging.exists() {
                std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
            }
            let part = staging.join(part_name(0, 0));
            let read = read_run(
                run,
                Resume::default(),
                Figures::default(),
                &part,
                opts,
                observer,
            )
            .inspect_err(|_| {
                let _ = std::fs::remove_dir_all(&staging);
            })?;
            let replaced = swap_in(ds, run.name, &staging, &partition, read.rows > 0)?;
            Ok(Exported {
                state: fresh(read.figures, read.files, read.rows),
                rows: read.rows,
                replaced,
            })
        }
    }
}

/// Puts the run's staged partition in place of `partition` (the old one moved aside first, and
/// returned for removal), or just removes the stage when it holds no row.
fn swap_in(
    ds: &Dataset,
    run: &str,
    staging: &Path,
    partition: &Path,
    has_rows: bool,
) -> Result<Option<PathBuf>, Error> {
    let mut replaced = None;
    if partition.exists() {
        let aside = ds.replaced(run);
        if aside.exists() {
            std::fs::remove_dir_all(&aside).map_err(io(&aside))?;
        }
        if let Some(parent) = aside.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::rename(partition, &aside).map_err(io(partition))?;
        replaced = Some(aside);
    }
    if has_rows {
        std::fs::rename(staging, partition).map_err(io(partition))?;
    }
    Ok(replaced)
}

/// What reading a run on from a position gave.
struct Read {
    rows: u64,
    figures: Figures,
    files: Vec<FileState>,
}

/// Reads the run's scalars on from `resume`, writing the rows its rule keeps to `part` (written
/// under its [`in_progress`] name, renamed once whole; no file when no row is kept).
fn read_run(
    run: &Run<'_>,
    resume: Resume,
    mut figures: Figures,
    part: &Path,
    opts: &Options,
    observer: &mut dyn Observer,
) -> Result<Read, Error> {
    let tmp = in_progress(part);
    let mut sink: Option<ParquetSink> = None;
    let mut rows = 0;
    let mut scalars = RunScalars::new(run.files.to_vec(), opts.policy)
        .strict(opts.strict)
        .resume(resume);
    let mut read = || -> Result<(), Error> {
        while scalars.advance()?.is_some() {
            observer.damage(&scalars.take_damage());
            let Some(s) = scalars.current() else {
                continue;
            };
            figures.add(s.step, s.wall_time);
            let Some(s) = run.rule.apply(s) else {
                continue;
            };
            let out = match &mut sink {
                Some(out) => out,
                None => {
                    // The partition appears with its first row, never empty.
                    if let Some(dir) = part.parent() {
                        std::fs::create_dir_all(dir).map_err(io(dir))?;
                    }
                    let mut out = ParquetSink::create(&tmp, opts.compression, Layout::WithoutRun)?;
                    out.start_run(run.name);
                    sink.insert(out)
                }
            };
            out.row(s)?;
            rows += 1;
        }
        observer.damage(&scalars.take_damage());
        if let Some(mut out) = sink.take() {
            out.finish()?;
            std::fs::rename(&tmp, part).map_err(io(part))?;
        }
        Ok(())
    };
    if let Err(e) = read() {
        drop(sink);
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let so_far = scalars.read_so_far();
    let mut files = Vec::with_capacity(run.files.len());
    for (i, path) in run.files.iter().enumerate() {
        let read_to = so_far.offsets.get(i).copied().unwrap_or(0);
        files.push(FileState {
            path: path.clone(),
            read_to,
            max_step: so_far.max_steps.get(i).copied().flatten(),
            head: Head::of(path, read_to)?,
        });
    }
    Ok(Read {
        rows,
        figures,
        files,
    })
}

/// Rewrites every known run's runs-table file with the same columns (the union of their
/// configuration keys); a run with no point has none.
fn write_runs_table(ds: &Dataset, state: &State) -> Result<(), Error> {
    let mut rows = Vec::new();
    for (name, run) in &state.runs {
        let dir = ds.runs(name);
        if run.figures.points == 0 {
            if dir.exists() {
                std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
            }
            continue;
        }
        let f = &run.figures;
        let row = RunRow {
            name: name.clone(),
            dir: run.dir.clone(),
            status: run.status.clone(),
            start: f.first_wall,
            duration: f.first_wall.zip(f.last_wall).map(|(a, b)| b - a),
            last_step: f.last_step,
            points: f.points,
            config: run.config.clone(),
            tags: Vec::new(),
            health: None,
        };
        let mut flat = row.flat();
        flat.retain(|(k, _)| k != "run");
        rows.push((dir, flat));
    }
    let flat: Vec<_> = rows.iter().map(|(_, r)| r.clone()).collect();
    let columns = crate::runs::column_types(&flat);
    for (dir, row) in &rows {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join("part-0.parquet");
        let tmp = in_progress(&path);
        runs_file::write(&tmp, &columns, row).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
    }
    Ok(())
}
