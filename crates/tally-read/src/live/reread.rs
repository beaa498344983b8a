//! A held block's points read back from the run's files (`docs/contract/board.md` "Bounded
//! reads"): the records of its byte range, dropped by the same purge-marker cut as when first
//! read, the block's tag kept; the blocks read back last kept, within [`RECENT_BYTES`], so a
//! chart asked again (a followed zoom, every 2 s) does not read them again.

use crate::downsample::blocks::Block;
use crate::downsample::Point;
use crate::error::Error;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tally_tfevents::{open_event_file, open_event_file_at, Interner, OnCorruption};

/// The bytes of points read back that a run keeps: a zoom's blocks (row 6's 1 % zoom: 50 000
/// points, 1.2 MB) several times over.
pub const RECENT_BYTES: usize = 16 << 20;

/// A block read back: its tag and where its records lie.
type Key = (usize, usize, u64, u64);

/// The blocks read back last, the oldest let go first past [`RECENT_BYTES`].
#[derive(Default)]
pub(super) struct Recent {
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    points: HashMap<Key, Arc<Vec<Point>>>,
    /// Oldest first.
    order: VecDeque<Key>,
    bytes: usize,
}

impl Recent {
    /// The points of `block` of tag `id`, kept or read back ([`reread`]).
    pub(super) fn points(
        &self,
        files: &[PathBuf],
        cuts: &[Option<i64>],
        tags: &Interner,
        id: usize,
        block: &Block,
    ) -> Result<Vec<Point>, Error> {
        let key = (id, block.at.file, block.at.lo, block.at.hi);
        if let Some(points) = self.lock().points.get(&key) {
            return Ok(points.to_vec());
        }
        let points = reread(files, cuts, tags, id, block)?;
        let size = |p: &[Point]| std::mem::size_of_val(p);
        let mut kept = self.lock();
        if kept.points.insert(key, Arc::new(points.clone())).is_none() {
            kept.order.push_back(key);
            kept.bytes += size(&points);
        }
        while kept.bytes > RECENT_BYTES {
            let Some(old) = kept.order.pop_front() else {
                break;
            };
            if let Some(p) = kept.points.remove(&old) {
                kept.bytes -= size(&p);
            }
        }
        Ok(points)
    }

    /// The bytes of the points kept.
    pub(super) fn bytes(&self) -> usize {
        self.lock().bytes
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The points of `block` of tag `id` (numbered by `tags`), in reading order, from `files` (the
/// run's, each with the step its later files' purge markers cut it at, `cuts`).
pub(super) fn reread(
    files: &[PathBuf],
    cuts: &[Option<i64>],
    tags: &Interner,
    id: usize,
    block: &Block,
) -> Result<Vec<Point>, Error> {
    let path = &files[block.at.file];
    let reader = match block.at.lo {
        0 => open_event_file(path)?,
        at => open_event_file_at(path, at)?,
    };
    // As first read: a corrupt record in the range is skipped again.
    let mut scalars = reader
        .with_on_corruption(OnCorruption::Skip)
        .into_scalars_with_tags(tags.clone());
    let cut = cuts.get(block.at.file).copied().flatten();
    let mut out = Vec::with_capacity(block.count as usize);
    while scalars.events().records().position() < block.at.hi && scalars.advance_event()? {
        let event = scalars.event();
        if cut.is_some_and(|c| event.step >= c) {
            continue;
        }
        for &(tag, value) in event.scalars() {
            if tag == id {
                out.push(Point {
                    step: event.step,
                    wall_time: event.wall_time,
                    value,
                });
            }
        }
    }
    if out.len() != block.count as usize {
        // The bytes no longer hold what was read from them: the file was rewritten in place.
        return Err(Error::Refused(format!(
            "{}: bytes {} to {} held {} points of this tag when read and hold {} now (was the \
             file rewritten?)",
            path.display(),
            block.at.lo,
            block.at.hi,
            block.count,
            out.len()
        )));
    }
    Ok(out)
}
