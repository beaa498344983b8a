//! A series that may be held as summaries of blocks of consecutive points instead of the points
//! (`docs/contract/board.md` "Bounded reads"): per block of [`BLOCK`] points its first and last
//! point on each axis, its lowest and highest, its first NaN, +inf and -inf, its count, and where
//! its records lie in the run's files, so its raw points can be read back. Until
//! [`HeldSeries::let_go_of_points`] the points are held too and every answer is the exact path's
//! ([`Series`]); after it, a held series costs O(points / [`BLOCK`]).

use super::{x_of, Axis, Bucket, Downsampled, Point, Series, Window};

/// Points per block: a block's summary takes about 1/50 of its points' 12 bytes each, and a
/// chart 1 000 pixels wide over 5 M points has about 5 blocks a pixel.
pub const BLOCK: usize = 1024;

/// A chart's blocks that straddle bucket edges are read back from the files (buckets then exact)
/// while they are at most this many bytes of records, about 40 ms of reading; past it they are
/// counted whole in the bucket of their first x (bucket edges at block edges).
pub const REREAD_BYTES: u64 = 32 << 20;

/// Where a point's record lies: its file (by index in the run's files) and the bytes from the
/// end of the record read before it in that file to the end of its own. Reading that range
/// again gives the point back, with the records between (of other tags, or dropped by a purge
/// marker) dropped the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    /// The file, by index in the run's files.
    pub file: usize,
    /// The first byte.
    pub lo: u64,
    /// One past the last byte.
    pub hi: u64,
}

/// A point's first and last on one axis: the smallest x (the first read on a tie) and the
/// largest (the last read on a tie), as [`Bucket`] keeps them.
#[derive(Debug, Clone, Copy)]
struct Ends {
    first: Point,
    last: Point,
}

/// The summary of a block of consecutive points of one series, all in one file.
#[derive(Debug, Clone)]
pub struct Block {
    /// Where its records lie.
    pub at: At,
    /// Its points.
    pub count: u32,
    step: Ends,
    /// By wall time, NaN wall times left out (`None` when every one is NaN).
    wall: Option<Ends>,
    /// Whether a wall time is NaN: such a block is read back for a wall-time chart (a NaN x is
    /// in no window, so its count there is not the block's).
    wall_nan: bool,
    min: Option<Point>,
    max: Option<Point>,
    nonfinite: Vec<Point>,
}

impl Block {
    fn of(points: impl Iterator<Item = Point>, at: At) -> Self {
        let mut bucket: Option<Bucket> = None;
        let mut wall: Option<Ends> = None;
        let mut wall_nan = false;
        for p in points {
            match &mut bucket {
                None => bucket = Some(Bucket::of(p)),
                Some(b) => b.add(p, p.step as f64, Axis::Step),
            }
            if p.wall_time.is_nan() {
                wall_nan = true;
                continue;
            }
            match &mut wall {
                None => wall = Some(Ends { first: p, last: p }),
                Some(e) => {
                    if p.wall_time < e.first.wall_time {
                        e.first = p;
                    }
                    if p.wall_time >= e.last.wall_time {
                        e.last = p;
                    }
                }
            }
        }
        let b = bucket.expect("a block holds a point");
        Block {
            at,
            count: b.count as u32,
            step: Ends {
                first: b.first,
                last: b.last,
            },
            wall,
            wall_nan,
            min: b.min,
            max: b.max,
            nonfinite: b.nonfinite,
        }
    }

    /// [`of`](Self::of) the points `r` of `raw`, whose steps and wall times are non-decreasing
    /// and not NaN: their ends are its first and last, its extremes one pass over the values
    /// (the cost of summarising every point as it is read).
    fn of_sorted(raw: &Series, r: std::ops::Range<usize>, at: At) -> Self {
        let b = raw.bucket_of(r);
        let ends = Ends {
            first: b.first,
            last: b.last,
        };
        Block {
            at,
            count: b.count as u32,
            step: ends,
            wall: Some(ends),
            wall_nan: false,
            min: b.min,
            max: b.max,
            nonfinite: b.nonfinite,
        }
    }

    fn ends(&self, axis: Axis) -> Option<Ends> {
        match axis {
            Axis::Step => Some(self.step),
            Axis::WallTime => self.wall,
        }
    }

    /// Its x range on `axis`, NaN wall times left out.
    pub(crate) fn x_range(&self, axis: Axis) -> Option<(f64, f64)> {
        self.ends(axis)
            .map(|e| (x_of(&e.first, axis), x_of(&e.last, axis)))
    }

    /// The block as one bucket on `axis` (its points all in it).
    fn bucket(&self, axis: Axis) -> Bucket {
        let ends = self.ends(axis).unwrap_or(self.step);
        Bucket {
            first: ends.first,
            last: ends.last,
            min: self.min,
            max: self.max,
            count: u64::from(self.count),
            nonfinite: self.nonfinite.clone(),
        }
    }

    fn heap_bytes(&self) -> usize {
        self.nonfinite.capacity() * std::mem::size_of::<Point>()
    }
}

/// Gives a block's points back, in reading order (from the files, `crate::live`); called from
/// several threads at once.
pub type Reread<'a, E> = dyn Fn(&Block) -> Result<Vec<Point>, E> + Sync + 'a;

/// The points of each of `blocks`, read back on up to 4 threads (a zoom's blocks are read
/// back while the page waits).
fn read_back<E: Send>(blocks: &[&Block], reread: &Reread<'_, E>) -> Result<Vec<Vec<Point>>, E> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4)
        .min(blocks.len());
    if threads <= 1 {
        return blocks.iter().map(|b| reread(b)).collect();
    }
    let per = blocks.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = blocks
            .chunks(per)
            .map(|part| scope.spawn(move || part.iter().map(|b| reread(b)).collect::<Vec<_>>()))
            .collect();
        let mut out = Vec::with_capacity(blocks.len());
        for part in parts {
            for points in part.join().expect("a block's reading back panicked") {
                out.push(points?);
            }
        }
        Ok(out)
    })
}

/// What a chart does with one block.
#[derive(Clone, Copy)]
enum Use {
    /// Outside the window.
    Skip,
    /// Inside the window and one bucket: its summary.
    Whole(usize),
    /// Inside the window, across bucket edges: its summary in the bucket of its first x when
    /// reading back is too costly, else its points.
    Straddle(usize),
    /// Across the window's edge (or with NaN wall times on that axis): its points.
    Points,
}

/// One tag's series as held for a chart: every point, or (once let go of) the summaries of its
/// complete blocks and the points of its newest block, which is still growing.
#[derive(Debug, Clone, Default)]
pub struct HeldSeries {
    /// Every point, or after [`let_go_of_points`](Self::let_go_of_points) the newest block's.
    raw: Series,
    blocks: Vec<Block>,
    /// The newest block's records so far, while it has a point.
    open: Option<At>,
    open_len: usize,
    points_let_go: bool,
    len: usize,
    heap: usize,
}

impl HeldSeries {
    /// An empty series, holding its points.
    pub fn new() -> Self {
        HeldSeries {
            raw: Series::new(),
            ..Default::default()
        }
    }

    /// Adds a point after the others, its record at `at`. A block ends at [`BLOCK`] points, at
    /// a record's end (a record's points are in one block), and at its file's end.
    pub fn push(&mut self, p: Point, at: At) {
        if let Some(open) = self.open {
            let new_record = at.file != open.file || at.lo >= open.hi;
            if new_record && (at.file != open.file || self.open_len >= BLOCK) {
                self.close();
            }
        }
        match &mut self.open {
            None => self.open = Some(at),
            Some(open) => open.hi = at.hi,
        }
        self.raw.push(p.step, p.wall_time, p.value);
        self.open_len += 1;
        self.len += 1;
    }

    fn close(&mut self) {
        let Some(at) = self.open.take() else {
            return;
        };
        let n = self.raw.len();
        let r = n - self.open_len..n;
        let sorted = self.raw.sorted(Axis::Step)
            && self.raw.sorted(Axis::WallTime)
            && !self.raw.point(r.start).wall_time.is_nan();
        let block = if sorted {
            Block::of_sorted(&self.raw, r, at)
        } else {
            Block::of(r.map(|i| self.raw.point(i)), at)
        };
        self.heap += block.heap_bytes();
        self.blocks.push(block);
        self.open_len = 0;
        if self.points_let_go {
            self.raw.clear();
        }
    }

    /// Lets go of the points of its complete blocks, now and from now on: answers then come
    /// from the blocks' summaries and points read back.
    pub fn let_go_of_points(&mut self) {
        if self.points_let_go {
            return;
        }
        self.points_let_go = true;
        let n = self.raw.len();
        let mut newest = Series::new();
        for i in n - self.open_len..n {
            let p = self.raw.point(i);
            newest.push(p.step, p.wall_time, p.value);
        }
        self.raw = newest;
        self.blocks.shrink_to_fit();
    }

    /// Its complete blocks, in reading order (their points let go once
    /// [`let_go_of_points`](Self::let_go_of_points)).
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// The points held: every point, or once let go the newest block's, which follow the
    /// complete blocks' in reading order.
    pub fn held_points(&self) -> &Series {
        &self.raw
    }

    /// The series whole, while its points are held.
    pub fn exact(&self) -> Option<&Series> {
        (!self.points_let_go).then_some(&self.raw)
    }

    /// The smallest and largest step (held or not; `None` when empty).
    pub fn step_range(&self) -> Option<(i64, i64)> {
        let blocks = self
            .blocks
            .iter()
            .map(|b| (b.step.first.step, b.step.last.step));
        let raw = (0..self.raw.len()).map(|i| {
            let step = self.raw.point(i).step;
            (step, step)
        });
        blocks
            .chain(raw)
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
    }

    /// Points in the series (held or not).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no point.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes it holds: its points (all or the newest block's) and its blocks' summaries.
    pub fn bytes(&self) -> usize {
        self.raw.bytes() + self.blocks.capacity() * std::mem::size_of::<Block>() + self.heap
    }

    /// [`Series::downsample`]; once its points are let go, from the blocks (`reread` gives a
    /// block's points back, in reading order).
    pub fn downsample<E: Send>(
        &self,
        axis: Axis,
        start: Option<f64>,
        end: Option<f64>,
        width: usize,
        reread: &Reread<'_, E>,
    ) -> Result<Downsampled, E> {
        if !self.points_let_go {
            return Ok(self.raw.downsample(axis, start, end, width));
        }
        let w = Window::whole(self.x_range(axis), start, end, width);
        self.bucketed_blocks(axis, w.start, w.end, w.width, w.scale, REREAD_BYTES, reread)
    }

    /// [`Series::downsample_from`], from the blocks once its points are let go.
    pub fn downsample_from<E: Send>(
        &self,
        axis: Axis,
        start: f64,
        end: Option<f64>,
        bucket: f64,
        max_width: usize,
        reread: &Reread<'_, E>,
    ) -> Result<Option<Downsampled>, E> {
        if !self.points_let_go {
            return Ok(self
                .raw
                .downsample_from(axis, start, end, bucket, max_width));
        }
        let Some(w) = Window::from(self.x_range(axis), start, end, bucket, max_width) else {
            return Ok(None);
        };
        self.bucketed_blocks(axis, w.start, w.end, w.width, w.scale, REREAD_BYTES, reread)
            .map(Some)
    }

    /// The series' x range, NaN wall times left out.
    fn x_range(&self, axis: Axis) -> Option<(f64, f64)> {
        self.blocks
            .iter()
            .filter_map(|b| b.x_range(axis))
            .chain(self.raw.x_range(axis))
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    }

    /// The points with x in `[start, end]` in `width` buckets, the point at x in bucket
    /// `(x - start) × scale` (the last holding the rest), as [`Series`] buckets them; but when
    /// the blocks across bucket edges take more than `budget` bytes to read back, each is
    /// counted whole in the bucket of its first x. Blocks are taken in reading order, so ties
    /// go as in the exact path.
    #[allow(clippy::too_many_arguments)]
    fn bucketed_blocks<E: Send>(
        &self,
        axis: Axis,
        start: f64,
        end: f64,
        width: usize,
        scale: f64,
        budget: u64,
        reread: &Reread<'_, E>,
    ) -> Result<Downsampled, E> {
        let slot_of = |x: f64| (((x - start) * scale) as usize).min(width - 1);
        let uses: Vec<Use> = self
            .blocks
            .iter()
            .map(|b| {
                if axis == Axis::WallTime && b.wall_nan {
                    return Use::Points;
                }
                let Some((lo, hi)) = b.x_range(axis) else {
                    return Use::Skip;
                };
                if hi < start || lo > end {
                    Use::Skip
                } else if lo >= start && hi <= end {
                    match (slot_of(lo), slot_of(hi)) {
                        (a, b) if a == b => Use::Whole(a),
                        (a, _) => Use::Straddle(a),
                    }
                } else {
                    Use::Points
                }
            })
            .collect();
        let straddling: u64 = self
            .blocks
            .iter()
            .zip(&uses)
            .filter(|(_, u)| matches!(u, Use::Straddle(_)))
            .map(|(b, _)| b.at.hi - b.at.lo)
            .sum();
        let snap = straddling > budget;
        let summed =
            |u: &Use| matches!(u, Use::Whole(_)) || (snap && matches!(u, Use::Straddle(_)));
        let needed: Vec<&Block> = self
            .blocks
            .iter()
            .zip(&uses)
            .filter(|(_, u)| !matches!(u, Use::Skip) && !summed(u))
            .map(|(b, _)| b)
            .collect();
        let mut read = read_back(&needed, reread)?.into_iter();
        let mut slots: Vec<Option<Bucket>> = vec![None; width];
        let mut points = 0u64;
        let mut add = |slots: &mut Vec<Option<Bucket>>, p: Point| {
            let x = x_of(&p, axis);
            if !(x >= start && x <= end) {
                return;
            }
            points += 1;
            match &mut slots[slot_of(x)] {
                None => slots[slot_of(x)] = Some(Bucket::of(p)),
                Some(b) => b.add(p, x, axis),
            }
        };
        let mut whole = 0u64;
        for (b, u) in self.blocks.iter().zip(&uses) {
            match *u {
                Use::Skip => {}
                Use::Whole(s) | Use::Straddle(s) if snap || matches!(u, Use::Whole(_)) => {
                    whole += u64::from(b.count);
                    match &mut slots[s] {
                        None => slots[s] = Some(b.bucket(axis)),
                        Some(into) => into.merge(&b.bucket(axis), axis),
                    }
                }
                _ => {
                    for p in read.next().expect("a block read back") {
                        add(&mut slots, p);
                    }
                }
            }
        }
        for i in 0..self.raw.len() {
            add(&mut slots, self.raw.point(i));
        }
        Ok(Downsampled {
            start,
            end,
            points: points + whole,
            buckets: slots.into_iter().flatten().collect(),
        })
    }

    /// [`Series::nearest`]; once its points are let go, from the blocks that may hold it, read
    /// back (on a tie, the first read, as the exact path).
    pub fn nearest<E: Send>(
        &self,
        axis: Axis,
        x: f64,
        reread: &Reread<'_, E>,
    ) -> Result<Option<Point>, E> {
        if !self.points_let_go {
            return Ok(self.raw.nearest(axis, x));
        }
        // A block's ends are points of it: the nearest end bounds the answer's distance.
        let tail = self.raw.nearest(axis, x);
        let bound = self
            .blocks
            .iter()
            .filter_map(|b| b.x_range(axis))
            .flat_map(|(lo, hi)| [(lo - x).abs(), (hi - x).abs()])
            .chain(tail.map(|p| (x_of(&p, axis) - x).abs()))
            .fold(f64::INFINITY, f64::min);
        let mut best: Option<(f64, Point)> = None;
        let mut consider = |p: Point| {
            let px = x_of(&p, axis);
            if px.is_nan() {
                return;
            }
            let d = (px - x).abs();
            if best.is_none_or(|(bd, _)| d.total_cmp(&bd).is_lt()) {
                best = Some((d, p));
            }
        };
        let near = |b: &&Block| {
            b.x_range(axis).is_some_and(|(lo, hi)| {
                let d = if x < lo {
                    lo - x
                } else if x > hi {
                    x - hi
                } else {
                    0.0
                };
                d <= bound
            })
        };
        let needed: Vec<&Block> = self.blocks.iter().filter(near).collect();
        for points in read_back(&needed, reread)? {
            for p in points {
                consider(p);
            }
        }
        for i in 0..self.raw.len() {
            consider(self.raw.point(i));
        }
        Ok(best.map(|(_, p)| p))
    }
}

impl Bucket {
    /// Takes in the bucket of points read after its own: the same bucket as adding them one by
    /// one ([`Bucket::add`]'s ties: the first read smallest x, lowest and highest value, the last
    /// read largest x).
    fn merge(&mut self, later: &Bucket, axis: Axis) {
        self.count += later.count;
        if x_of(&later.first, axis) < x_of(&self.first, axis) {
            self.first = later.first;
        }
        if x_of(&later.last, axis) >= x_of(&self.last, axis) {
            self.last = later.last;
        }
        if let Some(m) = later.min {
            if self.min.is_none_or(|s| m.value < s.value) {
                self.min = Some(m);
            }
        }
        if let Some(m) = later.max {
            if self.max.is_none_or(|s| m.value > s.value) {
                self.max = Some(m);
            }
        }
        for &p in &later.nonfinite {
            let rank = super::nonfinite_rank(p.value);
            if !self
                .nonfinite
                .iter()
                .any(|q| super::nonfinite_rank(q.value) == rank)
            {
                let at = self
                    .nonfinite
                    .iter()
                    .position(|q| super::nonfinite_rank(q.value) > rank)
                    .unwrap_or(self.nonfinite.len());
                self.nonfinite.insert(at, p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A series whose every point is its own record (`At` as the point's index), held both
    /// whole and as blocks, and read back from the whole.
    fn held(points: &[Point]) -> (Series, HeldSeries) {
        let mut whole = Series::new();
        let mut blocks = HeldSeries::new();
        for (i, p) in points.iter().enumerate() {
            whole.push(p.step, p.wall_time, p.value);
            let at = At {
                file: 0,
                lo: i as u64,
                hi: i as u64 + 1,
            };
            blocks.push(*p, at);
        }
        blocks.let_go_of_points();
        (whole, blocks)
    }

    fn reread(points: &[Point]) -> impl Fn(&Block) -> Result<Vec<Point>, ()> + Sync + '_ {
        |b: &Block| Ok(points[b.at.lo as usize..b.at.hi as usize].to_vec())
    }

    /// A xorshift stream of values: spikes, a one-point spike, NaN and infinities inside blocks.
    fn stream(n: usize, step_of: impl Fn(usize) -> i64) -> Vec<Point> {
        let mut x = 88172645463325252u64;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let value = match (i, x % 211) {
                    (7_777, _) => 1e9,
                    (12_345, _) => f64::NAN,
                    (_, 0) => f64::NAN,
                    (_, 1) => f64::INFINITY,
                    (_, 2) => f64::NEG_INFINITY,
                    (_, r) => r as f64 * if x % 997 == 5 { -1e4 } else { 1.0 },
                };
                Point {
                    step: step_of(i),
                    wall_time: 1000.0 + i as f64 * 0.25,
                    value,
                }
            })
            .collect()
    }

    #[test]
    fn blocks_read_back_across_bucket_edges_answer_as_the_exact_path() {
        let points = stream(50_000, |i| i as i64 * 3);
        let (whole, blocks) = held(&points);
        assert!(blocks.exact().is_none());
        for (axis, window) in [
            (Axis::Step, (None, None)),
            (Axis::Step, (Some(300.5), Some(60_000.0))),
            (Axis::Step, (Some(36_000.0), Some(37_000.0))),
            (Axis::WallTime, (Some(2000.0), Some(9000.0))),
        ] {
            for width in [1, 7, 300, 1000, 4096] {
                let want = whole.downsample(axis, window.0, window.1, width);
                let got = blocks
                    .downsample(axis, window.0, window.1, width, &reread(&points))
                    .unwrap();
                // NaN != NaN: compare the points' bits through their debug form.
                assert_eq!(
                    format!("{got:?}"),
                    format!("{want:?}"),
                    "{axis:?} {window:?} {width}"
                );
            }
            let want = whole.downsample_from(axis, 20_000.0, None, 333.0, 16_384);
            let got = blocks
                .downsample_from(axis, 20_000.0, None, 333.0, 16_384, &reread(&points))
                .unwrap();
            assert_eq!(format!("{got:?}"), format!("{want:?}"));
        }
    }

    #[test]
    fn steps_going_back_and_nan_wall_times_answer_as_the_exact_path() {
        // A resumed run drawn as written: steps go back at 30 000; a few wall times are NaN.
        let mut points = stream(40_000, |i| {
            if i < 30_000 {
                i as i64
            } else {
                i as i64 - 20_000
            }
        });
        points[5_000].wall_time = f64::NAN;
        points[31_000].wall_time = f64::NAN;
        let (whole, blocks) = held(&points);
        for axis in [Axis::Step, Axis::WallTime] {
            for window in [(None, None), (Some(9_000.0), Some(15_000.5))] {
                for width in [1, 640] {
                    let want = whole.downsample(axis, window.0, window.1, width);
                    let got = blocks
                        .downsample(axis, window.0, window.1, width, &reread(&points))
                        .unwrap();
                    assert_eq!(
                        format!("{got:?}"),
                        format!("{want:?}"),
                        "{axis:?} {window:?}"
                    );
                }
            }
            for at in [-5.0, 12_345.4, 25_000.0, 1e12] {
                assert_eq!(
                    format!("{:?}", blocks.nearest(axis, at, &reread(&points)).unwrap()),
                    format!("{:?}", whole.nearest(axis, at)),
                    "{axis:?} {at}"
                );
            }
        }
    }

    #[test]
    fn blocks_counted_whole_keep_each_buckets_extremes_exact_over_its_points() {
        let points = stream(200_000, |i| i as i64);
        let (whole, blocks) = held(&points);
        for width in [3, 100, 1000] {
            // No budget for reading back: every block across a bucket edge is counted whole.
            let got = blocks
                .bucketed_blocks(
                    Axis::Step,
                    0.0,
                    199_999.0,
                    width,
                    width as f64 / 199_999.0,
                    0,
                    &reread(&points),
                )
                .unwrap();
            assert_eq!(got.points, 200_000);
            assert_eq!(got.buckets.iter().map(|b| b.count).sum::<u64>(), 200_000);
            let mut next = 0;
            for b in &got.buckets {
                // Each bucket's points are whole blocks (edges at block edges), and its first,
                // last, lowest, highest and non-finite points are those of its points.
                assert_eq!(b.first.step, next);
                // (The newest block, still growing, is points bucketed as they are.)
                if (b.first.step as usize) < 200_000 / BLOCK * BLOCK {
                    assert_eq!(b.first.step as usize % BLOCK, 0);
                }
                next = b.last.step + 1;
                let (lo, hi) = (b.first.step as f64, b.last.step as f64);
                let want = &whole.downsample(Axis::Step, Some(lo), Some(hi), 1).buckets[0];
                assert_eq!(format!("{b:?}"), format!("{want:?}"), "width {width}");
            }
            assert_eq!(next, 200_000);
            let top = got.buckets.iter().filter_map(|b| b.max).map(|p| p.step);
            assert!(top.clone().any(|s| s == 7_777), "the one-point spike");
            // The NaN's bucket marks a NaN (its first).
            let at = got
                .buckets
                .iter()
                .find(|b| (b.first.step..=b.last.step).contains(&12_345));
            assert!(
                at.unwrap().nonfinite.iter().any(|p| p.value.is_nan()),
                "the NaN"
            );
            // A bucket spans about width's share of the points, a block more at most.
            let share = 200_000 / width as u64;
            assert!(got.buckets.iter().all(|b| b.count <= share + BLOCK as u64));
        }
    }

    #[test]
    fn a_zoom_into_one_block_gives_its_raw_points() {
        let points = stream(10_000, |i| i as i64);
        let (_, blocks) = held(&points);
        let asked = std::sync::Mutex::new(Vec::new());
        let counting = |b: &Block| {
            asked.lock().unwrap().push(b.at);
            reread(&points)(b)
        };
        let d = blocks
            .downsample(Axis::Step, Some(5_000.0), Some(5_019.0), 1000, &counting)
            .unwrap();
        assert_eq!(d.points, 20);
        let got: Vec<String> = d.buckets.iter().map(|b| format!("{:?}", b.first)).collect();
        let want: Vec<String> = points[5_000..5_020]
            .iter()
            .map(|p| format!("{p:?}"))
            .collect();
        assert_eq!(got, want);
        assert!(d.buckets.iter().all(|b| b.count == 1 && b.first == b.last));
        // Only the block holding the window was read back.
        assert_eq!(asked.lock().unwrap().len(), 1);
    }

    #[test]
    fn the_newest_block_stays_points_and_memory_is_the_blocks_summaries() {
        let n = 1_000_000;
        let points = stream(n, |i| i as i64);
        let (whole, mut blocks) = held(&points);
        assert_eq!(blocks.len(), n);
        let summaries = n.div_ceil(BLOCK) * std::mem::size_of::<Block>();
        // Each block's NaN, +inf and -inf, and the newest block's points at 24 bytes at most.
        let bound = summaries * 2 + n.div_ceil(BLOCK) * 3 * 24 + BLOCK * 24;
        assert!(blocks.bytes() <= bound, "{} > {bound}", blocks.bytes());
        assert!(
            blocks.bytes() * 20 < whole.bytes(),
            "{} vs {}",
            blocks.bytes(),
            whole.bytes()
        );
        // Points go on arriving after the points were let go: still answered as the exact path.
        let more = stream(n + 5_000, |i| i as i64);
        let mut grown = whole.clone();
        for (i, p) in more[n..].iter().enumerate() {
            let at = At {
                file: 0,
                lo: (n + i) as u64,
                hi: (n + i) as u64 + 1,
            };
            blocks.push(*p, at);
            grown.push(p.step, p.wall_time, p.value);
        }
        let want = grown.downsample(Axis::Step, Some(999_000.0), None, 700);
        let got = blocks
            .downsample(Axis::Step, Some(999_000.0), None, 700, &reread(&more))
            .unwrap();
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
    }
}
