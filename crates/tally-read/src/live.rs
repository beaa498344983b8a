//! One run's scalars held in memory per tag and read on as its files grow, for a viewer that
//! keeps answering while a run is written (`tally board`; `docs/contract/board.md` "Live
//! runs"): each refresh reads only the bytes appended since the last one, from where each file's
//! reading stopped, with purge markers and steps going back handled as for the whole run.

use crate::downsample::Series;
use crate::error::Error;
use crate::files::{dir_event_files, run_event_files};
use crate::scalars::{cut_steps, Resume, RunScalars};
use std::path::{Path, PathBuf};
use tally_tfevents::{Damage, Interner, OnCorruption};

/// A run's series, by tag, as read so far.
pub struct LiveRun {
    dir: PathBuf,
    /// Only the event files directly in `dir` are the run's (a listing's run, beside its
    /// `add_scalars` sub-runs, which the listing lists as runs of their own).
    own: bool,
    files: Vec<PathBuf>,
    resume: Resume,
    tags: Interner,
    /// By the reader's tag id.
    series: Vec<Series>,
    /// Damage found so far, but for a partial record at the end of the newest file.
    damage: Vec<Damage>,
    /// A partial record at the end of the newest file: a record being written, or a run that
    /// stopped mid-record. It is read again at the next refresh.
    tail: Option<Damage>,
    /// Whether the last refresh read to the end of the files (else it was stopped early, and
    /// the next one reads on from where it stopped).
    caught_up: bool,
}

/// Events read between two asks whether a read is still wanted (a few milliseconds of
/// reading).
const EVENTS_PER_ASK: u32 = 4096;

impl LiveRun {
    /// Reads the run in `dir` (its own event files, `files::run_event_files`).
    pub fn open(dir: &Path) -> Result<Self, Error> {
        let mut run = LiveRun::empty(dir, false);
        run.refresh()?;
        Ok(run)
    }

    /// Reads the event files directly in `dir` ([`dir_event_files`]): a run as the runs
    /// listing lists it (`columns::resolve_inputs`), where each directory below it holding
    /// event files (an `add_scalars` series) is a run of its own (`tally watch --curves`).
    pub fn open_own(dir: &Path) -> Result<Self, Error> {
        let mut run = LiveRun::empty(dir, true);
        run.refresh()?;
        Ok(run)
    }

    /// The run [`open_own`](Self::open_own) reads, nothing read yet: the first
    /// [`refresh`](Self::refresh) reads it whole, so a holder can show others it is being read
    /// before the read (the board reads a run once however many charts ask for it at once).
    pub fn unread_own(dir: &Path) -> Self {
        LiveRun::empty(dir, true)
    }

    fn empty(dir: &Path, own: bool) -> Self {
        LiveRun {
            dir: dir.to_owned(),
            own,
            files: Vec::new(),
            resume: Resume::default(),
            tags: Interner::new(),
            series: Vec::new(),
            damage: Vec::new(),
            tail: None,
            caught_up: false,
        }
    }

    /// Reads what the run's files gained since the last refresh: the number of new points. A
    /// file that vanished or a purge marker in a new file reads the run again from its start.
    pub fn refresh(&mut self) -> Result<u64, Error> {
        Ok(self.refresh_while(&|| true)?.unwrap_or(0))
    }

    /// [`refresh`](Self::refresh), asking `wanted` every few thousand events whether the read
    /// is still wanted: when not, the read stops between two events and `None` comes back; what
    /// was read is kept, and the next refresh reads on from there (`docs/contract/board.md`
    /// "Bounded reads").
    pub fn refresh_while(&mut self, wanted: &dyn Fn() -> bool) -> Result<Option<u64>, Error> {
        let files = if self.own {
            dir_event_files(&self.dir)?
        } else {
            run_event_files(&self.dir)?
        };
        if !files.starts_with(&self.files) || self.new_marker_cuts(&files) {
            *self = LiveRun::empty(&self.dir, self.own);
        }
        let before: usize = self.series.iter().map(Series::len).sum();
        let mut scalars = RunScalars::new(files.clone(), OnCorruption::Error)
            .resume(self.resume.clone())
            .with_tags(std::mem::take(&mut self.tags));
        let mut damage = Vec::new();
        let mut until_ask = EVENTS_PER_ASK;
        let mut stopped = false;
        while scalars.advance_event()?.is_some() {
            damage.extend(scalars.take_damage());
            let Some(event) = scalars.event() else {
                continue;
            };
            for &(id, value) in event.scalars() {
                if id >= self.series.len() {
                    self.series.resize_with(id + 1, Series::new);
                }
                self.series[id].push(event.step, event.wall_time, value);
            }
            until_ask -= 1;
            if until_ask == 0 {
                until_ask = EVENTS_PER_ASK;
                if !wanted() {
                    stopped = true;
                    break;
                }
            }
        }
        damage.extend(scalars.take_damage());
        self.resume = if stopped {
            scalars.paused_at()
        } else {
            scalars.read_so_far().clone()
        };
        self.tags = scalars.take_tags();
        self.files = files;
        self.caught_up = !stopped;
        self.tail = None;
        let newest = self.files.last();
        for d in damage {
            match &d {
                Damage::TruncatedTail { path, .. } if path.as_ref() == newest => {
                    self.tail = Some(d)
                }
                _ => self.damage.push(d),
            }
        }
        let after: usize = self.series.iter().map(Series::len).sum();
        Ok((!stopped).then_some((after - before) as u64))
    }

    /// Whether the last refresh read to the end of the files.
    pub fn caught_up(&self) -> bool {
        self.caught_up
    }

    /// Whether a file added since the last refresh starts with a purge marker dropping points
    /// already held: the run is then read again whole, as it reads from scratch.
    fn new_marker_cuts(&self, files: &[PathBuf]) -> bool {
        let held = self.files.len();
        if held == 0 || files.len() == held {
            return false;
        }
        let before = cut_steps(&self.files);
        let after = cut_steps(files);
        after[..held] != before[..]
    }

    /// The run's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Each tag and its series, in the order tags were first seen.
    pub fn tags(&self) -> impl Iterator<Item = (&str, &Series)> {
        self.series
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.is_empty())
            .filter_map(|(id, s)| Some((self.tags.name(id)?, s)))
    }

    /// The series of `tag`, if the run has it.
    pub fn series(&self, tag: &str) -> Option<&Series> {
        self.tags().find(|(t, _)| *t == tag).map(|(_, s)| s)
    }

    /// Points held, all tags together.
    pub fn points(&self) -> u64 {
        self.series.iter().map(|s| s.len() as u64).sum()
    }

    /// The bytes its held points take (`downsample::Series::bytes`).
    pub fn bytes(&self) -> usize {
        self.series.iter().map(Series::bytes).sum()
    }

    /// The damage found so far (a partial record at the end of the newest file aside).
    pub fn damage(&self) -> &[Damage] {
        &self.damage
    }

    /// The partial record at the end of the newest file, if there is one now.
    pub fn tail(&self) -> Option<&Damage> {
        self.tail.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use tally_tfevents::proto::encode_session_start;
    use tally_tfevents::{encode_scalar_event, RecordWriter};

    fn records(events: &[(i64, &[(&str, f64)])]) -> Vec<u8> {
        let mut w = RecordWriter::new(Vec::new());
        for &(step, scalars) in events {
            let mut buf = Vec::new();
            encode_scalar_event(step, 100.0 + step as f64, scalars, &mut buf);
            w.write_record(&buf).unwrap();
        }
        w.into_inner()
    }

    fn append(path: &Path, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        f.write_all(bytes).unwrap();
    }

    fn values(run: &LiveRun, tag: &str) -> Vec<(i64, f64)> {
        let s = run.series(tag).unwrap();
        (0..s.len())
            .map(|i| (s.point(i).step, s.point(i).value))
            .collect()
    }

    #[test]
    fn a_growing_file_is_read_on_from_where_it_stopped_a_partial_record_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("events.out.tfevents.1.host");
        append(&file, &records(&[(1, &[("loss", 1.0), ("r", 5.0)])]));
        let mut run = LiveRun::open(dir.path()).unwrap();
        assert_eq!(values(&run, "loss"), [(1, 1.0)]);

        // A record half written: nothing new, the tail noted and not counted as damage.
        let next = records(&[(2, &[("loss", 2.0)])]);
        append(&file, &next[..7]);
        assert_eq!(run.refresh().unwrap(), 0);
        assert!(run.tail().is_some());
        assert!(run.damage().is_empty());

        append(&file, &next[7..]);
        assert_eq!(run.refresh().unwrap(), 1);
        assert_eq!(run.tail(), None);
        assert_eq!(values(&run, "loss"), [(1, 1.0), (2, 2.0)]);
        let tags: Vec<&str> = run.tags().map(|(t, _)| t).collect();
        assert_eq!(tags, ["loss", "r"]);
        assert_eq!(run.points(), 3);
    }

    #[test]
    fn a_new_file_with_a_purge_marker_drops_what_it_rewinds() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("events.out.tfevents.1.host");
        append(
            &first,
            &records(&[(1, &[("x", 1.0)]), (2, &[("x", 2.0)]), (3, &[("x", 3.0)])]),
        );
        let mut run = LiveRun::open(dir.path()).unwrap();
        assert_eq!(run.points(), 3);

        // A resumed segment rewinding to step 2, as `tally::resume` writes it.
        let mut w = RecordWriter::new(Vec::new());
        w.write_record(&encode_session_start(2, 200.0)).unwrap();
        let mut second = w.into_inner();
        second.extend(records(&[(2, &[("x", 20.0)])]));
        append(&dir.path().join("events.out.tfevents.2.host"), &second);
        run.refresh().unwrap();
        assert_eq!(values(&run, "x"), [(1, 1.0), (2, 20.0)]);
    }

    #[test]
    fn open_own_reads_the_directorys_own_files_beside_its_sub_runs() {
        let dir = tempfile::tempdir().unwrap();
        append(
            &dir.path().join("events.out.tfevents.1.host"),
            &records(&[(1, &[("x", 1.0)])]),
        );
        let sub = dir.path().join("loss_train");
        std::fs::create_dir(&sub).unwrap();
        append(
            &sub.join("events.out.tfevents.1.host"),
            &records(&[(1, &[("loss", 2.0)])]),
        );
        assert!(LiveRun::open(dir.path()).is_err());
        let mut run = LiveRun::open_own(dir.path()).unwrap();
        assert_eq!(values(&run, "x"), [(1, 1.0)]);
        assert!(run.series("loss").is_none());
        append(
            &dir.path().join("events.out.tfevents.1.host"),
            &records(&[(2, &[("x", 2.0)])]),
        );
        assert_eq!(run.refresh().unwrap(), 1);
        assert_eq!(LiveRun::open_own(&sub).unwrap().points(), 1);
    }

    #[test]
    fn a_read_no_one_wants_stops_between_events_and_the_next_reads_on_to_the_same_series() {
        // docs/contract/board.md "Bounded reads".
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("events.out.tfevents.1.host");
        let events: Vec<(i64, Vec<(&str, f64)>)> = (0..20_000)
            .map(|s| (s, vec![("a", s as f64), ("b", -(s as f64))]))
            .collect();
        let refs: Vec<(i64, &[(&str, f64)])> = events.iter().map(|(s, v)| (*s, &v[..])).collect();
        append(&file, &records(&refs[..10_000]));
        // A second file, so the stop and the read on cross a file boundary too.
        append(
            &dir.path().join("events.out.tfevents.2.host"),
            &records(&refs[10_000..]),
        );
        let mut run = LiveRun::unread_own(dir.path());
        let asked = std::cell::Cell::new(0);
        let wanted = || {
            asked.set(asked.get() + 1);
            asked.get() < 2
        };
        assert_eq!(run.refresh_while(&wanted).unwrap(), None);
        assert!(!run.caught_up());
        // Stopped at the second ask: two asks' worth of events read, no more.
        let first = run.points();
        assert_eq!(first, 2 * 2 * u64::from(EVENTS_PER_ASK));
        assert_eq!(run.refresh_while(&|| true).unwrap(), Some(40_000 - first));
        assert!(run.caught_up());
        let whole = LiveRun::open_own(dir.path()).unwrap();
        for tag in ["a", "b"] {
            assert_eq!(values(&run, tag), values(&whole, tag));
        }
        assert!(run.damage().is_empty(), "{:?}", run.damage());
    }

    #[test]
    fn a_file_gone_reads_the_run_again() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("events.out.tfevents.1.host");
        let b = dir.path().join("events.out.tfevents.2.host");
        append(&a, &records(&[(1, &[("x", 1.0)])]));
        append(&b, &records(&[(2, &[("x", 2.0)])]));
        let mut run = LiveRun::open(dir.path()).unwrap();
        assert_eq!(run.points(), 2);
        std::fs::remove_file(&a).unwrap();
        run.refresh().unwrap();
        assert_eq!(values(&run, "x"), [(2, 2.0)]);
    }
}
