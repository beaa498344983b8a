//! One large event file exported on every core, a bounded window at a time: each window's
//! byte range is split between threads (`events_in_parallel_window`), each filling its own
//! [`Segment`]; the window's segments become one row group, encoded while the next window is
//! read. Memory is that of two windows whatever the file's size.

use std::path::Path;

use tally_tfevents::parallel::events_in_parallel_window;
use tally_tfevents::scalar_fast::WireScalars;

use super::rule::TagRule;
use super::to_parquet::{ParquetSink, Segment};
use crate::error::Error;

/// Bytes of the file per window (all threads together): about 140 000 rows of 10-tag events,
/// 4 MB of columns.
const WINDOW: u64 = 4 << 20;

/// The fewest bytes one scalar takes in an event (a value's field, a one-byte tag, a float).
const MIN_SCALAR_BYTES: u64 = 10;

/// Below this a file is read by one thread: starting threads would cost more than they save.
pub(super) const PARALLEL_FILE_BYTES: u64 = 8 << 20;

/// One reading thread's state for a window.
struct Reading {
    seg: Segment,
    /// What each tag, by the reader's id, becomes: decided on its first row (the tag rule, and
    /// its id in `seg.tags`, which so numbers tags in the order rows first name them).
    to: Vec<Target>,
    /// Scalars read, kept or not.
    seen: u64,
}

#[derive(Clone, Copy)]
enum Target {
    /// Not met yet.
    Unseen,
    /// Not exported.
    Dropped,
    /// Exported as this tag of the segment, its values scaled by the factor if any.
    Kept(usize, Option<f64>),
}

impl Reading {
    /// What the reader's tag `id` (named by `event`) becomes under `rule`.
    #[inline]
    fn target(&mut self, id: usize, event: &WireScalars, rule: &TagRule<'_>) -> Target {
        match self.to.get(id) {
            Some(&t @ (Target::Dropped | Target::Kept(..))) => t,
            _ => self.first_sight(id, event, rule),
        }
    }

    #[cold]
    fn first_sight(&mut self, id: usize, event: &WireScalars, rule: &TagRule<'_>) -> Target {
        let renamed = event.tags().name(id).and_then(|name| rule.rename(name));
        let t = renamed.map_or(Target::Dropped, |(tag, scale)| {
            Target::Kept(self.seg.tags.id(tag), scale)
        });
        if self.to.len() <= id {
            self.to.resize(id + 1, Target::Unseen);
        }
        self.to[id] = t;
        t
    }
}

/// How far [`export_windows`] got.
pub(super) enum Windows {
    /// Every scalar of the file is exported.
    Done,
    /// A window could not be read in parallel (damage, or record boundaries in doubt): this
    /// many scalars from the start are exported, the rest is the sequential reader's.
    Stopped { exported_scalars: u64 },
}

/// Exports `file` (one run, already started on `sink`) window by window on `threads` threads,
/// calling `progress` with each window's end offset.
pub(super) fn export_windows(
    file: &Path,
    threads: usize,
    rule: &TagRule<'_>,
    sink: &mut ParquetSink,
    mut progress: impl FnMut(u64, u64),
) -> Result<Windows, Error> {
    let len = std::fs::metadata(file)
        .map_err(|source| Error::Io {
            path: file.to_owned(),
            source,
        })?
        .len();
    let pool = sink.pool.clone();
    let init = |range_bytes: u64| Reading {
        seg: {
            let mut seg = pool.take();
            seg.reserve((range_bytes / MIN_SCALAR_BYTES) as usize);
            seg
        },
        to: Vec::new(),
        seen: 0,
    };
    // An event's scalars share its step and wall time: the segment takes them once.
    let visit = |r: &mut Reading, event: &WireScalars| {
        r.seen += event.len() as u64;
        let mut kept = 0;
        for &(id, value) in event.scalars() {
            if let Target::Kept(tag, scale) = r.target(id, event, rule) {
                r.seg.push_value(tag, scale.map_or(value, |k| value * k));
                kept += 1;
            }
        }
        r.seg.push_rows(event.step, event.wall_time, kept);
    };
    let (mut at, mut exported) = (0, 0);
    while at < len {
        let Some((parts, end)) = events_in_parallel_window(file, at, WINDOW, threads, init, visit)
        else {
            return Ok(Windows::Stopped {
                exported_scalars: exported,
            });
        };
        exported += parts.iter().map(|p| p.seen).sum::<u64>();
        let rows: u64 = parts.iter().map(|p| p.seg.len() as u64).sum();
        sink.window(parts.into_iter().map(|p| p.seg).collect())?;
        progress(end, rows);
        at = end;
    }
    Ok(Windows::Done)
}
