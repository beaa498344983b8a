//! `StepValues`: one step's canonical values, in submission order and indexed by registry spec.
//!
//! Resolution fills it once; everything derived from the step (timelines, summary figures)
//! reads it by spec without a second index or a per-logger scratch array.

use crate::tag::Tag;
use rustc_hash::FxHashSet;
use tally_schema::{spec_index, MetricSpec, METRIC_COUNT};

/// How the event file holds a value: TensorBoard scalars are float32 (`simple_value`)
/// (docs/contract/step.md "Input bounds").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// A finite float32 (zero included), normal or exactly zero.
    Finite,
    /// NaN or ±inf once stored: a NaN or infinite value, or a finite one beyond float32's range.
    NonFinite,
    /// A non-zero value stored as a float32 subnormal or as zero (precision lost or all of it).
    Underflow,
}

impl Stored {
    /// How float32 holds `v`.
    pub fn of(v: f64) -> Stored {
        // The cast is exactly what the writer stores: out of range rounds to ±inf.
        let f = v as f32;
        if !f.is_finite() {
            Stored::NonFinite
        } else if v != 0.0 && f.abs() < f32::MIN_POSITIVE {
            Stored::Underflow
        } else {
            Stored::Finite
        }
    }

    /// `v` when the file holds it as a finite number, else `None` (what the summary shows).
    pub fn finite(v: f64) -> Option<f64> {
        (Stored::of(v) != Stored::NonFinite).then_some(v)
    }
}

/// How many of a step's values the event file holds as non-finite, and as underflowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OddValues {
    /// Values stored as NaN or ±inf.
    pub nonfinite: u64,
    /// Non-zero values stored as a subnormal or zero.
    pub underflow: u64,
}

impl OddValues {
    /// Count `v`.
    pub fn count(&mut self, v: f64) {
        match Stored::of(v) {
            Stored::Finite => {}
            Stored::NonFinite => self.nonfinite += 1,
            Stored::Underflow => self.underflow += 1,
        }
    }
}

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
    /// The interned addresses of the named entries once the step holds [`NAMED_SCAN`] values:
    /// a repeat is then found by hash, not by a scan of every earlier value (registry values
    /// included), which made a step of many values quadratic in them.
    seen: FxHashSet<usize>,
    /// Whether `seen` holds every named entry (it is filled once, when first needed).
    hashed: bool,
}

/// Values up to which a named repeat is found by scanning them (cheaper than hashing for a
/// short step).
const NAMED_SCAN: usize = 32;

impl Default for StepValues {
    fn default() -> Self {
        StepValues::with_capacity(0)
    }
}

impl StepValues {
    /// An empty set with room for `n` values.
    pub fn with_capacity(n: usize) -> Self {
        StepValues::with_buffer(Vec::new(), n)
    }

    /// An empty set built in `buf` (a previous step's, emptied here), with room for `n` values:
    /// a steady-state step reuses its buffers instead of allocating.
    pub fn with_buffer(mut buf: Vec<(Tag, f64)>, n: usize) -> Self {
        buf.clear();
        buf.reserve(n);
        StepValues {
            entries: buf,
            by_spec: [None; METRIC_COUNT],
            user: 0,
            seen: FxHashSet::default(),
            hashed: false,
        }
    }

    /// Add a registry value; a spec given twice is refused and nothing is added.
    #[inline]
    pub fn push_spec(&mut self, spec: &'static MetricSpec, v: f64) -> Result<(), Duplicate> {
        let slot = &mut self.by_spec[spec_index(spec).expect("specs come from the registry")];
        if slot.is_some() {
            return Err(Duplicate);
        }
        *slot = Some(v);
        self.entries.push((Tag::Spec(spec), v));
        Ok(())
    }

    /// Add a family, free-namespace or user value; a tag given twice is refused. Named tags
    /// come from one [`crate::tag::FamilyInterner`], which holds one `Arc` per tag text, so a
    /// pointer comparison finds a repeat without comparing text.
    pub fn push_named(&mut self, tag: Tag, v: f64) -> Result<(), Duplicate> {
        debug_assert!(tag.spec().is_none(), "registry tags go through push_spec");
        if !self.hashed && self.entries.len() < NAMED_SCAN {
            if self.entries.iter().any(|(t, _)| t.same_interned(&tag)) {
                return Err(Duplicate);
            }
        } else {
            if !self.hashed {
                self.hashed = true;
                let named = self.entries.iter().filter_map(|(t, _)| t.interned_addr());
                self.seen.extend(named);
            }
            let addr = tag.interned_addr().expect("a named tag");
            if !self.seen.insert(addr) {
                return Err(Duplicate);
            }
        }
        debug_assert!(
            !self
                .entries
                .iter()
                .any(|(t, _)| t.spec().is_none() && t.as_str() == tag.as_str()),
            "{} was not interned once",
            tag.as_str()
        );
        self.user += usize::from(matches!(tag, Tag::User(_)));
        self.entries.push((tag, v));
        Ok(())
    }

    /// Lend this step the set a previous step's many named values filled (emptied here), so a
    /// steady-state step of many user metrics allocates none.
    pub fn lend_seen(&mut self, mut seen: FxHashSet<usize>) {
        seen.clear();
        self.seen = seen;
        self.hashed = false;
    }

    /// Take the set back for the next step.
    pub fn take_seen(&mut self) -> FxHashSet<usize> {
        std::mem::take(&mut self.seen)
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
