//! One tag's series held for a chart, and reduced to what a chart `width` pixels wide can show
//! with every extreme kept (M4): per x-bucket its first, last, lowest and highest point, and
//! its non-finite points marked, never dropped (`docs/contract/board.md` "Every point drawn").

pub mod blocks;
mod store;

use crate::smooth::Smoother;
use store::{Steps, Values};

/// One raw point of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// The event's step.
    pub step: i64,
    /// The event's wall time, seconds since the epoch.
    pub wall_time: f64,
    /// The value, widened to f64.
    pub value: f64,
}

/// Points between two states a smoothing pass keeps ([`Series::smoothed_with`]): a state per
/// 65 536 points, about 1/20 000 of the points' bytes.
pub const SMOOTH_STRIDE: usize = 1 << 16;

/// What a chart's x axis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// The step.
    Step,
    /// The wall time (a relative-time axis is the wall time less the run's start).
    WallTime,
}

/// One tag's points in the order the run's reader kept them (steps may go back: TensorBoard
/// draws them as written), with whether each axis is non-decreasing, so a zoom on a sorted axis
/// looks at its window only.
#[derive(Debug, Clone, Default)]
pub struct Series {
    step: Steps,
    wall_time: Vec<f64>,
    value: Values,
    steps_sorted: bool,
    walls_sorted: bool,
}

/// The points of one x-bucket that a chart needs to draw every extreme of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    /// The point with the smallest x (on a tie, the first read).
    pub first: Point,
    /// The point with the largest x (on a tie, the last read).
    pub last: Point,
    /// The point of lowest finite value; `None` when every point is NaN or infinite.
    pub min: Option<Point>,
    /// The point of highest finite value; `None` when every point is NaN or infinite.
    pub max: Option<Point>,
    /// Raw points in the bucket.
    pub count: u64,
    /// The first NaN, +inf and -inf of the bucket (those present, in that order).
    pub nonfinite: Vec<Point>,
}

/// A series over an x window, bucketed for a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Downsampled {
    /// The window's start: as asked, or the series' smallest x.
    pub start: f64,
    /// The window's end: as asked, or the series' largest x.
    pub end: f64,
    /// Raw points inside the window.
    pub points: u64,
    /// Non-empty buckets, left to right.
    pub buckets: Vec<Bucket>,
}

impl Series {
    /// An empty series.
    pub fn new() -> Self {
        Series {
            steps_sorted: true,
            walls_sorted: true,
            ..Default::default()
        }
    }

    /// Adds a point after the others.
    pub fn push(&mut self, step: i64, wall_time: f64, value: f64) {
        if let Some(last) = self.step.len().checked_sub(1).map(|i| self.step.get(i)) {
            self.steps_sorted &= step >= last;
        }
        if let Some(&last) = self.wall_time.last() {
            // NaN wall times compare false: such a series is scanned whole.
            self.walls_sorted &= wall_time >= last;
        }
        self.step.push(step);
        self.wall_time.push(wall_time);
        self.value.push(value);
    }

    /// Drops every point, keeping the room they took (a held series' newest block, emptied
    /// each time it is complete: `blocks`).
    pub(crate) fn clear(&mut self) {
        self.step = Steps::default();
        self.wall_time.clear();
        match &mut self.value {
            Values::F32(v) => v.clear(),
            Values::F64(_) => self.value = Values::default(),
        }
        (self.steps_sorted, self.walls_sorted) = (true, true);
    }

    /// Points held.
    pub fn len(&self) -> usize {
        self.step.len()
    }

    /// Whether no point is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes its points take (`store`: regular steps and float32 values held compactly).
    pub fn bytes(&self) -> usize {
        self.step.bytes() + self.wall_time.len() * 8 + self.value.bytes()
    }

    /// The `i`th point in reading order.
    pub fn point(&self, i: usize) -> Point {
        Point {
            step: self.step.get(i),
            wall_time: self.wall_time[i],
            value: self.value.get(i),
        }
    }

    /// Drops every point at `step` or later (a purge marker read by a follower).
    pub fn truncate_from_step(&mut self, step: i64) {
        let mut kept = Series::new();
        for p in (0..self.len())
            .map(|i| self.point(i))
            .filter(|p| p.step < step)
        {
            kept.push(p.step, p.wall_time, p.value);
        }
        *self = kept;
    }

    fn x(&self, axis: Axis, i: usize) -> f64 {
        match axis {
            Axis::Step => self.step.get(i) as f64,
            Axis::WallTime => self.wall_time[i],
        }
    }

    /// The indices to look at for `[start, end]`: the window alone on a sorted axis.
    fn candidates(&self, axis: Axis, start: f64, end: f64) -> std::ops::Range<usize> {
        if !self.sorted(axis) {
            return 0..self.len();
        }
        let lo = match axis {
            Axis::Step => self.step.partition_point(|s| (s as f64) < start),
            Axis::WallTime => self.wall_time.partition_point(|&w| w < start),
        };
        let hi = match axis {
            Axis::Step => self.step.partition_point(|s| (s as f64) <= end),
            Axis::WallTime => self.wall_time.partition_point(|&w| w <= end),
        };
        lo..hi.max(lo)
    }

    /// The series' x range, NaN wall times left out; `None` when it has no point.
    fn x_range(&self, axis: Axis) -> Option<(f64, f64)> {
        if self.sorted(axis) && !self.is_empty() {
            let (a, b) = (self.x(axis, 0), self.x(axis, self.len() - 1));
            if !a.is_nan() && !b.is_nan() {
                return Some((a, b));
            }
        }
        let mut range: Option<(f64, f64)> = None;
        for i in 0..self.len() {
            let x = self.x(axis, i);
            if x.is_nan() {
                continue;
            }
            range = Some(match range {
                None => (x, x),
                Some((lo, hi)) => (lo.min(x), hi.max(x)),
            });
        }
        range
    }

    /// The points with x in `[start, end]` (each bound defaulting to the series' own) in
    /// `width` buckets of equal x span, each with its first, last, lowest and highest point and
    /// its non-finite points: every spike and every NaN is in the answer at any zoom.
    pub fn downsample(
        &self,
        axis: Axis,
        start: Option<f64>,
        end: Option<f64>,
        width: usize,
    ) -> Downsampled {
        let w = Window::whole(self.x_range(axis), start, end, width);
        self.bucketed(axis, w.start, w.end, w.width, w.scale)
    }

    /// The points with x from `start` to `end` (default: the series' largest x) in buckets of x
    /// span `bucket` laid from `start`: a chart following a growing series asks for its newest
    /// buckets only, at the span it already draws (`docs/contract/board.md` "Live runs").
    /// `None` when that takes more than `max_width` buckets or `bucket` is not positive.
    pub fn downsample_from(
        &self,
        axis: Axis,
        start: f64,
        end: Option<f64>,
        bucket: f64,
        max_width: usize,
    ) -> Option<Downsampled> {
        let w = Window::from(self.x_range(axis), start, end, bucket, max_width)?;
        Some(self.bucketed(axis, w.start, w.end, w.width, w.scale))
    }

    /// The points with x in `[start, end]` in `width` buckets, the point at x in bucket
    /// `(x - start) × scale` (the last holding the rest).
    fn bucketed(&self, axis: Axis, start: f64, end: f64, width: usize, scale: f64) -> Downsampled {
        let slot_of = |x: f64| (((x - start) * scale) as usize).min(width - 1);
        let range = self.candidates(axis, start, end);
        if self.sorted(axis) {
            return self.downsample_sorted(axis, range, start, end, slot_of);
        }
        let mut slots: Vec<Option<Bucket>> = vec![None; width];
        let mut points = 0u64;
        for i in range {
            let x = self.x(axis, i);
            if !(x >= start && x <= end) {
                continue;
            }
            points += 1;
            let p = self.point(i);
            match &mut slots[slot_of(x)] {
                None => {
                    slots[slot_of(x)] = Some(Bucket::of(p));
                }
                Some(b) => b.add(p, x, axis),
            }
        }
        Downsampled {
            start,
            end,
            points,
            buckets: slots.into_iter().flatten().collect(),
        }
    }

    /// [`downsample`](Self::downsample) on a non-decreasing axis: each bucket is a contiguous
    /// run of points, found by binary search, its first and last points its ends, its extremes
    /// one pass over its values.
    fn downsample_sorted(
        &self,
        axis: Axis,
        range: std::ops::Range<usize>,
        start: f64,
        end: f64,
        slot_of: impl Fn(f64) -> usize,
    ) -> Downsampled {
        let mut buckets = Vec::new();
        let mut i = range.start;
        while i < range.end {
            let slot = slot_of(self.x(axis, i));
            // The first index past this bucket: slots never decrease along a sorted axis.
            let (mut lo, mut hi) = (i + 1, range.end);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if slot_of(self.x(axis, mid)) <= slot {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            buckets.push(self.bucket_of(i..lo));
            i = lo;
        }
        Downsampled {
            start,
            end,
            points: range.len() as u64,
            buckets,
        }
    }

    /// The bucket of the contiguous points `r` of a sorted axis.
    fn bucket_of(&self, r: std::ops::Range<usize>) -> Bucket {
        let Extremes {
            min,
            max,
            mut nonfinite,
        } = match &self.value {
            Values::F32(v) => extremes(&v[r.clone()], r.start),
            Values::F64(v) => extremes(&v[r.clone()], r.start),
        };
        nonfinite.sort();
        Bucket {
            first: self.point(r.start),
            last: self.point(r.end - 1),
            min: min.map(|k| self.point(k)),
            max: max.map(|k| self.point(k)),
            count: r.len() as u64,
            nonfinite: nonfinite.into_iter().map(|(_, k)| self.point(k)).collect(),
        }
    }

    fn sorted(&self, axis: Axis) -> bool {
        match axis {
            Axis::Step => self.steps_sorted,
            Axis::WallTime => self.walls_sorted,
        }
    }

    /// TensorBoard's smoothed value ([`crate::smooth`]) at each bucket's `last` point, the
    /// average run over every point of the series from its first, in reading order: the same
    /// at any zoom and any bucket span (`docs/contract/board.md` "Every point drawn").
    pub fn smoothed(&self, axis: Axis, d: &Downsampled, weight: f64) -> Vec<f64> {
        self.smoothed_at(&self.last_indices(axis, d), weight)
    }

    /// TensorBoard's smoothed value at each of the points `at` (indices in reading order).
    pub fn smoothed_at(&self, at: &[usize], weight: f64) -> Vec<f64> {
        self.smoothed_with(at, weight, &mut Vec::new())
    }

    /// [`smoothed_at`](Self::smoothed_at), the pass started from the kept state nearest below
    /// the first point asked (`kept[k]`: the state after the first `(k + 1) ×`
    /// [`SMOOTH_STRIDE`] points), the states it passes kept: a chart following a growing
    /// series asks for its newest points, and its pass starts near them. `kept` is this
    /// series' at `weight` (held series only grow).
    pub fn smoothed_with(&self, at: &[usize], weight: f64, kept: &mut Vec<Smoother>) -> Vec<f64> {
        // The points asked by index, ascending.
        let mut order: Vec<usize> = (0..at.len()).collect();
        order.sort_by_key(|&b| at[b]);
        let lowest = order.first().map_or(self.len(), |&b| at[b]);
        let k = (lowest / SMOOTH_STRIDE).min(kept.len());
        let (mut s, from) = match k {
            0 => (Smoother::new(weight), 0),
            k => (kept[k - 1], k * SMOOTH_STRIDE),
        };
        let mut out = vec![f64::NAN; at.len()];
        let mut asked = order.iter().map(|&b| (at[b], b)).peekable();
        // Between two points where something is done (a point asked, a state kept), a tight
        // pass that only takes values.
        let mut i = from;
        while i < self.len() {
            let asked_next = asked.peek().map_or(usize::MAX, |&(at, _)| at);
            let stride_end = (i / SMOOTH_STRIDE + 1) * SMOOTH_STRIDE - 1;
            let stop = asked_next.min(stride_end).min(self.len() - 1);
            match &self.value {
                Values::F32(v) => v[i..=stop].iter().for_each(|&v| s.take(f64::from(v))),
                Values::F64(v) => v[i..=stop].iter().for_each(|&v| s.take(v)),
            }
            if stop == stride_end && (stop + 1) / SMOOTH_STRIDE > kept.len() {
                kept.push(s);
            }
            while let Some((_, b)) = asked.next_if(|&(at, _)| at == stop) {
                out[b] = s.now(self.value.get(stop));
            }
            i = stop + 1;
        }
        // `s` has seen every value: whether the series is constant is known.
        out.iter_mut()
            .zip(at)
            .for_each(|(o, &i)| *o = s.finish(self.value.get(i), *o));
        out
    }

    /// The index of the first point read equal to `p` (found by its x on `axis`).
    pub fn index_of(&self, axis: Axis, p: &Point) -> Option<usize> {
        let x = x_of(p, axis);
        let same = |q: Point| {
            (q.step, q.wall_time.to_bits(), q.value.to_bits())
                == (p.step, p.wall_time.to_bits(), p.value.to_bits())
        };
        self.candidates(axis, x, x).find(|&i| same(self.point(i)))
    }

    /// The index of each bucket's `last` point: the last point read whose x is the bucket's
    /// largest (every point of that x is in the bucket).
    pub fn last_indices(&self, axis: Axis, d: &Downsampled) -> Vec<usize> {
        if self.sorted(axis) {
            return d
                .buckets
                .iter()
                .map(|b| {
                    let x = x_of(&b.last, axis);
                    let after = match axis {
                        Axis::Step => self.step.partition_point(|s| (s as f64) <= x),
                        Axis::WallTime => self.wall_time.partition_point(|&w| w <= x),
                    };
                    after.saturating_sub(1)
                })
                .collect();
        }
        // Steps going back: one pass, each bucket's largest x looked up.
        let key = |x: f64| (x + 0.0).to_bits();
        let by_x: std::collections::HashMap<u64, usize> = d
            .buckets
            .iter()
            .enumerate()
            .map(|(b, bucket)| (key(x_of(&bucket.last, axis)), b))
            .collect();
        let mut at = vec![0; d.buckets.len()];
        for i in 0..self.len() {
            if let Some(&b) = by_x.get(&key(self.x(axis, i))) {
                at[b] = i;
            }
        }
        at
    }

    /// The raw point nearest to `x` on `axis` (for a chart's hover), `None` when empty.
    pub fn nearest(&self, axis: Axis, x: f64) -> Option<Point> {
        (0..self.len())
            .filter(|&i| !self.x(axis, i).is_nan())
            .min_by(|&a, &b| {
                let da = (self.x(axis, a) - x).abs();
                let db = (self.x(axis, b) - x).abs();
                da.total_cmp(&db)
            })
            .map(|i| self.point(i))
    }
}

/// Where in a bucket's points its extremes are.
struct Extremes {
    /// The index of the lowest finite value (the first on a tie).
    min: Option<usize>,
    /// The index of the highest finite value (the first on a tie).
    max: Option<usize>,
    /// The first NaN, +inf and -inf, each with its rank and index.
    nonfinite: Vec<(u8, usize)>,
}

/// The [`Extremes`] of `values`, whose first is the point at index `start`.
fn extremes<T: Copy + Into<f64>>(values: &[T], start: usize) -> Extremes {
    let mut min: Option<(usize, f64)> = None;
    let mut max: Option<(usize, f64)> = None;
    let mut nonfinite = Vec::new();
    for (k, &v) in values.iter().enumerate() {
        let (k, v) = (start + k, v.into());
        if v.is_finite() {
            if min.is_none_or(|(_, m)| v < m) {
                min = Some((k, v));
            }
            if max.is_none_or(|(_, m)| v > m) {
                max = Some((k, v));
            }
        } else if let Some(rank) = nonfinite_rank(v) {
            if !nonfinite.iter().any(|&(r, _)| r == rank) {
                nonfinite.push((rank, k));
            }
        }
    }
    Extremes {
        min: min.map(|m| m.0),
        max: max.map(|m| m.0),
        nonfinite,
    }
}

fn x_of(p: &Point, axis: Axis) -> f64 {
    match axis {
        Axis::Step => p.step as f64,
        Axis::WallTime => p.wall_time,
    }
}

/// Where a non-finite value goes in [`Bucket::nonfinite`]'s order.
fn nonfinite_rank(v: f64) -> Option<u8> {
    if v.is_nan() {
        Some(0)
    } else if v == f64::INFINITY {
        Some(1)
    } else if v == f64::NEG_INFINITY {
        Some(2)
    } else {
        None
    }
}

impl Bucket {
    fn of(p: Point) -> Self {
        let finite = p.value.is_finite();
        Bucket {
            first: p,
            last: p,
            min: finite.then_some(p),
            max: finite.then_some(p),
            count: 1,
            nonfinite: if finite { Vec::new() } else { vec![p] },
        }
    }

    fn add(&mut self, p: Point, x: f64, axis: Axis) {
        self.count += 1;
        if x < x_of(&self.first, axis) {
            self.first = p;
        }
        if x >= x_of(&self.last, axis) {
            self.last = p;
        }
        match nonfinite_rank(p.value) {
            None => {
                if self.min.is_none_or(|m| p.value < m.value) {
                    self.min = Some(p);
                }
                if self.max.is_none_or(|m| p.value > m.value) {
                    self.max = Some(p);
                }
            }
            Some(rank) => {
                let seen = self
                    .nonfinite
                    .iter()
                    .any(|q| nonfinite_rank(q.value) == Some(rank));
                if !seen {
                    let at = self
                        .nonfinite
                        .iter()
                        .position(|q| nonfinite_rank(q.value) > Some(rank))
                        .unwrap_or(self.nonfinite.len());
                    self.nonfinite.insert(at, p);
                }
            }
        }
    }
}

/// A chart's x window in buckets: the one rule for every held form of a series (points, or
/// blocks, `downsample/blocks.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    pub start: f64,
    pub end: f64,
    pub width: usize,
    /// The point at x lies in bucket `(x - start) × scale` (the last holding the rest).
    pub scale: f64,
}

impl Window {
    /// `width` buckets over `[start, end]`, each defaulting to the series' own range `own`.
    pub fn whole(
        own: Option<(f64, f64)>,
        start: Option<f64>,
        end: Option<f64>,
        width: usize,
    ) -> Self {
        let width = width.max(1);
        let start = start.or(own.map(|r| r.0)).unwrap_or(0.0);
        let end = end.or(own.map(|r| r.1)).unwrap_or(start).max(start);
        let span = end - start;
        let scale = if span > 0.0 { width as f64 / span } else { 0.0 };
        Window {
            start,
            end,
            width,
            scale,
        }
    }

    /// Buckets of x span `bucket` from `start` to `end` (default: the series' largest x);
    /// `None` when that takes more than `max_width` buckets or `bucket` is not positive.
    pub fn from(
        own: Option<(f64, f64)>,
        start: f64,
        end: Option<f64>,
        bucket: f64,
        max_width: usize,
    ) -> Option<Self> {
        let end = end.or(own.map(|r| r.1)).unwrap_or(start).max(start);
        let buckets = ((end - start) / bucket).floor() + 1.0;
        if !(bucket > 0.0 && buckets <= max_width as f64) {
            return None;
        }
        Some(Window {
            start,
            end,
            width: buckets as usize,
            scale: 1.0 / bucket,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[f64]) -> Series {
        let mut s = Series::new();
        for (i, &v) in values.iter().enumerate() {
            s.push(i as i64, 1000.0 + i as f64, v);
        }
        s
    }

    #[test]
    fn a_series_of_float32_values_on_regular_steps_holds_12_bytes_a_point_and_any_other_loses_nothing(
    ) {
        let compact = series(&(0..1000).map(|i| (i % 7) as f64 * 0.5).collect::<Vec<_>>());
        assert_eq!(compact.bytes(), 1000 * 12);
        // A float64 value and a step off the stride: held as written, read back exactly.
        let mut s = series(&[1.0, 2.0]);
        s.push(5, 1005.0, 0.1);
        assert_eq!(s.bytes(), 3 * (8 + 8 + 8));
        let d = s.downsample(Axis::Step, None, None, 10);
        let got: Vec<(i64, f64)> = d
            .buckets
            .iter()
            .map(|b| (b.max.unwrap().step, b.max.unwrap().value))
            .collect();
        assert_eq!(got, [(0, 1.0), (1, 2.0), (5, 0.1)]);
    }

    #[test]
    fn each_bucket_s_smoothed_value_is_the_average_over_every_raw_point_at_its_last() {
        // docs/contract/board.md "Every point drawn": not over the buckets' extremes, and not
        // restarted at a zoom's window or a followed chart's span. Steps going back too.
        let values: Vec<f64> = (0..5_000)
            .map(|i| match i {
                1_234 => f64::NAN,
                4_000 => 1e4,
                _ => ((i * 37) % 101) as f64 * 0.25,
            })
            .collect();
        let mut back = series(&values);
        for (i, &v) in values[..300].iter().enumerate() {
            back.push(100 + i as i64, 9_000.0 + i as f64, v + 1.0);
        }
        for (s, all) in [
            (series(&values), values.clone()),
            (back, {
                let mut all = values.clone();
                all.extend(values[..300].iter().map(|v| v + 1.0));
                all
            }),
        ] {
            for weight in [0.0, 0.6, 0.99] {
                let want = crate::smooth::smoothed(&all, weight);
                for axis in [Axis::Step, Axis::WallTime] {
                    let mut answers = vec![
                        s.downsample(axis, None, None, 37),
                        s.downsample(axis, None, None, 10_000),
                        s.downsample(axis, Some(1_000.0), Some(1_400.0), 9),
                    ];
                    answers.extend(s.downsample_from(axis, 4_321.0, None, 7.0, 1_000));
                    for d in answers {
                        let got = s.smoothed(axis, &d, weight);
                        assert_eq!(got.len(), d.buckets.len());
                        for (b, g) in d.buckets.iter().zip(&got) {
                            // The last point read with the bucket's largest x.
                            let x = x_of(&b.last, axis);
                            let i = (0..s.len()).rev().find(|&i| s.x(axis, i) == x).unwrap();
                            assert_eq!(format!("{:?}", s.point(i)), format!("{:?}", b.last));
                            let w = want[i];
                            assert!(
                                g == &w || (g.is_nan() && w.is_nan()),
                                "{axis:?} {weight}: {g} {w}"
                            );
                        }
                    }
                }
            }
        }
        // A constant series is not smoothed.
        let flat = series(&[2.5; 100]);
        let d = flat.downsample(Axis::Step, None, None, 3);
        assert_eq!(flat.smoothed(Axis::Step, &d, 0.9), [2.5; 3]);
    }

    #[test]
    fn a_smoothing_pass_from_kept_states_gives_what_a_pass_from_the_start_gives() {
        let values: Vec<f64> = (0..5 * SMOOTH_STRIDE + 77)
            .map(|i| ((i * 7919) % 1013) as f64 * 0.5)
            .collect();
        let mut s = series(&values[..3 * SMOOTH_STRIDE + 5]);
        let mut kept = Vec::new();
        let tail = |s: &Series| vec![s.len() - 1, s.len() - 2_000, s.len() / 2];
        for grown in [false, true] {
            if grown {
                for (i, &v) in values.iter().enumerate().skip(s.len()) {
                    s.push(i as i64, 1000.0 + i as f64, v);
                }
            }
            let at = tail(&s);
            let fresh = s.smoothed_at(&at, 0.999);
            assert_eq!(s.smoothed_with(&at, 0.999, &mut kept), fresh);
            assert_eq!(kept.len(), s.len() / SMOOTH_STRIDE);
            // From the kept states alone: the newest points' pass starts near them.
            let newest = [s.len() - 1];
            assert_eq!(
                s.smoothed_with(&newest, 0.999, &mut kept),
                s.smoothed_at(&newest, 0.999)
            );
        }
    }

    #[test]
    fn buckets_from_a_start_at_a_given_span_are_laid_from_that_start() {
        let s = series(&(0..100).map(|i| i as f64).collect::<Vec<_>>());
        let d = s
            .downsample_from(Axis::Step, 50.0, None, 10.0, 100)
            .unwrap();
        let spans: Vec<(i64, i64, u64)> = d
            .buckets
            .iter()
            .map(|b| (b.first.step, b.last.step, b.count))
            .collect();
        assert_eq!(
            spans,
            [
                (50, 59, 10),
                (60, 69, 10),
                (70, 79, 10),
                (80, 89, 10),
                (90, 99, 10)
            ]
        );
        assert_eq!((d.start, d.end, d.points), (50.0, 99.0, 50));
        // Too many buckets, or no span: refused, not truncated.
        assert!(s.downsample_from(Axis::Step, 0.0, None, 0.5, 100).is_none());
        assert!(s.downsample_from(Axis::Step, 0.0, None, 0.0, 100).is_none());
    }

    #[test]
    fn a_one_step_spike_survives_any_width() {
        let mut values = vec![1.0; 1_000_000];
        values[777_777] = 50.0;
        let s = series(&values);
        for width in [1, 7, 300, 1000, 4096] {
            let d = s.downsample(Axis::Step, None, None, width);
            assert_eq!(d.points, 1_000_000);
            let top = d.buckets.iter().filter_map(|b| b.max).map(|p| p.value);
            assert_eq!(top.fold(f64::MIN, f64::max), 50.0, "width {width}");
            let spike = d.buckets.iter().find(|b| b.max.unwrap().value == 50.0);
            assert_eq!(spike.unwrap().max.unwrap().step, 777_777);
            assert!(d.buckets.len() <= width);
        }
    }

    #[test]
    fn non_finite_values_are_marked_in_their_bucket_not_taken_as_extremes() {
        let s = series(&[
            1.0,
            f64::NAN,
            2.0,
            f64::INFINITY,
            f64::NAN,
            f64::NEG_INFINITY,
        ]);
        let d = s.downsample(Axis::Step, None, None, 1);
        let b = &d.buckets[0];
        assert_eq!(b.count, 6);
        assert_eq!((b.min.unwrap().value, b.max.unwrap().value), (1.0, 2.0));
        let steps: Vec<i64> = b.nonfinite.iter().map(|p| p.step).collect();
        assert_eq!(
            steps,
            [1, 3, 5],
            "the first NaN, +inf and -inf, in that order"
        );
        let only_nan = series(&[f64::NAN]).downsample(Axis::Step, None, None, 10);
        assert_eq!(only_nan.buckets[0].min, None);
        assert_eq!(only_nan.buckets[0].nonfinite.len(), 1);
    }

    #[test]
    fn a_window_keeps_its_points_only_and_buckets_them_by_x() {
        let s = series(&(0..100).map(|i| i as f64).collect::<Vec<_>>());
        let d = s.downsample(Axis::Step, Some(10.0), Some(19.0), 10);
        assert_eq!((d.points, d.buckets.len()), (10, 10));
        for (i, b) in d.buckets.iter().enumerate() {
            assert_eq!(b.first, b.last);
            assert_eq!(b.first.step, 10 + i as i64);
        }
        let wall = s.downsample(Axis::WallTime, Some(1050.0), Some(1059.0), 2);
        assert_eq!(wall.points, 10);
        assert_eq!(wall.buckets[0].first.step, 50);
        assert_eq!(wall.buckets[1].last.step, 59);
    }

    #[test]
    fn steps_going_back_are_bucketed_by_x_as_well() {
        let mut s = Series::new();
        for (step, v) in [(5, 0.5), (6, 0.6), (2, 0.2), (3, 0.3), (9, 0.9)] {
            s.push(step, step as f64, v);
        }
        let d = s.downsample(Axis::Step, Some(2.0), Some(6.0), 1);
        let b = &d.buckets[0];
        assert_eq!((b.first.step, b.last.step, b.count), (2, 6, 4));
        assert_eq!((b.min.unwrap().step, b.max.unwrap().step), (2, 6));
    }

    #[test]
    fn a_sorted_axis_buckets_as_the_general_scan_does() {
        let mut s = Series::new();
        let mut x = 12345u64;
        for i in 0..20_000i64 {
            // A xorshift stream: repeated steps, spikes, NaN and infinities.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = match x % 97 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => f64::NEG_INFINITY,
                r => (r as f64) * if x % 1000 == 3 { 1e6 } else { 1.0 },
            };
            s.push(i / 3, i as f64 * 0.5, v);
        }
        let mut general = s.clone();
        (general.steps_sorted, general.walls_sorted) = (false, false);
        for (axis, window) in [
            (Axis::Step, (None, None)),
            (Axis::Step, (Some(100.0), Some(2000.5))),
            (Axis::WallTime, (Some(10.0), Some(9000.0))),
        ] {
            for width in [1, 7, 640, 5000] {
                let fast = s.downsample(axis, window.0, window.1, width);
                let slow = general.downsample(axis, window.0, window.1, width);
                // NaN != NaN: compare the points' bits through their debug form.
                assert_eq!(
                    format!("{fast:?}"),
                    format!("{slow:?}"),
                    "{axis:?} {window:?} {width}"
                );
            }
        }
    }

    #[test]
    fn nearest_is_a_raw_point() {
        let s = series(&[3.0, 4.0, 5.0]);
        assert_eq!(s.nearest(Axis::Step, 1.4).unwrap().value, 4.0);
        assert_eq!(Series::new().nearest(Axis::Step, 0.0), None);
    }

    #[test]
    fn truncating_from_a_step_drops_it_and_later_ones() {
        let mut s = series(&[0.0, 1.0, 2.0, 3.0]);
        s.truncate_from_step(2);
        assert_eq!(s.len(), 2);
        assert_eq!(s.point(1).value, 1.0);
    }
}
