//! Grouping over numbered keys (`docs/contract/rft.md` "Keys parsed once"): the input is the
//! distinct key texts plus `(key number, value)` entries in encounter order, so each distinct
//! key is parsed and looked up once, and each value costs an array index instead of hashing
//! its key text. Every level of [`crate::aggregate`] runs on this.

use std::borrow::Cow;
use std::hash::{BuildHasherDefault, Hasher};

use indexmap::IndexMap;

use crate::key::{canonical_key, parse_metric_key, AggType};

/// FxHash (rustc's hasher): the grouping maps hash short metric names, where SipHash's
/// DoS resistance buys nothing and costs most of the grouping time.
#[derive(Default)]
pub(crate) struct FxHasher(u64);

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
            ]));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// An insertion-ordered map with the fast hasher.
pub(crate) type FxIndexMap<K, V> = IndexMap<K, V, BuildHasherDefault<FxHasher>>;

/// One numeric value of a metric dict: the number of its key (an index into the key texts)
/// and `float(value)`. A number that is not below the count of key texts is a caller bug:
/// every function here panics on it.
pub type Entry = (u32, f64);

/// A key not yet given a group.
const UNSET: u32 = u32::MAX;

/// Values grouped in first-appearance order, stored in one buffer (group by group).
pub struct Grouped<G> {
    /// Each group's identity, in the order its first value appeared.
    pub groups: Vec<G>,
    values: Vec<f64>,
    /// `values[starts[g]..starts[g + 1]]` are group `g`'s values, in encounter order.
    starts: Vec<usize>,
}

impl<G> Grouped<G> {
    /// Group `g`'s values in encounter order.
    pub fn values(&self, g: usize) -> &[f64] {
        &self.values[self.starts[g]..self.starts[g + 1]]
    }

    /// `(group, values)` in first-appearance order.
    pub fn iter(&self) -> impl Iterator<Item = (&G, &[f64])> {
        self.groups
            .iter()
            .enumerate()
            .map(|(g, id)| (id, self.values(g)))
    }
}

/// Groups `entries` by `group_of(key number, groups)`, called once per distinct key in first
/// appearance order: it returns the key's group index, pushing the group first if it is new.
fn group_by<G>(
    key_count: usize,
    entries: &[Entry],
    mut group_of: impl FnMut(u32, &mut Vec<G>) -> u32,
) -> Grouped<G> {
    // There are at most as many groups as keys: sized once, no regrowth.
    let mut group_of_key = vec![UNSET; key_count];
    let mut groups: Vec<G> = Vec::with_capacity(key_count);
    let mut counts: Vec<usize> = Vec::with_capacity(key_count);
    // Pass 1: a group per key, and each group's size.
    for &(k, _) in entries {
        let slot = &mut group_of_key[k as usize];
        if *slot == UNSET {
            *slot = group_of(k, &mut groups);
            counts.resize(groups.len(), 0);
        }
        counts[*slot as usize] += 1;
    }
    // Pass 2: the values into one buffer, each group's run contiguous; `counts` becomes
    // each group's next free slot.
    let mut starts = Vec::with_capacity(groups.len() + 1);
    let mut at = 0;
    for c in counts.iter_mut() {
        starts.push(at);
        at += *c;
        *c = at - *c;
    }
    starts.push(at);
    let mut values = vec![0.0; at];
    for &(k, x) in entries {
        let slot = &mut counts[group_of_key[k as usize] as usize];
        values[*slot] = x;
        *slot += 1;
    }
    Grouped {
        groups,
        values,
        starts,
    }
}

/// A group of the run and task levels: its canonical key and the aggregation that decides.
pub struct CanonicalGroup<'k> {
    /// `name` for mean, `name:agg` otherwise.
    pub key: Cow<'k, str>,
    /// The first aggregation seen for this canonical key (it decides for the whole group).
    pub agg: AggType,
    /// The number of the key whose value opened the group.
    pub first: u32,
    /// A key number whose text is exactly the canonical key, if one is in the group: a caller
    /// holding that key's string can reuse it as the output key.
    pub same_text: Option<u32>,
}

/// `group_metrics_by_canonical_key` over numbered keys: groups by canonical key, the first
/// seen aggregation deciding.
pub fn group_canonical<'k, K: AsRef<str>>(
    keys: &'k [K],
    entries: &[Entry],
) -> Grouped<CanonicalGroup<'k>> {
    let mut index: FxIndexMap<Cow<'k, str>, u32> =
        FxIndexMap::with_capacity_and_hasher(keys.len(), Default::default());
    group_by(keys.len(), entries, |k, groups| {
        let text = keys[k as usize].as_ref();
        let (name, agg) = parse_metric_key(text);
        let canonical = canonical_key(name, agg);
        // Only `…:mean` keys differ in text from their canonical key.
        let same = (canonical.len() == text.len()).then_some(k);
        if let Some(&g) = index.get(&canonical) {
            let group: &mut CanonicalGroup<'k> = &mut groups[g as usize];
            group.same_text = group.same_text.or(same);
            return g;
        }
        let g = groups.len() as u32;
        index.insert(canonical.clone(), g);
        groups.push(CanonicalGroup {
            key: canonical,
            agg,
            first: k,
            same_text: same,
        });
        g
    })
}

/// `group_numeric_metrics` over numbered keys: groups by `(name, agg)`.
pub fn group_numeric<'k, K: AsRef<str>>(
    keys: &'k [K],
    entries: &[Entry],
) -> Grouped<(&'k str, AggType)> {
    let mut index: FxIndexMap<(&'k str, AggType), u32> =
        FxIndexMap::with_capacity_and_hasher(keys.len(), Default::default());
    group_by(keys.len(), entries, |k, groups| {
        let id = parse_metric_key(keys[k as usize].as_ref());
        *index.entry(id).or_insert_with(|| {
            groups.push(id);
            groups.len() as u32 - 1
        })
    })
}

/// Numbers the distinct key texts of `(key, value)` pairs in encounter order: the input of
/// the grouping functions, for callers that have texts rather than numbered keys.
pub fn number_keys<'a>(pairs: impl Iterator<Item = (&'a str, f64)>) -> (Vec<&'a str>, Vec<Entry>) {
    let mut index: FxIndexMap<&'a str, ()> = FxIndexMap::default();
    let entries = pairs
        .map(|(key, x)| {
            let (k, _) = index.insert_full(key, ());
            (k as u32, x)
        })
        .collect();
    (index.into_keys().collect(), entries)
}
