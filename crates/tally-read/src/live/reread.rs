//! A held block's points read back from the run's files (`docs/contract/board.md` "Bounded
//! reads"): the records of its byte range, dropped by the same purge-marker cut as when first
//! read, the block's tag kept.

use crate::downsample::blocks::Block;
use crate::downsample::Point;
use crate::error::Error;
use std::path::PathBuf;
use tally_tfevents::{open_event_file, open_event_file_at, Interner};

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
    let mut scalars = reader.into_scalars_with_tags(tags.clone());
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
