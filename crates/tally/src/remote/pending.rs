//! What a remote sink has not received yet ([`Pending`]), scanned from its cursor.

use super::cursor::Cursor;
use super::rows::RowReader;
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

/// The rows of `files` (in run order, read to their current end) after `cursor`.
pub fn scan_pending(files: &[PathBuf], cursor: &Cursor) -> Result<Pending> {
    let at = cursor.position(files)?;
    let mut reader = RowReader::new(files.to_vec(), at);
    let mut p = Pending::default();
    loop {
        let row = reader.next(true)?;
        let Some((row, _)) = row else { break };
        p.rows += 1;
        p.steps = Some(p.steps.map_or((row.step, row.step), |(a, _)| (a, row.step)));
        p.tags
            .extend(row.scalars.iter().map(|(t, _)| t.as_str().to_owned()));
    }
    p.damage = std::mem::take(&mut reader.damage);
    Ok(p)
}
