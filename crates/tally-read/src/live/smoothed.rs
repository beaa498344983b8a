//! TensorBoard's smoothing of a run's series, its states kept per series and weight
//! (`docs/contract/board.md` "Every point drawn", "Bounded reads"). Of a series held whole, the
//! state every [`SMOOTH_STRIDE`](crate::downsample::SMOOTH_STRIDE) points, so a chart
//! following it passes over its newest points only. Of a series whose points are let go, the state after each complete block, found by
//! one read of the series and carried on over the blocks that complete later (each read back
//! once), so a chart following a large run costs the blocks its buckets end in, not a read of
//! the run per request.

use crate::downsample::blocks::{Block, HeldSeries};
use crate::downsample::{Axis, Point, Series};
use crate::error::Error;
use crate::smooth::Smoother;
use std::collections::VecDeque;
use std::sync::Mutex;

/// Weights kept per series: a slider dragged across values reads the run again for each new
/// one, and the oldest is let go.
const WEIGHTS_KEPT: usize = 4;

/// After one complete block: the average's state, and its last point read with its smoothed
/// value.
#[derive(Clone, Copy)]
struct After {
    state: Smoother,
    last: Point,
    smoothed: f64,
}

/// Tells every point of a series, in reading order, to its argument (one read of the run).
pub(super) type ReadAll<'a> = dyn Fn(&mut dyn FnMut(Point)) -> Result<(), Error> + 'a;

/// The kept states, each series' and weight's, the one used last at the back.
type States<T> = VecDeque<(usize, u64, T)>;

/// The kept states of a run's series (behind a lock: a chart holds the run shared).
#[derive(Default)]
pub(super) struct Kept {
    /// Of let-go series: after each block.
    states: Mutex<States<Vec<After>>>,
    /// Of series held whole: every [`SMOOTH_STRIDE`](crate::downsample::SMOOTH_STRIDE) points
    /// ([`Series::smoothed_with`]).
    held: Mutex<States<Vec<Smoother>>>,
}

fn same(a: &Point, b: &Point) -> bool {
    (a.step, a.wall_time.to_bits(), a.value.to_bits())
        == (b.step, b.wall_time.to_bits(), b.value.to_bits())
}

impl Kept {
    /// The smoothed value at each of `points` (the last point read equal to each) of series
    /// `id`, held as `held`; `read_all` tells every point of the series in reading order (one
    /// read of the run), `reread` gives one block's points back.
    pub(super) fn smoothed(
        &self,
        id: usize,
        held: &HeldSeries,
        weight: f64,
        points: &[Point],
        read_all: &ReadAll<'_>,
        reread: &dyn Fn(&Block) -> Result<Vec<Point>, Error>,
    ) -> Result<Vec<f64>, Error> {
        let mut all = self.states.lock().unwrap_or_else(|e| e.into_inner());
        let after = states_of(&mut all, id, weight);
        let blocks = held.blocks();
        if after.is_empty() && !blocks.is_empty() {
            first_pass(after, blocks, weight, read_all)?;
        }
        // Blocks completed since: carried on, each read back once.
        while after.len() < blocks.len() {
            let i = after.len();
            let mut state = after.last().map_or(Smoother::new(weight), |a| a.state);
            let mut last = None;
            for p in reread(&blocks[i])? {
                last = Some((p, state.push(p.value)));
            }
            let (last, smoothed) = last.expect("a block holds a point");
            after.push(After {
                state,
                last,
                smoothed,
            });
        }
        // The newest block's points, held, and the state at the series' end.
        let open = held.held_points();
        let mut end = after.last().map_or(Smoother::new(weight), |a| a.state);
        let open_smoothed: Vec<f64> = (0..open.len())
            .map(|i| end.push(open.point(i).value))
            .collect();
        let mut out = Vec::with_capacity(points.len());
        for p in points {
            let found = match (0..open.len()).rev().find(|&i| same(&open.point(i), p)) {
                Some(i) => Some(open_smoothed[i]),
                None => in_blocks(after, blocks, p, weight, reread)?,
            };
            out.push(found.map_or(f64::NAN, |s| end.finish(p.value, s)));
        }
        Ok(out)
    }

    /// [`Series::smoothed`] of series `id`, held whole as `series`, from its kept states.
    pub(super) fn held_smoothed(
        &self,
        id: usize,
        series: &Series,
        weight: f64,
        at: &[usize],
    ) -> Vec<f64> {
        let mut all = self.held.lock().unwrap_or_else(|e| e.into_inner());
        series.smoothed_with(at, weight, states_of(&mut all, id, weight))
    }

    /// The bytes kept.
    pub(super) fn bytes(&self) -> usize {
        let all = self.states.lock().unwrap_or_else(|e| e.into_inner());
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let blocks: usize = all
            .iter()
            .map(|(_, _, after)| after.capacity() * std::mem::size_of::<After>())
            .sum();
        let strides: usize = held
            .iter()
            .map(|(_, _, kept)| kept.capacity() * std::mem::size_of::<Smoother>())
            .sum();
        blocks + strides
    }
}

/// The kept states of series `id` at `weight` (new and empty if none), moved to the back; past
/// [`WEIGHTS_KEPT`] weights of the series, the one used longest ago is let go.
fn states_of<T: Default>(all: &mut States<T>, id: usize, weight: f64) -> &mut T {
    let key = (id, weight.to_bits());
    let entry = match all.iter().position(|(i, w, _)| (*i, *w) == key) {
        Some(at) => all.remove(at).expect("found"),
        None => (id, key.1, T::default()),
    };
    if all.iter().filter(|(i, _, _)| *i == id).count() >= WEIGHTS_KEPT {
        let oldest = all.iter().position(|(i, _, _)| *i == id).expect("counted");
        all.remove(oldest);
    }
    all.push_back(entry);
    &mut all.back_mut().expect("just pushed").2
}

/// The state after each of `blocks`, from one read of the series.
fn first_pass(
    after: &mut Vec<After>,
    blocks: &[Block],
    weight: f64,
    read_all: &ReadAll<'_>,
) -> Result<(), Error> {
    let mut state = Smoother::new(weight);
    let mut in_block = 0u32;
    read_all(&mut |p: Point| {
        let Some(block) = blocks.get(after.len()) else {
            return;
        };
        let smoothed = state.push(p.value);
        in_block += 1;
        if in_block == block.count {
            after.push(After {
                state,
                last: p,
                smoothed,
            });
            in_block = 0;
        }
    })?;
    if after.len() < blocks.len() {
        // The files no longer hold what was read: as a block read back says.
        after.clear();
        return Err(Error::Refused(
            "the run's files hold fewer points than were read (was a file rewritten?)".into(),
        ));
    }
    Ok(())
}

/// The smoothed value at the last point read equal to `p` in the complete blocks, the last
/// candidate block first: from its kept state when `p` is its last point, else read back.
fn in_blocks(
    after: &[After],
    blocks: &[Block],
    p: &Point,
    weight: f64,
    reread: &dyn Fn(&Block) -> Result<Vec<Point>, Error>,
) -> Result<Option<f64>, Error> {
    for i in (0..after.len()).rev() {
        let x = p.step as f64;
        let holds = blocks[i]
            .x_range(Axis::Step)
            .is_some_and(|(lo, hi)| lo <= x && x <= hi);
        if !holds {
            continue;
        }
        if same(&after[i].last, p) {
            return Ok(Some(after[i].smoothed));
        }
        let mut state = i
            .checked_sub(1)
            .map_or(Smoother::new(weight), |k| after[k].state);
        let mut found = None;
        for q in reread(&blocks[i])? {
            let s = state.push(q.value);
            if same(&q, p) {
                found = Some(s);
            }
        }
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}
