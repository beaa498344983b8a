//! [`RunScalars`]: a run's files streamed as one series of scalars, steps checked to continue
//! across files, and what the reader found damaged collected (`docs/contract/consumers.md`
//! "A run's event files", "What readers report").

use crate::error::Error;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use tally_tfevents::proto::event::What;
use tally_tfevents::{
    open_event_file, Damage, Interner, OnCorruption, ScalarEvent, ScalarReader, ScalarRef,
    WireScalars,
};

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
    pub fn next_scalar(&mut self) -> Result<Option<(usize, ScalarEvent)>, Error> {
        let Some(index) = self.advance()? else {
            return Ok(None);
        };
        Ok(self.current().map(|s| (index, s.to_scalar_event())))
    }

    /// Moves to the next scalar, which [`current`](Self::current) then borrows (no allocation
    /// per scalar): the index of its file, or `None` once every file is read. Its
    /// [`ScalarRef::tag_id`] numbers the run's tags across its files.
    #[inline]
    pub fn advance(&mut self) -> Result<Option<usize>, Error> {
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
    pub fn advance_event(&mut self) -> Result<Option<usize>, Error> {
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
                    return Err(Error::Refused(format!(
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
