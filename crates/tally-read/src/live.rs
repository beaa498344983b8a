//! One run's scalars held in memory per tag and read on as its files grow, for a viewer that
//! keeps answering while a run is written (`tally board`; `docs/contract/board.md` "Live
//! runs"): each refresh reads only the bytes appended since the last one, from where each file's
//! reading stopped, with purge markers and steps going back handled as for the whole run. Past
//! a budget of bytes, a run lets go of its points and holds per-block summaries, reading a
//! block's points back from the files when a chart needs them ("Bounded reads").

mod reread;
mod smoothed;

use crate::downsample::blocks::{At, Block, HeldSeries};
use crate::downsample::{Axis, Downsampled, Point, Series};
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
    series: Vec<HeldSeries>,
    /// Past this many bytes held, every series lets go of its points ([`HeldSeries`]).
    points_up_to: usize,
    points_let_go: bool,
    /// Each file's purge-marker cut, as its points were read (a block read back drops the same).
    cuts: Vec<Option<i64>>,
    /// The file last read from and the end of its last event read: the next event's record
    /// starts there ([`At`]).
    read_to: Option<(usize, u64)>,
    /// The blocks read back last.
    recent: reread::Recent,
    /// The smoothing's states kept per series and weight (`smoothed`).
    smoothing: smoothed::Kept,
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
            points_up_to: usize::MAX,
            points_let_go: false,
            cuts: Vec::new(),
            read_to: None,
            recent: reread::Recent::default(),
            smoothing: smoothed::Kept::default(),
            damage: Vec::new(),
            tail: None,
            caught_up: false,
        }
    }

    /// Lets go of the points once more than `bytes` are held (now, and when it grows past
    /// them): its series are then held as per-block summaries, O(points / `BLOCK`) bytes, and
    /// charts read the blocks they need back from the files (`docs/contract/board.md` "Bounded
    /// reads"). By default every point is held.
    pub fn hold_points_up_to(&mut self, bytes: usize) {
        self.points_up_to = bytes;
        self.let_go_past_budget();
    }

    fn let_go_past_budget(&mut self) {
        if !self.points_let_go && self.bytes() > self.points_up_to {
            self.points_let_go = true;
            self.series
                .iter_mut()
                .for_each(HeldSeries::let_go_of_points);
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
            let points_up_to = self.points_up_to;
            *self = LiveRun::empty(&self.dir, self.own);
            self.points_up_to = points_up_to;
        }
        if files != self.files {
            self.cuts = cut_steps(&files);
        }
        // Where each file's reading starts: a file's first event's record starts there.
        let starts = self.resume.offsets.clone();
        let before = self.points();
        // A damaged run shows what it can, the damage named (docs/contract/board.md "The runs
        // table").
        let mut scalars = RunScalars::new(files.clone(), OnCorruption::Skip)
            .readable_part(true)
            .resume(self.resume.clone())
            .with_tags(std::mem::take(&mut self.tags));
        let mut damage = Vec::new();
        let mut until_ask = EVENTS_PER_ASK;
        let mut stopped = false;
        while let Some(file) = scalars.advance_event()? {
            damage.extend(scalars.take_damage());
            let Some(event) = scalars.event() else {
                continue;
            };
            let hi = scalars.position();
            let lo = match self.read_to {
                Some((f, end)) if f == file => end,
                _ => starts.get(file).copied().unwrap_or(0),
            };
            self.read_to = Some((file, hi));
            let at = At { file, lo, hi };
            for &(id, value) in event.scalars() {
                if id >= self.series.len() {
                    let let_go = self.points_let_go;
                    self.series.resize_with(id + 1, || {
                        let mut s = HeldSeries::new();
                        if let_go {
                            s.let_go_of_points();
                        }
                        s
                    });
                }
                let (step, wall_time) = (event.step, event.wall_time);
                let p = Point {
                    step,
                    wall_time,
                    value,
                };
                self.series[id].push(p, at);
            }
            until_ask -= 1;
            if until_ask == 0 {
                until_ask = EVENTS_PER_ASK;
                self.let_go_past_budget();
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
                // A file whose framing is lost stops at the same record at every refresh.
                _ if self.damage.contains(&d) => {}
                _ => self.damage.push(d),
            }
        }
        self.let_go_past_budget();
        Ok((!stopped).then_some(self.points() - before))
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

    /// Each tag and its series, in the order tags were first seen, while its points are held
    /// (always, but past [`hold_points_up_to`](Self::hold_points_up_to)).
    pub fn tags(&self) -> impl Iterator<Item = (&str, &Series)> {
        self.series
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.is_empty())
            .filter_map(|(id, s)| Some((self.tags.name(id)?, s.exact()?)))
    }

    /// The series of `tag`, if the run has it and holds its points.
    pub fn series(&self, tag: &str) -> Option<&Series> {
        self.tags().find(|(t, _)| *t == tag).map(|(_, s)| s)
    }

    /// The series of `tag` as a chart asks for it, its points held or not; `None` when the run
    /// has no such tag.
    pub fn chart(&self, tag: &str) -> Option<Chart<'_>> {
        let id = (0..self.series.len())
            .find(|&id| !self.series[id].is_empty() && self.tags.name(id) == Some(tag))?;
        Some(Chart { run: self, id })
    }

    /// Each point of the tags in `tags`, read again from the run's files (purge markers applied
    /// as when first read), in reading order, told to `each` with its tag's index in `tags`:
    /// for a figure over a whole series whose points are let go, in memory bounded by the
    /// caller's (`docs/contract/board.md` "Bounded reads").
    pub fn read_again(
        &self,
        tags: &[&str],
        mut each: impl FnMut(usize, Point),
    ) -> Result<(), Error> {
        // The run's numbering, so each asked tag's id is known before the read.
        let mut numbering = self.tags.clone();
        let ids: Vec<usize> = tags.iter().map(|t| numbering.id(t)).collect();
        let mut scalars = RunScalars::new(self.files.clone(), OnCorruption::Skip)
            .readable_part(true)
            .with_tags(numbering);
        while scalars.advance_event()?.is_some() {
            let Some(event) = scalars.event() else {
                continue;
            };
            for &(id, value) in event.scalars() {
                if let Some(i) = ids.iter().position(|&x| x == id) {
                    let (step, wall_time) = (event.step, event.wall_time);
                    each(
                        i,
                        Point {
                            step,
                            wall_time,
                            value,
                        },
                    );
                }
            }
        }
        Ok(())
    }

    /// Whether its series let go of their points ([`hold_points_up_to`](Self::hold_points_up_to)).
    pub fn points_let_go(&self) -> bool {
        self.points_let_go
    }

    /// Points read, all tags together (held or not).
    pub fn points(&self) -> u64 {
        self.series.iter().map(|s| s.len() as u64).sum()
    }

    /// The bytes its series hold: their points, or their blocks' summaries ([`HeldSeries`])
    /// and the points read back last (`reread::RECENT_BYTES` at most).
    pub fn bytes(&self) -> usize {
        self.series.iter().map(HeldSeries::bytes).sum::<usize>()
            + self.recent.bytes()
            + self.smoothing.bytes()
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

/// One tag's series of a [`LiveRun`] as a chart asks for it: bucketed, or its nearest point,
/// from its points or from its blocks, read back from the run's files where needed.
pub struct Chart<'a> {
    run: &'a LiveRun,
    id: usize,
}

impl Chart<'_> {
    fn held(&self) -> &HeldSeries {
        &self.run.series[self.id]
    }

    fn reread(&self) -> impl Fn(&Block) -> Result<Vec<Point>, Error> + Sync + '_ {
        let run = self.run;
        move |b: &Block| {
            run.recent
                .points(&run.files, &run.cuts, &run.tags, self.id, b)
        }
    }

    /// The smallest and largest step.
    pub fn step_range(&self) -> Option<(i64, i64)> {
        self.held().step_range()
    }

    /// Points in the series.
    pub fn len(&self) -> usize {
        self.held().len()
    }

    /// Whether it has no point (never: a chart is of a tag with points).
    pub fn is_empty(&self) -> bool {
        self.held().is_empty()
    }

    /// [`Series::downsample`] (bucket edges at block edges where the blocks across them are
    /// too many to read back: `docs/contract/board.md` "Bounded reads").
    pub fn downsample(
        &self,
        axis: Axis,
        start: Option<f64>,
        end: Option<f64>,
        width: usize,
    ) -> Result<Downsampled, Error> {
        self.held()
            .downsample(axis, start, end, width, &self.reread())
    }

    /// [`Series::downsample_from`], as [`downsample`](Self::downsample).
    pub fn downsample_from(
        &self,
        axis: Axis,
        start: f64,
        end: Option<f64>,
        bucket: f64,
        max_width: usize,
    ) -> Result<Option<Downsampled>, Error> {
        self.held()
            .downsample_from(axis, start, end, bucket, max_width, &self.reread())
    }

    /// [`Series::smoothed`]: TensorBoard's smoothed value at each bucket's `last` point, over
    /// every point of the series. A series whose points are let go keeps the average's state
    /// after each block, per weight (one read of the run the first time), and reads back the
    /// blocks its buckets end inside.
    pub fn smoothed(&self, axis: Axis, d: &Downsampled, weight: f64) -> Result<Vec<f64>, Error> {
        if let Some(series) = self.held().exact() {
            let at = series.last_indices(axis, d);
            let smoothing = &self.run.smoothing;
            return Ok(smoothing.held_smoothed(self.id, series, weight, &at));
        }
        let lasts: Vec<Point> = d.buckets.iter().map(|b| b.last).collect();
        self.let_go_smoothed(&lasts, weight)
    }

    /// TensorBoard's smoothed value at the raw point `p` of the series (`/api/nearest`'s
    /// point), `None` when the series has no such point.
    pub fn smoothed_at(&self, axis: Axis, p: &Point, weight: f64) -> Result<Option<f64>, Error> {
        if let Some(series) = self.held().exact() {
            let smoothing = &self.run.smoothing;
            return Ok(series
                .index_of(axis, p)
                .map(|i| smoothing.held_smoothed(self.id, series, weight, &[i])[0]));
        }
        let s = self.let_go_smoothed(std::slice::from_ref(p), weight)?[0];
        // A point not found is NaN; a NaN point's own value is NaN too.
        Ok((!s.is_nan() || p.value.is_nan()).then_some(s))
    }

    fn let_go_smoothed(&self, points: &[Point], weight: f64) -> Result<Vec<f64>, Error> {
        let tag = self.run.tags.name(self.id).unwrap_or_default();
        let read_all = |each: &mut dyn FnMut(Point)| self.run.read_again(&[tag], |_, p| each(p));
        self.run.smoothing.smoothed(
            self.id,
            self.held(),
            weight,
            points,
            &read_all,
            &self.reread(),
        )
    }

    /// [`Series::nearest`]: a raw point, read back if its points are let go.
    pub fn nearest(&self, axis: Axis, x: f64) -> Result<Option<Point>, Error> {
        self.held().nearest(axis, x, &self.reread())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::downsample::blocks::BLOCK;
    use std::io::Write;

    const BLOCK_BYTES: usize = std::mem::size_of::<Block>();
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

    /// `records` of events built at run time.
    fn records_of(events: &[(i64, Vec<(&str, f64)>)]) -> Vec<u8> {
        let refs: Vec<(i64, &[(&str, f64)])> = events.iter().map(|(s, v)| (*s, &v[..])).collect();
        records(&refs)
    }

    /// A resumed segment's first record, rewinding to `step`, as `tally::resume` writes it.
    fn resumed_at(step: i64) -> Vec<u8> {
        let mut w = RecordWriter::new(Vec::new());
        w.write_record(&encode_session_start(step, 200.0)).unwrap();
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
        let mut second = resumed_at(2);
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
        append(&file, &records_of(&events[..10_000]));
        // A second file, so the stop and the read on cross a file boundary too.
        append(
            &dir.path().join("events.out.tfevents.2.host"),
            &records_of(&events[10_000..]),
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

    /// Every chart answer of `run`'s `tag` as the run read with every point held gives it.
    fn charts_as_exact(run: &LiveRun, tag: &str) {
        let whole = LiveRun::open_own(&run.dir).unwrap();
        let want = whole.series(tag).unwrap();
        let got = run.chart(tag).unwrap();
        assert_eq!(got.len(), want.len());
        let (lo, hi) = (
            want.point(0).step as f64,
            want.point(want.len() - 1).step as f64,
        );
        let mid = (lo + hi) / 2.0;
        for axis in [Axis::Step, Axis::WallTime] {
            let shift = if axis == Axis::Step { 0.0 } else { 100.0 };
            for window in [
                (None, None),
                (Some(mid + shift), Some(mid + 40.0 + shift)),
                (Some(lo + 777.5 + shift), None),
            ] {
                for width in [1, 9, 1000] {
                    let a = got.downsample(axis, window.0, window.1, width).unwrap();
                    let b = want.downsample(axis, window.0, window.1, width);
                    assert_eq!(
                        format!("{a:?}"),
                        format!("{b:?}"),
                        "{axis:?} {window:?} {width}"
                    );
                    if width == 9 {
                        // The smoothed values too, the let-go series read again for them.
                        let smoothed = got.smoothed(axis, &a, 0.9).unwrap();
                        assert_eq!(
                            format!("{smoothed:?}"),
                            format!("{:?}", want.smoothed(axis, &b, 0.9))
                        );
                    }
                }
            }
            let a = got.downsample_from(axis, mid + shift, None, 17.0, 16_384);
            let b = want.downsample_from(axis, mid + shift, None, 17.0, 16_384);
            assert_eq!(format!("{:?}", a.unwrap()), format!("{b:?}"));
            for at in [lo - 5.0, mid + 0.4, hi + 3.0] {
                let a = got.nearest(axis, at + shift).unwrap();
                let b = want.nearest(axis, at + shift);
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{axis:?} {at}");
                let p = b.unwrap();
                let i = want.index_of(axis, &p).unwrap();
                assert_eq!(
                    format!("{:?}", got.smoothed_at(axis, &p, 0.9).unwrap()),
                    format!("{:?}", Some(want.smoothed_at(&[i], 0.9)[0]))
                );
            }
        }
    }

    #[test]
    fn a_run_past_its_budget_holds_blocks_and_charts_them_as_from_every_point() {
        // docs/contract/board.md "Bounded reads": two files, the second rewinding to step 9 000
        // (so the first's points from 9 000 on are dropped when read, and when read back), a
        // spike and a NaN inside blocks, and growth after the points were let go.
        let dir = tempfile::tempdir().unwrap();
        let value = |s: i64| match s {
            4_321 => 1e6,
            6_000 => f64::NAN,
            _ => (s % 13) as f64,
        };
        let events: Vec<(i64, Vec<(&str, f64)>)> = (0..10_000)
            .map(|s| (s, vec![("a", value(s)), ("b", -(s as f64))]))
            .collect();
        append(
            &dir.path().join("events.out.tfevents.1.host"),
            &records_of(&events),
        );
        let mut second = resumed_at(9_000);
        let later: Vec<(i64, Vec<(&str, f64)>)> = (9_000..14_000)
            .map(|s| (s, vec![("a", value(s) + 0.5)]))
            .collect();
        second.extend(records_of(&later[..3_000]));
        let file = dir.path().join("events.out.tfevents.2.host");
        append(&file, &second);

        let mut run = LiveRun::unread_own(dir.path());
        run.hold_points_up_to(1);
        run.refresh().unwrap();
        assert!(run.points_let_go());
        assert!(run.series("a").is_none(), "its points are let go");
        charts_as_exact(&run, "a");
        charts_as_exact(&run, "b");
        // It grows: the newest block's points join the blocks as they come.
        append(&file, &records_of(&later[3_000..]));
        assert_eq!(run.refresh().unwrap(), 2_000);
        charts_as_exact(&run, "a");
    }

    #[test]
    fn a_let_go_run_read_again_gives_each_asked_tag_s_points_as_held_whole() {
        // A second file rewinding to step 600: the first's points from 600 on are dropped.
        let dir = tempfile::tempdir().unwrap();
        let events: Vec<(i64, Vec<(&str, f64)>)> = (0..3_000)
            .map(|s| (s, vec![("a", s as f64), ("b", -(s as f64))]))
            .collect();
        append(
            &dir.path().join("events.out.tfevents.1.host"),
            &records_of(&events),
        );
        let mut second = resumed_at(600);
        second.extend(records(&[(600, &[("a", 0.5)]), (601, &[("a", 1.5)])]));
        append(&dir.path().join("events.out.tfevents.2.host"), &second);

        let whole = LiveRun::open_own(dir.path()).unwrap();
        let mut run = LiveRun::unread_own(dir.path());
        run.hold_points_up_to(1);
        run.refresh().unwrap();
        assert!(run.points_let_go());
        let mut again: [Vec<(i64, f64)>; 3] = Default::default();
        run.read_again(&["b", "missing", "a"], |i, p| {
            again[i].push((p.step, p.value))
        })
        .unwrap();
        assert_eq!(again[0], values(&whole, "b"));
        assert!(again[1].is_empty());
        assert_eq!(again[2], values(&whole, "a"));
        assert_eq!(again[2].last(), Some(&(601, 1.5)));
        assert_eq!(run.chart("a").unwrap().step_range(), Some((0, 601)));
        assert_eq!(run.chart("b").unwrap().step_range(), Some((0, 599)));
    }

    #[test]
    fn a_run_whose_points_are_let_go_holds_its_blocks_summaries_only() {
        let dir = tempfile::tempdir().unwrap();
        let events: Vec<(i64, Vec<(&str, f64)>)> = (0..200_000)
            .map(|s| (s, vec![("a", (s % 7) as f64), ("b", (s % 5) as f64)]))
            .collect();
        append(
            &dir.path().join("events.out.tfevents.1.host"),
            &records_of(&events),
        );
        let whole = LiveRun::open_own(dir.path()).unwrap();
        // Held whole: 12 bytes a point, and the summaries (kept for a let-go), about 2 % more.
        assert!((400_000 * 12..400_000 * 12 * 106 / 100).contains(&whole.bytes()));
        let mut run = LiveRun::unread_own(dir.path());
        run.hold_points_up_to(1 << 20);
        run.refresh().unwrap();
        // Per series: a summary per block (its Vec grown by doubling), and the newest block's
        // points, 24 bytes each at most.
        let blocks = 200_000usize.div_ceil(BLOCK).next_power_of_two();
        let bound = 2 * (blocks * BLOCK_BYTES + BLOCK * 24);
        assert!(run.bytes() <= bound, "{} > {bound}", run.bytes());
        assert!(run.bytes() * 20 < whole.bytes());
        assert_eq!(run.points(), 400_000);
    }

    #[test]
    fn a_file_whose_framing_is_lost_is_read_up_to_the_damage_and_the_next_file_on() {
        // docs/contract/board.md "The runs table": the damage named once, however many
        // refreshes stop at it.
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("events.out.tfevents.1.host");
        append(
            &first,
            &records_of(
                &(0..10)
                    .map(|s| (s, vec![("x", s as f64)]))
                    .collect::<Vec<_>>(),
            ),
        );
        let mut bytes = std::fs::read(&first).unwrap();
        let at: usize = (0..5)
            .map(|s| records(&[(s, &[("x", s as f64)])]).len())
            .sum();
        bytes[at] ^= 0x01;
        std::fs::write(&first, bytes).unwrap();
        let mut run = LiveRun::open_own(dir.path()).unwrap();
        assert_eq!(
            values(&run, "x"),
            (0..5).map(|s| (s, s as f64)).collect::<Vec<_>>()
        );
        assert_eq!(run.damage().len(), 1);
        assert_eq!(run.damage()[0].offset(), at as u64);
        assert_eq!(run.damage()[0].path(), Some(first.as_path()));
        append(&first, &records(&[(10, &[("x", 10.0)])]));
        assert_eq!(run.refresh().unwrap(), 0);
        append(
            &dir.path().join("events.out.tfevents.2.host"),
            &records(&[(20, &[("x", 20.0)])]),
        );
        assert_eq!(run.refresh().unwrap(), 1);
        assert_eq!(run.damage().len(), 1, "{:?}", run.damage());
        assert_eq!(values(&run, "x").last(), Some(&(20, 20.0)));
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
