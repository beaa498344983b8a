//! The tail of every scalar series of a run (its last N values, streamed in constant memory
//! across the run's files), and which kind of name a tag is (canonical, unknown in a canonical
//! group, legacy): what `extract`, `diagnose` and `scaling` average and gate on.

use crate::error::Error;
use crate::scalars::RunScalars;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use tally_schema::legacy::{legacy_rows, retired_match};
use tally_schema::{SchemaError, TagRef};
use tally_tfevents::{Damage, OnCorruption};

/// The last `n` values of every tag, in file order, how many values each tag had, and what
/// the reader found damaged.
#[derive(Debug, Default)]
pub struct Tails {
    /// tag → last n values.
    pub last: BTreeMap<String, VecDeque<f64>>,
    /// tag → number of values seen.
    pub counts: BTreeMap<String, u64>,
    /// The largest step of any scalar.
    pub max_step: Option<i64>,
    /// Truncated tails found, in reading order (a corrupt record is an error instead).
    pub damage: Vec<Damage>,
}

impl Tails {
    /// The mean of the last values of `tag`, if it had any.
    pub fn mean(&self, tag: &str) -> Option<f64> {
        let v = self.last.get(tag)?;
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// Stream a run's `files` (in run order) keeping the last `n` values per tag.
pub fn read_tails(files: &[PathBuf], n: usize) -> Result<Tails, Error> {
    let mut tails = Tails::default();
    let mut reader = RunScalars::new(files.to_vec(), OnCorruption::Error);
    while let Some((_, s)) = reader.next_scalar()? {
        tails.max_step = Some(tails.max_step.map_or(s.step, |m| m.max(s.step)));
        *tails.counts.entry(s.tag.clone()).or_default() += 1;
        let q = tails.last.entry(s.tag).or_default();
        if q.len() == n {
            q.pop_front();
        }
        q.push_back(s.value);
    }
    tails.damage = reader.take_damage();
    Ok(tails)
}

/// Whether `tag` is canonical schema-v1 (closed registry or open family; a user's own metric
/// is not).
pub fn is_canonical(tag: &str) -> bool {
    matches!(
        tally_schema::lookup(tag),
        Ok(TagRef::Metric(_) | TagRef::Family(..))
    )
}

/// Whether `tag` lies in a canonical group but is not a schema tag (a typo, or a tag of a newer
/// schema): a schema-v1 consumer refuses it rather than guess.
pub fn is_unknown_canonical(tag: &str) -> bool {
    matches!(tally_schema::lookup(tag), Err(SchemaError::Unknown { .. }))
}

/// Whether `tag` is a recognised pre-schema tag (in the legacy map or the retired list).
pub fn is_legacy(tag: &str) -> bool {
    legacy_rows(tag).next().is_some() || retired_match(tag).is_some()
}
