//! Rows out of a run's event files: one per step (two when a tag repeats at a step), read from
//! a position, tailing a live file.

use crate::sink::BackendStep;
use crate::tag::Tag;
use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;
use tally_tfevents::scalar::scalars_of;
use tally_tfevents::{Damage, EventReader, ReadError, TfRecordReader};

/// The tag whose value a tally event file carries as the learner iteration.
const ITERATION_TAG: &str = "Train/iteration";

/// A position in a run's event files: file index, byte offset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Pos {
    pub(crate) file: usize,
    pub(crate) offset: u64,
}

/// Reads a run's event files from a position as rows: one row per step, the consecutive
/// events of one step merged (a writer such as tensorboardX writes one event per tag), a new
/// row at the same step when an event repeats a tag of the row.
pub(crate) struct RowReader {
    files: Vec<PathBuf>,
    at: Pos,
    reader: Option<EventReader<BufReader<File>>>,
    /// The row being assembled and the position just past its last event.
    group: Option<(BackendStep, Pos)>,
    /// Truncated tails found at the end of finished files.
    pub(crate) damage: Vec<Damage>,
    /// A sub-run's path: its tags are named `<prefix>/<tag>` (docs/contract/remote-sinks.md
    /// "Sub-runs"); empty for the run's own files.
    prefix: String,
}

impl RowReader {
    pub(crate) fn new(files: Vec<PathBuf>, at: Pos) -> Self {
        RowReader {
            files,
            at,
            reader: None,
            group: None,
            damage: Vec::new(),
            prefix: String::new(),
        }
    }

    /// Name each tag `<prefix>/<tag>` (a sub-run's rows).
    pub(crate) fn with_prefix(mut self, prefix: &str) -> Self {
        self.prefix = prefix.to_owned();
        self
    }

    fn open(&mut self) -> std::result::Result<(), ReadError> {
        if self.reader.is_some() {
            return Ok(());
        }
        let path = &self.files[self.at.file];
        let open = |source| ReadError::Open {
            path: path.clone(),
            source,
        };
        let mut f = tally_tfevents::open::open_regular(path).map_err(open)?;
        f.seek(SeekFrom::Start(self.at.offset)).map_err(open)?;
        let records = TfRecordReader::new(BufReader::new(f)).with_path(path);
        self.reader = Some(EventReader::from_records(records));
        Ok(())
    }

    /// The next complete row, or `None` when none is complete yet. `finished`: the files will
    /// not grow, so the last step read is a whole row.
    pub(crate) fn next(
        &mut self,
        finished: bool,
    ) -> std::result::Result<Option<(BackendStep, Pos)>, ReadError> {
        while self.at.file < self.files.len() {
            self.open()?;
            let Some(reader) = self.reader.as_mut() else {
                break;
            };
            // `at.offset` is where this file's reader opened; its positions count from there.
            let start = self.at.offset;
            let event = reader.read_event().map_err(|e| absolute(e, start))?;
            let end = Pos {
                file: self.at.file,
                offset: start + reader.records().position(),
            };
            let Some(event) = event else {
                let last = self.at.file + 1 == self.files.len();
                if last && !finished {
                    return Ok(None);
                }
                if let Some(row) = self.group.take() {
                    return Ok(Some(row));
                }
                if let Some(mut d) = reader.truncated_tail() {
                    if let Damage::TruncatedTail { offset, .. } = &mut d {
                        *offset += start;
                    }
                    self.damage.push(d);
                }
                if last {
                    return Ok(None);
                }
                self.at = Pos {
                    file: self.at.file + 1,
                    offset: 0,
                };
                self.reader = None;
                continue;
            };
            let prefix = &self.prefix;
            let scalars: Vec<(Tag, f64)> = scalars_of(&event)
                .map(|s| {
                    let name: Arc<str> = if prefix.is_empty() {
                        Arc::from(s.tag.as_str())
                    } else {
                        Arc::from(format!("{prefix}/{}", s.tag))
                    };
                    (Tag::Free(name), s.value)
                })
                .collect();
            if scalars.is_empty() {
                continue;
            }
            let iteration = scalars
                .iter()
                .find(|(t, _)| t.as_str() == ITERATION_TAG)
                .map_or(0, |(_, v)| *v as u64);
            if let Some((row, row_end)) = &mut self.group {
                // A tag already in the row (two episodes ending at one step) starts a row of
                // its own at the same step: a row holds one value per tag, and none is dropped.
                if row.step == event.step && !repeats(&row.scalars, &scalars) {
                    row.scalars.extend(scalars);
                    row.iteration = row.iteration.max(iteration);
                    *row_end = end;
                    continue;
                }
            }
            let row = BackendStep {
                iteration,
                step: event.step,
                wall_time: event.wall_time,
                scalars,
            };
            if let Some(done) = self.group.replace((row, end)) {
                return Ok(Some(done));
            }
        }
        Ok(None)
    }
}

/// Whether one of `new`'s tags is already in `row`. Rows merged from one-scalar events hold a
/// step's tags (tens); a linear scan of them is cheaper than hashing for that.
fn repeats(row: &[(Tag, f64)], new: &[(Tag, f64)]) -> bool {
    new.iter()
        .any(|(t, _)| row.iter().any(|(r, _)| r.as_str() == t.as_str()))
}

/// `e` with its byte offset counted from the file's start, not from where the reader opened.
fn absolute(mut e: ReadError, base: u64) -> ReadError {
    if let ReadError::Io { offset, .. } | ReadError::Corrupt { offset, .. } = &mut e {
        *offset += base;
    }
    e
}
