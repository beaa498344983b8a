//! `StepValues`: one step's canonical values, in submission order and indexed by registry spec.
//!
//! Resolution fills it once; everything derived from the step (timelines, summary figures)
//! reads it by spec without a second index or a per-logger scratch array.

use crate::tag::Tag;
use tally_schema::{spec_index, MetricSpec, METRIC_COUNT};

/// A registry spec was already given in this step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Duplicate;

/// One step's canonical values.
#[derive(Debug, Clone)]
pub struct StepValues {
    /// Values in submission order (the order they are persisted in).
    entries: Vec<(Tag, f64)>,
    /// Registry values by spec index.
    by_spec: [Option<f64>; METRIC_COUNT],
    /// How many entries are user metrics (most steps have none, and skip looking for them).
    user: usize,
}

impl Default for StepValues {
    fn default() -> Self {
        StepValues::with_capacity(0)
    }
}

impl StepValues {
    /// An empty set with room for `n` values.
    pub fn with_capacity(n: usize) -> Self {
        StepValues {
            entries: Vec::with_capacity(n),
            by_spec: [None; METRIC_COUNT],
            user: 0,
        }
    }

    /// Add a registry value; a spec given twice is refused and nothing is added.
    pub fn push_spec(&mut self, spec: &'static MetricSpec, v: f64) -> Result<(), Duplicate> {
        let slot = &mut self.by_spec[spec_index(spec).expect("specs come from the registry")];
        if slot.is_some() {
            return Err(Duplicate);
        }
        *slot = Some(v);
        self.entries.push((Tag::Spec(spec), v));
        Ok(())
    }

    /// Add a family or free-namespace value; `tag` text given twice is refused.
    pub fn push_named(&mut self, tag: Tag, v: f64) -> Result<(), Duplicate> {
        debug_assert!(tag.spec().is_none(), "registry tags go through push_spec");
        if self
            .entries
            .iter()
            .any(|(t, _)| t.spec().is_none() && t.as_str() == tag.as_str())
        {
            return Err(Duplicate);
        }
        self.user += usize::from(matches!(tag, Tag::User(_)));
        self.entries.push((tag, v));
        Ok(())
    }

    /// How many of the values are user metrics.
    pub fn user_count(&self) -> usize {
        self.user
    }

    /// The value of a registry spec, if given.
    pub fn get(&self, spec: &MetricSpec) -> Option<f64> {
        spec_index(spec).and_then(|i| self.by_spec[i])
    }

    /// Every value in submission order.
    pub fn entries(&self) -> &[(Tag, f64)] {
        &self.entries
    }

    /// Take the values out, in submission order.
    pub fn into_entries(self) -> Vec<(Tag, f64)> {
        self.entries
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no value was given.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
