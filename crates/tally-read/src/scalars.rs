//! [`RunScalars`]: a run's files streamed as one series of scalars, read as TensorBoard reads
//! them: purge markers applied, steps that go back across files kept and reported, and what the
//! reader found damaged collected (`docs/contract/consumers.md` "A run's event files", "What
//! readers report").

use crate::error::Error;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use tally_tfevents::proto::event::What;
use tally_tfevents::proto::SessionLog;
use tally_tfevents::{
    open_event_file, open_event_file_at, Damage, Interner, OnCorruption, ReadError, ScalarEvent,
    ScalarReader, ScalarRef, WireScalars,
};

/// Events a purge marker is looked for among at the head of a file: writers put it right after
/// the `file_version` event (torch's and tensorboardX's `purge_step`, tally's resume).
const MARKER_SEARCH_EVENTS: usize = 8;

/// A purge marker: TensorBoard's `SessionLog.START` event.
#[derive(Debug, Clone, Copy)]
struct Marker {
    step: i64,
    /// Offset of its record.
    offset: u64,
}

/// The purge marker at the head of `file`, if any (a file that cannot be read has none here:
/// reading it reports why).
fn purge_marker(file: &Path) -> Option<Marker> {
    let mut reader = open_event_file(file)
        .ok()?
        .with_on_corruption(OnCorruption::Skip);
    for _ in 0..MARKER_SEARCH_EVENTS {
        let offset = reader.records().position();
        let event = reader.read_event().ok()??;
        match &event.what {
            Some(What::SessionLog(log)) if log.status == SessionLog::START => {
                return Some(Marker {
                    step: event.step,
                    offset,
                });
            }
            Some(What::Summary(_)) => return None,
            _ => {}
        }
    }
    None
}

/// Where a later file's marker cuts a file: its points at `step` or later are dropped.
#[derive(Debug, Clone, Copy)]
struct Cut {
    step: i64,
    /// The file holding the marker, and the marker's offset.
    marker_file: usize,
    marker_offset: u64,
}

/// For each file, the cut of the lowest marker among the files after it (TensorBoard drops,
/// at each marker, every point read before it at the marker's step or later).
fn cuts(files: &[PathBuf]) -> Vec<Option<Cut>> {
    let mut out = vec![None; files.len()];
    let mut lowest: Option<Cut> = None;
    for i in (0..files.len()).rev() {
        out[i] = lowest;
        if let Some(m) = purge_marker(&files[i]) {
            if lowest.is_none_or(|c| m.step <= c.step) {
                lowest = Some(Cut {
                    step: m.step,
                    marker_file: i,
                    marker_offset: m.offset,
                });
            }
        }
    }
    out
}

/// For each of `files` (one run, in run order), the step from which a later file's purge marker
/// drops its points, if one does.
pub(crate) fn cut_steps(files: &[PathBuf]) -> Vec<Option<i64>> {
    cuts(files).iter().map(|c| c.map(|c| c.step)).collect()
}

/// Where an earlier read of a run's files stopped, to read on from there: per file, the byte
/// its reading stopped at (a record boundary) and the largest step it kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resume {
    /// Per file in run order; a file past the end of the list is read from its start.
    pub offsets: Vec<u64>,
    /// Per file in run order, the largest step kept from it so far.
    pub max_steps: Vec<Option<i64>>,
}

/// Points of the current file whose step does not pass the earlier files' largest.
#[derive(Debug, Clone, Copy)]
struct Back {
    offset: u64,
    first_step: i64,
    points: u64,
    reached: i64,
    reached_in: usize,
}

/// Streams the scalars of one run's files (in the order given) as one series, as TensorBoard
/// reads them:
///
/// - a file whose head holds a purge marker at step s drops the earlier files' points at step
///   s or later (reported as [`Damage::Purged`]);
/// - a point whose step does not pass every step of the earlier files is kept and reported
///   ([`Damage::StepsBack`]), or, with [`strict`](Self::strict), is an error naming both files.
///   Within a file steps are not checked (TensorBoard draws them as written).
///
/// Truncated tails and, under [`OnCorruption::Skip`], skipped records are kept for
/// [`RunScalars::take_damage`]; a corrupt record under [`OnCorruption::Error`] is the error,
/// naming file and byte offset.
pub struct RunScalars {
    files: Vec<PathBuf>,
    policy: OnCorruption,
    strict: bool,
    /// A file whose framing is lost ends at it, reported as damage ([`Self::readable_part`]).
    readable_part: bool,
    /// Index of the next file to open.
    next: usize,
    current: Option<ScalarReader<BufReader<File>>>,
    /// The tag numbering, between files (the open reader holds it while it reads).
    tags: Interner,
    /// Each file's cut, found when the first file is opened.
    cuts: Vec<Option<Cut>>,
    /// Largest kept step of the files before the current one, and the file that holds it.
    before: Option<(i64, usize)>,
    /// Largest kept step of the current file so far.
    current_max: Option<i64>,
    /// The current file's points that go back, and those a later marker dropped.
    back: Option<Back>,
    dropped: u64,
    damage: Vec<Damage>,
    /// Where each file's reading starts and what it had kept before ([`RunScalars::resume`]).
    resume: Resume,
    /// Each file read to its end so far: where the reading stopped, and its largest kept step.
    read: Resume,
}

impl RunScalars {
    /// Reads `files` (one run, in run order) with `policy`.
    pub fn new(files: Vec<PathBuf>, policy: OnCorruption) -> Self {
        RunScalars {
            files,
            policy,
            strict: false,
            readable_part: false,
            next: 0,
            current: None,
            tags: Interner::new(),
            cuts: Vec::new(),
            before: None,
            current_max: None,
            back: None,
            dropped: 0,
            damage: Vec::new(),
            resume: Resume::default(),
            read: Resume::default(),
        }
    }

    /// Reads on from where an earlier read of the same files stopped (an incremental export):
    /// each file from its offset, its steps and the earlier files' taken as already kept, so
    /// purge markers and steps going back apply as they would to the whole run.
    pub fn resume(mut self, from: Resume) -> Self {
        self.resume = from;
        self
    }

    /// The files read to their end so far ([`RunScalars::resume`] reads on from it).
    pub fn read_so_far(&self) -> &Resume {
        &self.read
    }

    /// Where the reading stands between two events: the files read to their end, then the
    /// current file's position and largest kept step, so [`RunScalars::resume`] reads on from
    /// the next event (a reader that stops early, a board's read no one waits for any more).
    pub fn paused_at(&self) -> Resume {
        let mut at = self.read.clone();
        if let Some(reader) = &self.current {
            at.offsets.push(reader.events().records().position());
            at.max_steps.push(self.current_max);
        }
        at
    }

    /// Refuses a step that goes back across files instead of keeping it (the reader's
    /// `strict` option).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Reads what precedes a corrupt record whose framing is lost (a bad length checksum or an
    /// absurd length: nothing says where the next record starts) and goes on with the next
    /// file, the damage reported as [`Damage::Skipped`] at the record's offset, instead of
    /// failing the run: a viewer shows the readable part of a damaged run, as TensorBoard does
    /// (`docs/contract/board.md` "The runs table"). With [`OnCorruption::Skip`] a record whose
    /// framing is intact is skipped and the file read on.
    pub fn readable_part(mut self, readable_part: bool) -> Self {
        self.readable_part = readable_part;
        self
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

    /// Moves to the next event holding scalars that is kept (passing over the rest of the
    /// current one), whose scalars [`event`](Self::event) then borrows: the index of its file,
    /// or `None` once every file is read. The tag ids of [`WireScalars::scalars`] are the
    /// run's, as in [`advance`](Self::advance).
    pub fn advance_event(&mut self) -> Result<Option<usize>, Error> {
        loop {
            let Some(reader) = self.current.as_mut() else {
                let Some(file) = self.files.get(self.next) else {
                    return Ok(None);
                };
                if self.next == 0 && self.files.len() > 1 {
                    self.cuts = cuts(&self.files);
                }
                let offset = self.resume.offsets.get(self.next).copied().unwrap_or(0);
                let reader = match offset {
                    0 => open_event_file(file)?,
                    at => open_event_file_at(file, at)?,
                };
                self.current = Some(
                    reader
                        .with_on_corruption(self.policy)
                        .into_scalars_with_tags(std::mem::take(&mut self.tags)),
                );
                self.current_max = self.resume.max_steps.get(self.next).copied().flatten();
                self.next += 1;
                continue;
            };
            let index = self.next - 1;
            let more = match reader.advance_event() {
                Ok(more) => more,
                Err(ReadError::Corrupt { offset, kind, .. }) if self.readable_part => {
                    // The file ends here: the next read of it stops here again.
                    self.damage.extend(reader.take_skipped());
                    self.damage.push(Damage::Skipped {
                        path: Some(self.files[index].clone()),
                        offset,
                        kind,
                    });
                    self.read.offsets.push(offset);
                    self.read.max_steps.push(self.current_max);
                    self.tags = reader.take_tags();
                    self.current = None;
                    self.end_of_file(index);
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            // Skipped records only exist under Skip: nothing to collect otherwise.
            if reader.skipped_records() > 0 {
                self.damage.extend(reader.take_skipped());
            }
            if !more {
                let tail = reader.truncated_tail();
                self.read.offsets.push(reader.events().records().position());
                self.read.max_steps.push(self.current_max);
                self.tags = reader.take_tags();
                self.current = None;
                self.end_of_file(index);
                self.damage.extend(tail);
                continue;
            }
            let event = reader.event();
            let (step, points) = (event.step, event.len() as u64);
            if let Some(cut) = self.cuts.get(index).copied().flatten() {
                if step >= cut.step {
                    self.dropped += points;
                    continue;
                }
            }
            if let Some((max, file)) = self.before {
                if step <= max {
                    let records = reader.events().records();
                    let offset = records.position() - 16 - records.last_record().len() as u64;
                    if self.strict {
                        let tag = reader.current().map_or("", |s| s.tag).to_owned();
                        return Err(self.refusal(index, file, step, &tag, max));
                    }
                    let back = self.back.get_or_insert(Back {
                        offset,
                        first_step: step,
                        points: 0,
                        reached: max,
                        reached_in: file,
                    });
                    back.points += points;
                }
            }
            self.current_max = Some(self.current_max.map_or(step, |m| m.max(step)));
            return Ok(Some(index));
        }
    }

    /// What the file just read ended with: its largest kept step joins the earlier files',
    /// and what went back or was purged is reported.
    fn end_of_file(&mut self, index: usize) {
        if let Some(max) = self.current_max.take() {
            self.before = Some(match self.before {
                Some((b, f)) if b >= max => (b, f),
                _ => (max, index),
            });
        }
        if let Some(b) = self.back.take() {
            self.damage.push(Damage::StepsBack {
                path: Some(self.files[index].clone()),
                offset: b.offset,
                first_step: b.first_step,
                points: b.points,
                reached: b.reached,
                reached_in: self.files[b.reached_in].clone(),
            });
        }
        let dropped = std::mem::take(&mut self.dropped);
        if let Some(cut) = self
            .cuts
            .get(index)
            .copied()
            .flatten()
            .filter(|_| dropped > 0)
        {
            self.damage.push(Damage::Purged {
                path: Some(self.files[cut.marker_file].clone()),
                offset: cut.marker_offset,
                from_step: cut.step,
                points: dropped,
                earlier: self.files[index].clone(),
            });
        }
    }

    /// The strict reader's error for a step that goes back.
    fn refusal(&self, index: usize, file: usize, step: i64, tag: &str, max: i64) -> Error {
        Error::Refused(format!(
            "{}: step {step} of tag '{tag}' does not continue the run: {} already reached step {max}, \
             and no purge marker drops those points; a strict read refuses a run whose steps go \
             back across files (read without strict to keep both, as TensorBoard draws them)",
            self.files[index].display(),
            self.files[file].display(),
        ))
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

    fn marker_then(path: &Path, at: i64, events: &[(i64, &[(&str, f64)])]) {
        use prost::Message;
        use tally_tfevents::proto::{event, session_start_event, Event};
        let mut w = RecordWriter::new(Vec::new());
        let version = Event {
            wall_time: 0.5,
            what: Some(event::What::FileVersion("brain.Event:2".into())),
            ..Default::default()
        };
        w.write_record(&version.encode_to_vec()).unwrap();
        w.write_record(&session_start_event(at, 0.5).encode_to_vec())
            .unwrap();
        for &(step, scalars) in events {
            let mut buf = Vec::new();
            encode_scalar_event(step, 0.5, scalars, &mut buf);
            w.write_record(&buf).unwrap();
        }
        std::fs::write(path, w.into_inner()).unwrap();
    }

    fn steps(r: &mut RunScalars) -> Vec<(usize, String, i64)> {
        let mut out = Vec::new();
        while let Some(file) = r.advance().unwrap() {
            let s = r.current().unwrap();
            out.push((file, s.tag.to_owned(), s.step));
        }
        out
    }

    #[test]
    fn a_step_going_back_across_files_is_kept_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("1.tfevents"), dir.path().join("2.tfevents"));
        write(&a, &[(5, &[("x", 1.0)])]);
        write(
            &b,
            &[
                (4, &[("y", 1.0), ("x", 2.0)]),
                (5, &[("x", 3.0)]),
                (6, &[("x", 4.0)]),
            ],
        );
        let mut r = RunScalars::new(vec![a.clone(), b.clone()], OnCorruption::Error);
        let got = steps(&mut r);
        let want = [
            (0, "x", 5),
            (1, "y", 4),
            (1, "x", 4),
            (1, "x", 5),
            (1, "x", 6),
        ];
        let want: Vec<_> = want.iter().map(|&(f, t, s)| (f, t.to_owned(), s)).collect();
        assert_eq!(got, want);
        let damage = r.take_damage();
        assert_eq!(
            damage,
            vec![Damage::StepsBack {
                path: Some(b.clone()),
                offset: 0,
                first_step: 4,
                points: 3,
                reached: 5,
                reached_in: a.clone(),
            }]
        );
        let text = damage[0].to_string();
        assert!(
            text.contains("3 points from step 4 on do not pass step 5"),
            "{text}"
        );
    }

    #[test]
    fn a_strict_read_refuses_a_step_going_back_naming_the_tag_and_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("1.tfevents"), dir.path().join("2.tfevents"));
        write(&a, &[(5, &[("x", 1.0)])]);
        write(&b, &[(4, &[("y", 1.0), ("x", 2.0)])]);
        let mut r = RunScalars::new(vec![a, b], OnCorruption::Error).strict(true);
        assert_eq!(r.advance().unwrap(), Some(0));
        let e = r.advance().unwrap_err().to_string();
        assert!(
            e.contains("step 4 of tag 'y' does not continue the run"),
            "{e}"
        );
        assert!(e.contains("1.tfevents already reached step 5"), "{e}");
    }

    #[test]
    fn a_purge_marker_drops_the_earlier_files_points_from_its_step_on() {
        let dir = tempfile::tempdir().unwrap();
        let [a, b, c] = ["1", "2", "3"].map(|n| dir.path().join(format!("{n}.tfevents")));
        write(
            &a,
            &[
                (1, &[("x", 1.0)]),
                (2, &[("x", 2.0)]),
                (3, &[("x", 3.0), ("y", 0.0)]),
                (4, &[("x", 4.0)]),
            ],
        );
        // A resume from step 2: the marker at 3 drops a's steps 3 and 4 (three points).
        marker_then(
            &b,
            3,
            &[
                (3, &[("x", 30.0)]),
                (4, &[("x", 40.0)]),
                (5, &[("x", 50.0)]),
            ],
        );
        // A second rewind, to step 3: b's 4 and 5 go; a is cut at 3 already.
        marker_then(&c, 4, &[(4, &[("x", 400.0)])]);
        let mut r = RunScalars::new(vec![a.clone(), b.clone(), c.clone()], OnCorruption::Error);
        let got: Vec<_> = steps(&mut r).into_iter().map(|(_, t, s)| (t, s)).collect();
        let want: Vec<_> = [("x", 1), ("x", 2), ("x", 3), ("x", 4)]
            .iter()
            .map(|&(t, s)| (t.to_owned(), s))
            .collect();
        assert_eq!(got, want);
        let damage = r.take_damage();
        let purged: Vec<_> = damage
            .iter()
            .map(|d| match d {
                Damage::Purged {
                    path,
                    from_step,
                    points,
                    earlier,
                    offset,
                } => {
                    assert!(*offset > 0, "the marker follows the file_version record");
                    (path.clone().unwrap(), *from_step, *points, earlier.clone())
                }
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(
            purged,
            vec![(b.clone(), 3, 3, a.clone()), (c.clone(), 4, 2, b.clone())]
        );
        // Values: the resumed segment's, not the purged ones.
        let mut r = RunScalars::new(vec![a, b, c], OnCorruption::Error);
        let mut values = Vec::new();
        while r.advance().unwrap().is_some() {
            values.push(r.current().unwrap().value);
        }
        assert_eq!(values, [1.0, 2.0, 30.0, 400.0]);
    }
}
