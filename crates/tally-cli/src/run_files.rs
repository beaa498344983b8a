//! A run's event files: which files make up a run ([`run_event_files`], [`runs_under`]), the
//! order they are read in, and [`RunScalars`], which streams their scalars as one series,
//! checks that steps continue across files, and collects what the reader found damaged
//! (`docs/contract/consumers.md` "A run's event files", "What readers report").

use crate::error::CliError;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use tally_tfevents::proto::event::What;
use tally_tfevents::{
    is_event_file_name, open_event_file, Damage, Interner, OnCorruption, ScalarEvent, ScalarReader,
    ScalarRef, WireScalars,
};

/// One run: its directory and its event files in reading order.
pub type RunDir = (PathBuf, Vec<PathBuf>);

/// Every directory at or below `dir` that holds event files, in path order, each with its
/// files in run order ([`order_run_files`]). A directory's event files are one run.
pub fn runs_under(dir: &Path) -> Result<Vec<RunDir>, CliError> {
    let mut by_dir: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let io = |source| CliError::Io {
            path: d.clone(),
            source,
        };
        for entry in std::fs::read_dir(&d).map_err(io)? {
            let entry = entry.map_err(io)?;
            let p = entry.path();
            let ty = entry.file_type().map_err(|source| CliError::Io {
                path: p.clone(),
                source,
            })?;
            if ty.is_dir() {
                stack.push(p);
            } else if entry.file_name().to_str().is_some_and(is_event_file_name) {
                by_dir.entry(d.clone()).or_default().push(p);
            }
        }
    }
    Ok(by_dir
        .into_iter()
        .map(|(d, files)| (d, order_run_files(files)))
        .collect())
}

/// The event files of the run in `dir`, in run order; empty when it has none yet. Every
/// command that reads one run (`extract`, `scaling`, `watch`) finds its events here.
///
/// The rule: a run is one directory's `events.out.tfevents.*` files (a resumed run adds a
/// file beside the first). `dir` is that directory, or a directory with exactly one such
/// directory at or below it; several are several runs, and a one-run reader refuses to pick.
pub fn run_event_files(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    if !dir.is_dir() {
        return Err(CliError::Refused(format!(
            "{}: not a run directory",
            dir.display()
        )));
    }
    let mut runs = runs_under(dir)?;
    match runs.len() {
        0 => Ok(Vec::new()),
        1 => Ok(runs.pop().map(|(_, files)| files).unwrap_or_default()),
        n => Err(CliError::Refused(format!(
            "{}: event files of {n} runs found ({}): pass one run directory",
            dir.display(),
            runs.iter()
                .map(|(d, _)| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A run's event files and its sub-runs: the directories below it holding event files of
/// their own, as torch's and tensorboardX's `add_scalars` make (one per series, named
/// `<main_tag>_<key>`). Each sub-run is named relative to the run's directory.
#[derive(Debug, Default)]
pub struct RunWithSubruns {
    /// The run's own files, in run order.
    pub files: Vec<PathBuf>,
    /// Each sub-run's name (relative to the run, `/`-separated) and directory, in path order.
    pub subruns: Vec<(String, PathBuf)>,
}

/// The run in `dir` with its sub-runs (`tally watch`): as [`run_event_files`], except that
/// directories with event files below the run's own directory are its sub-runs rather than
/// other runs. Directories of which none holds all the others are still several runs, refused
/// naming them.
pub fn run_with_subruns(dir: &Path) -> Result<RunWithSubruns, CliError> {
    if !dir.is_dir() {
        return run_event_files(dir).map(|files| RunWithSubruns {
            files,
            subruns: Vec::new(),
        });
    }
    // Path order puts a directory before everything below it.
    let mut runs = runs_under(dir)?.into_iter();
    let Some((main, files)) = runs.next() else {
        return Ok(RunWithSubruns::default());
    };
    let mut subruns = Vec::new();
    for (sub, _) in runs {
        let Ok(rel) = sub.strip_prefix(&main) else {
            // Siblings: several runs.
            return run_event_files(dir).map(|files| RunWithSubruns {
                files,
                subruns: Vec::new(),
            });
        };
        let name: Vec<_> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect();
        subruns.push((name.join("/"), sub));
    }
    Ok(RunWithSubruns { files, subruns })
}

/// The event files directly in `dir` (one run's, no sub-run's), in run order.
pub fn dir_event_files(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let io = |source| CliError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        if entry.file_name().to_str().is_some_and(is_event_file_name) && entry.path().is_file() {
            files.push(entry.path());
        }
    }
    Ok(order_run_files(files))
}

/// The event files of the run in `dir` ([`run_event_files`]), which must exist by now.
pub fn require_run_event_files(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let files = run_event_files(dir)?;
    if files.is_empty() {
        return Err(CliError::Refused(format!(
            "{}: no events.out.tfevents.* file: pass one run directory",
            dir.display()
        )));
    }
    Ok(files)
}

/// Sorts one run's files by their first event's wall time (the `file_version` event a
/// writer puts first), then by name. A file whose first event cannot be read yet (empty, or
/// damaged at its start) sorts after every dated file; reading it reports the problem.
pub fn order_run_files(files: Vec<PathBuf>) -> Vec<PathBuf> {
    // The one rule, shared with the logger's remote sinks.
    tally::remote::order_event_files(files)
}

/// The step of the `SessionLog.START` event in `file`, if any: TensorBoard's purge marker
/// (what `SummaryWriter(purge_step=...)` writes). Only read to explain a refusal.
fn purge_marker(file: &Path) -> Option<i64> {
    const START: i32 = 1;
    let mut reader = open_event_file(file)
        .ok()?
        .with_on_corruption(OnCorruption::Skip);
    while let Ok(Some(event)) = reader.read_event() {
        if let Some(What::SessionLog(log)) = &event.what {
            if log.status == START {
                return Some(event.step);
            }
        }
    }
    None
}

/// Streams the scalars of one run's files (in the order given) as one series.
///
/// Each scalar's step must be greater than every step of the files before its own: a step
/// that goes back across files is an error naming both files. Within a file steps are not
/// checked (TensorBoard draws them as written). Truncated tails and, under
/// [`OnCorruption::Skip`], skipped records are kept for [`RunScalars::take_damage`]; a
/// corrupt record under [`OnCorruption::Error`] is the error, naming file and byte offset.
pub struct RunScalars {
    files: Vec<PathBuf>,
    policy: OnCorruption,
    /// Index of the next file to open.
    next: usize,
    current: Option<ScalarReader<BufReader<File>>>,
    /// The tag numbering, between files (the open reader holds it while it reads).
    tags: Interner,
    /// Largest step of the files before the current one, and the file that holds it.
    before: Option<(i64, usize)>,
    /// Largest step of the current file so far.
    current_max: Option<i64>,
    damage: Vec<Damage>,
}

impl RunScalars {
    /// Reads `files` (one run, in run order) with `policy`.
    pub fn new(files: Vec<PathBuf>, policy: OnCorruption) -> Self {
        RunScalars {
            files,
            policy,
            next: 0,
            current: None,
            tags: Interner::new(),
            before: None,
            current_max: None,
            damage: Vec::new(),
        }
    }

    /// Numbers tags on from `tags` (a sink reading several runs keeps one numbering), before
    /// the first [`advance`](Self::advance).
    pub fn with_tags(mut self, tags: Interner) -> Self {
        self.tags = tags;
        self
    }

    /// Gives the tag numbering back once every file is read (for the next run).
    pub fn take_tags(&mut self) -> Interner {
        match self.current.as_mut() {
            Some(reader) => reader.take_tags(),
            None => std::mem::take(&mut self.tags),
        }
    }

    /// The next scalar and the index of its file, or `None` once every file is read.
    pub fn next_scalar(&mut self) -> Result<Option<(usize, ScalarEvent)>, CliError> {
        let Some(index) = self.advance()? else {
            return Ok(None);
        };
        Ok(self.current().map(|s| (index, s.to_scalar_event())))
    }

    /// Moves to the next scalar, which [`current`](Self::current) then borrows (no allocation
    /// per scalar): the index of its file, or `None` once every file is read. Its
    /// [`ScalarRef::tag_id`] numbers the run's tags across its files.
    #[inline]
    pub fn advance(&mut self) -> Result<Option<usize>, CliError> {
        // The next scalar of the same event: same step, so nothing to check.
        if let Some(reader) = self.current.as_mut() {
            if reader.advance_in_event() {
                return Ok(Some(self.next - 1));
            }
        }
        self.advance_event()
    }

    /// Moves to the next event holding scalars (passing over the rest of the current one),
    /// whose scalars [`event`](Self::event) then borrows: the index of its file, or `None` once
    /// every file is read. The tag ids of [`WireScalars::scalars`] are the run's, as in
    /// [`advance`](Self::advance).
    pub fn advance_event(&mut self) -> Result<Option<usize>, CliError> {
        loop {
            let Some(reader) = self.current.as_mut() else {
                let Some(file) = self.files.get(self.next) else {
                    return Ok(None);
                };
                self.current = Some(
                    open_event_file(file)?
                        .with_on_corruption(self.policy)
                        .into_scalars_with_tags(std::mem::take(&mut self.tags)),
                );
                self.next += 1;
                continue;
            };
            let index = self.next - 1;
            let more = reader.advance_event()?;
            // Skipped records only exist under Skip: nothing to collect otherwise.
            if reader.skipped_records() > 0 {
                self.damage.extend(reader.take_skipped());
            }
            if !more {
                self.damage.extend(reader.truncated_tail());
                self.tags = reader.take_tags();
                self.current = None;
                if let Some(max) = self.current_max.take() {
                    self.before = Some(match self.before {
                        Some((b, f)) if b >= max => (b, f),
                        _ => (max, index),
                    });
                }
                continue;
            }
            let step = reader.event().step;
            if let Some((max, file)) = self.before {
                if step <= max {
                    let tag = reader.current().map_or("", |s| s.tag);
                    let purge = purge_marker(&self.files[index]).map_or(String::new(), |at| {
                        format!(
                            " (it starts with TensorBoard's purge marker at step {at}, which tells \
                             TensorBoard to drop the earlier files' points from that step on; tally \
                             does not drop data)"
                        )
                    });
                    return Err(CliError::Refused(format!(
                        "{}: step {step} of tag '{tag}' does not continue the run: {} already reached step {max}{purge}; \
                         a run's event files must have increasing steps across files (read them one by one by passing the files)",
                        self.files[index].display(),
                        self.files[file].display(),
                    )));
                }
            }
            self.current_max = Some(self.current_max.map_or(step, |m| m.max(step)));
            return Ok(Some(index));
        }
    }

    /// The event [`advance_event`](Self::advance_event) (or [`advance`](Self::advance)) is in.
    pub fn event(&self) -> Option<&WireScalars> {
        Some(self.current.as_ref()?.event())
    }

    /// The scalar [`advance`](Self::advance) moved to.
    pub fn current(&self) -> Option<ScalarRef<'_>> {
        self.current.as_ref()?.current()
    }

    /// Byte position in the file being read (for progress).
    pub fn position(&self) -> u64 {
        self.current
            .as_ref()
            .map_or(0, |r| r.events().records().position())
    }

    /// The run's files, in the order read.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The damage found since the last call, in reading order.
    pub fn take_damage(&mut self) -> Vec<Damage> {
        std::mem::take(&mut self.damage)
    }
}

/// One line per damage found, for stderr: `tally: warning: <file>: truncated tail at byte N: ...`.
pub fn warn(damage: &[Damage]) {
    for d in damage {
        eprintln!("tally: warning: {d}");
    }
}

/// The JSON form of damage found: `[{"file", "offset", "kind", "detail"}]`.
pub fn damage_json(damage: &[Damage]) -> serde_json::Value {
    damage
        .iter()
        .map(|d| {
            serde_json::json!({
                "file": d.path().map(|p| p.display().to_string()),
                "offset": d.offset(),
                "kind": d.kind_name(),
                "detail": d.detail(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_tfevents::{encode_scalar_event, RecordWriter};

    fn write(path: &Path, events: &[(i64, &[(&str, f64)])]) {
        let mut w = RecordWriter::new(Vec::new());
        for &(step, scalars) in events {
            let mut buf = Vec::new();
            encode_scalar_event(step, 0.5, scalars, &mut buf);
            w.write_record(&buf).unwrap();
        }
        std::fs::write(path, w.into_inner()).unwrap();
    }

    #[test]
    fn a_tag_keeps_its_id_across_a_runs_files_and_events_match_scalars() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("1.tfevents"), dir.path().join("2.tfevents"));
        write(&a, &[(1, &[("x", 1.0), ("y", 2.0)]), (2, &[("y", 3.0)])]);
        // The second file meets y first: its id must still be y's from the first file.
        write(&b, &[(3, &[("y", 4.0), ("z", 5.0), ("x", 6.0)])]);
        let files = vec![a, b];
        let mut r = RunScalars::new(files.clone(), OnCorruption::Error);
        let mut rows = Vec::new();
        while let Some(file) = r.advance().unwrap() {
            let s = r.current().unwrap();
            rows.push((file, s.tag.to_owned(), s.tag_id.unwrap(), s.step, s.value));
        }
        let want = [
            (0, "x", 0, 1, 1.0),
            (0, "y", 1, 1, 2.0),
            (0, "y", 1, 2, 3.0),
            (1, "y", 1, 3, 4.0),
            (1, "z", 2, 3, 5.0),
            (1, "x", 0, 3, 6.0),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|&(f, t, id, step, v)| (f, t.to_owned(), id, step, v))
            .collect();
        assert_eq!(rows, want);
        assert_eq!(r.take_tags().len(), 3);

        // Event at a time: the same rows, grouped by event.
        let mut r = RunScalars::new(files, OnCorruption::Error);
        let mut events = Vec::new();
        while let Some(file) = r.advance_event().unwrap() {
            let e = r.event().unwrap();
            for &(id, v) in e.scalars() {
                let tag = e.tags().name(id).unwrap().to_owned();
                events.push((file, tag, id, e.step, v));
            }
        }
        assert_eq!(events, want);
    }

    #[test]
    fn a_step_going_back_across_files_is_refused_naming_the_tag() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("1.tfevents"), dir.path().join("2.tfevents"));
        write(&a, &[(5, &[("x", 1.0)])]);
        write(&b, &[(4, &[("y", 1.0), ("x", 2.0)])]);
        let mut r = RunScalars::new(vec![a, b], OnCorruption::Error);
        assert_eq!(r.advance().unwrap(), Some(0));
        let e = r.advance().unwrap_err().to_string();
        assert!(
            e.contains("step 4 of tag 'y' does not continue the run"),
            "{e}"
        );
    }
}
