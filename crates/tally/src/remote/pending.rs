//! What a remote sink has not received yet ([`Pending`]), scanned from its cursor.

use super::cursor::Cursor;
use super::streams::Streams;
use crate::error::Result;
use std::collections::BTreeSet;
use std::path::PathBuf;
use tally_tfevents::Damage;

/// What a sink has not received yet: the rows of the run's files after its cursor.
#[derive(Debug, Default)]
pub struct Pending {
    /// Rows (steps) to send.
    pub rows: u64,
    /// The first and last of their steps.
    pub steps: Option<(i64, i64)>,
    /// The scalar tags they hold.
    pub tags: BTreeSet<String>,
    /// Truncated tails read past.
    pub damage: Vec<Damage>,
}

/// The rows of `files` (a run's own, in run order, read to their current end) and of the
/// run's sub-runs (docs/contract/remote-sinks.md "Sub-runs") after `cursor`.
pub fn scan_pending(files: &[PathBuf], cursor: &Cursor) -> Result<Pending> {
    let Some(run_dir) = files.first().and_then(|f| f.parent()) else {
        return Ok(Pending::default());
    };
    let mut streams = Streams::new(run_dir, files.to_vec(), cursor)?;
    let mut p = Pending::default();
    streams.each_row(true, cursor, |row| {
        p.rows += 1;
        p.steps = Some(p.steps.map_or((row.step, row.step), |(a, _)| (a, row.step)));
        p.tags
            .extend(row.scalars.iter().map(|(t, _)| t.as_str().to_owned()));
    })?;
    p.damage = streams.take_damage();
    Ok(p)
}
