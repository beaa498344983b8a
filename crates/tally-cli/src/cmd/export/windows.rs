//! One large event file exported on every core, a bounded window at a time: each window's
//! byte range is split between threads (`scalars_in_parallel_window`), each filling its own
//! [`Segment`]; the window's segments become one row group, encoded while the next window is
//! read. Memory is that of two windows whatever the file's size.

use std::path::Path;

use tally_tfevents::{scalars_in_parallel_window, Interner, ScalarRef};

use super::to_parquet::{ParquetSink, Segment};
use super::TagRule;
use crate::error::CliError;

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
    /// With a tag rule: each tag as read, and what it becomes (its id in `seg.tags` and the
    /// unit scale), or `None` when the rule drops it. Decided once per distinct tag.
    raw: Interner,
    rule_of: Vec<Option<(usize, Option<f64>)>>,
    /// Scalars read, kept or not.
    seen: u64,
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
) -> Result<Windows, CliError> {
    let len = std::fs::metadata(file)
        .map_err(|source| CliError::Io {
            path: file.to_owned(),
            source,
        })?
        .len();
    let trivial = rule.is_trivial();
    let pool = sink.pool.clone();
    let init = |range_bytes: u64| Reading {
        seg: {
            let mut seg = pool.take();
            seg.reserve((range_bytes / MIN_SCALAR_BYTES) as usize);
            seg
        },
        raw: Interner::new(),
        rule_of: Vec::new(),
        seen: 0,
    };
    let visit = |r: &mut Reading, s: ScalarRef<'_>| {
        r.seen += 1;
        if trivial {
            // This thread's reader numbers the window's tags in the order it meets them, as the
            // fresh segment does: a known id needs no second lookup.
            let tag = match s.tag_id {
                Some(id) if id < r.seg.tags.len() => id,
                _ => r.seg.tags.id(s.tag),
            };
            debug_assert_eq!(r.seg.tags.name(tag), Some(s.tag));
            r.seg.push(tag, s.step, s.wall_time, s.value);
            return;
        }
        let raw = r.raw.id(s.tag);
        if raw == r.rule_of.len() {
            let to = rule
                .rename(s.tag)
                .map(|(tag, scale)| (r.seg.tags.id(tag), scale));
            r.rule_of.push(to);
        }
        if let Some((tag, scale)) = r.rule_of[raw] {
            let value = scale.map_or(s.value, |k| s.value * k);
            r.seg.push(tag, s.step, s.wall_time, value);
        }
    };
    let (mut at, mut exported) = (0, 0);
    while at < len {
        let Some((parts, end)) = scalars_in_parallel_window(file, at, WINDOW, threads, init, visit)
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
