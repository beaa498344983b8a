//! [`TagRule`]: what a run's tags become in an export: renamed from legacy names with their
//! unit scale when migrating, kept only when they match a glob.

use tally_schema::legacy::glob_match;
use tally_schema::{legacy_mapping, Profile};
use tally_tfevents::ScalarRef;

/// What a run's tags become: renamed from legacy names (with their unit scale) when migrating,
/// and kept only when they match a glob, if any was given.
pub(super) struct TagRule<'o> {
    pub(super) migrate: Option<Profile>,
    pub(super) globs: &'o [String],
}

impl TagRule<'_> {
    /// Every tag kept as it is.
    pub(super) fn is_trivial(&self) -> bool {
        self.migrate.is_none() && self.globs.is_empty()
    }

    /// The exported name of `tag` and the factor its values are scaled by, or `None` when the
    /// tag is not exported.
    pub(super) fn rename<'t>(&self, tag: &'t str) -> Option<(&'t str, Option<f64>)> {
        let (tag, scale) = match self.migrate.and_then(|p| legacy_mapping(tag, Some(p))) {
            Some(row) => (row.new, Some(row.scale)),
            None => (tag, None),
        };
        let kept = self.globs.is_empty() || self.globs.iter().any(|g| glob_match(g, tag));
        kept.then_some((tag, scale))
    }

    pub(super) fn apply<'a>(&self, s: ScalarRef<'a>) -> Option<ScalarRef<'a>> {
        if self.is_trivial() {
            return Some(s);
        }
        let (tag, scale) = self.rename(s.tag)?;
        Some(ScalarRef {
            tag,
            // A renamed tag is not the one the reader numbered.
            tag_id: if scale.is_some() { None } else { s.tag_id },
            value: scale.map_or(s.value, |k| s.value * k),
            ..s
        })
    }
}
