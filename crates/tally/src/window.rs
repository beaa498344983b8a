//! The terminal's 2-second time-sliding window of rank-reduced samples.
//!
//! The panel shows two-second time-sliding means; `Avg 2s (n=…)` counts the rank-reduced
//! samples in the window (docs/contract/panel.md "The 2-second window"). Samples are summed
//! into time slots of [`SLOT_SECS`] (per key: sum, count, newest time), so the window holds
//! the whole 2 s at any step rate in bounded memory. A slot leaves when its newest sample is
//! strictly older than `newest − 2.0`: with one sample per slot (below 256 it/s) that is the
//! per-sample rule exactly, and at any rate the window covers at least 2 s and at most one
//! slot more. The window moves only when a sample arrives, a key missing from some samples is
//! averaged over the samples that have it, and percentages are computed afterwards from the
//! means (ratio of means).

use crate::tag::Tag;
use std::collections::{HashMap, VecDeque};

/// Window length in seconds.
pub const WINDOW_SECS: f64 = 2.0;
/// Time slots per window: the window's resolution.
pub const SLOTS: usize = 512;
/// One slot's width, seconds (a binary fraction, so slot edges are exact).
pub const SLOT_SECS: f64 = WINDOW_SECS / SLOTS as f64;
/// Evicted slots' key lists kept for new slots (a slot is evicted about as often as one opens).
const SPARE_CAP: usize = 4;

/// One rank-reduced iteration as the terminal sees it.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Monotonic arrival time, seconds.
    pub t: f64,
    /// The iteration.
    pub iteration: u64,
    /// Canonical and terminal-only values.
    pub values: Vec<(Tag, f64)>,
}

/// The per-key means of the samples in the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowSnapshot {
    /// Samples in the window.
    pub n: usize,
    /// The newest sample's iteration.
    pub iteration: u64,
    /// Per-key mean over the samples that have the key.
    pub means: HashMap<Tag, f64>,
    /// For each user metric in the window, the time of the newest sample holding it (the
    /// panel lists the most recently logged first).
    pub user_updated: HashMap<Tag, f64>,
}

impl WindowSnapshot {
    /// The mean of `tag`, if any sample in the window had it.
    pub fn get(&self, tag: &str) -> Option<f64> {
        self.means.get(tag).copied()
    }
}

/// One key's partial sum in a slot.
#[derive(Debug, Clone)]
struct Entry {
    tag: Tag,
    sum: f64,
    n: u32,
    /// Arrival of the newest sample holding the key.
    t_last: f64,
}

/// The samples that arrived within one slot of time, summed per key.
#[derive(Debug, Clone)]
struct Slot {
    /// `floor(t / SLOT_SECS)` of its samples.
    index: i64,
    /// Arrival of its newest sample.
    t_last: f64,
    /// Its newest sample's iteration.
    iteration: u64,
    /// Samples summed in.
    n: usize,
    entries: Vec<Entry>,
}

impl Slot {
    /// Add a sample's values; keys usually come in the same order each step, so the entry at
    /// the value's own position is tried first.
    fn add(&mut self, values: &mut Vec<(Tag, f64)>, t: f64) {
        // A slot's first sample opens one entry per value without looking any up: searching
        // the entries added so far made that step quadratic in its values. (A key repeated in
        // a sample, were there one, would make two entries, which `snapshot` sums as one.)
        if self.n == 0 && self.entries.is_empty() {
            self.entries.extend(values.drain(..).map(|(tag, v)| Entry {
                tag,
                sum: v,
                n: 1,
                t_last: t,
            }));
            return;
        }
        for (k, (tag, v)) in values.drain(..).enumerate() {
            let at = match self.entries.get(k) {
                Some(e) if e.tag == tag => Some(k),
                _ => self.entries.iter().position(|e| e.tag == tag),
            };
            match at {
                Some(i) => {
                    let e = &mut self.entries[i];
                    e.sum += v;
                    e.n += 1;
                    e.t_last = t;
                }
                None => self.entries.push(Entry {
                    tag,
                    sum: v,
                    n: 1,
                    t_last: t,
                }),
            }
        }
    }
}

/// A time-sliding window.
#[derive(Debug, Clone)]
pub struct TimeWindow {
    span: f64,
    slot_secs: f64,
    slots: VecDeque<Slot>,
    /// Samples in the window.
    n: usize,
    /// Emptied key lists of evicted slots, reused so a steady-state step allocates none.
    spare_entries: Vec<Vec<Entry>>,
    /// The last sample's emptied value buffer, for the next step to fill.
    spare_values: Option<Vec<(Tag, f64)>>,
}

impl Default for TimeWindow {
    fn default() -> Self {
        TimeWindow::new(WINDOW_SECS, SLOT_SECS)
    }
}

impl TimeWindow {
    /// A window of `span` seconds summed in slots of `slot_secs`.
    pub fn new(span: f64, slot_secs: f64) -> Self {
        TimeWindow {
            span,
            slot_secs,
            slots: VecDeque::new(),
            n: 0,
            spare_entries: Vec::with_capacity(SPARE_CAP),
            spare_values: None,
        }
    }

    /// Add a sample and evict the slots older than the span, measured from its arrival.
    pub fn push(&mut self, mut sample: Sample) {
        let now = sample.t;
        while self
            .slots
            .front()
            .is_some_and(|s| s.t_last < now - self.span)
        {
            if let Some(mut s) = self.slots.pop_front() {
                self.n -= s.n;
                if self.spare_entries.len() < SPARE_CAP {
                    s.entries.clear();
                    self.spare_entries.push(s.entries);
                }
            }
        }
        let index = (now / self.slot_secs).floor() as i64;
        // A clock that never goes back opens slots in order; an earlier time joins the newest.
        if self.slots.back().is_none_or(|s| index > s.index) {
            let entries = self.spare_entries.pop().unwrap_or_default();
            self.slots.push_back(Slot {
                index,
                t_last: now,
                iteration: sample.iteration,
                n: 0,
                entries,
            });
        }
        if let Some(slot) = self.slots.back_mut() {
            slot.add(&mut sample.values, now);
            slot.n += 1;
            slot.t_last = slot.t_last.max(now);
            slot.iteration = sample.iteration;
            self.n += 1;
        }
        self.spare_values = Some(sample.values);
    }

    /// The last sample's emptied value buffer, if not taken yet (for the next step to fill).
    pub fn take_spare(&mut self) -> Option<Vec<(Tag, f64)>> {
        self.spare_values.take()
    }

    /// Number of samples in the window.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Number of time slots held (at most `SLOTS + 1` for the default window).
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Per-key means over the window.
    pub fn snapshot(&self) -> WindowSnapshot {
        // Per key: sum, count, and the newest slot's time. A key usually sits at the same
        // position in every slot, so that position is tried before the hash index: hashing
        // every entry of up to 512 slots made a frame's snapshot (taken under the lock the
        // step also takes) cost the panel thread more than drawing the frame.
        let mut acc: Vec<(Tag, f64, u64, f64)> = Vec::new();
        let mut index: HashMap<Tag, usize> = HashMap::new();
        for s in &self.slots {
            for (k, e) in s.entries.iter().enumerate() {
                let i = match acc.get(k) {
                    Some(a) if a.0 == e.tag => k,
                    _ => *index.entry(e.tag.clone()).or_insert_with(|| {
                        acc.push((e.tag.clone(), 0.0, 0, e.t_last));
                        acc.len() - 1
                    }),
                };
                let a = &mut acc[i];
                a.1 += e.sum;
                a.2 += u64::from(e.n);
                a.3 = e.t_last;
            }
        }
        let user_updated = acc
            .iter()
            .filter(|a| matches!(a.0, Tag::User(_)))
            .map(|a| (a.0.clone(), a.3))
            .collect();
        WindowSnapshot {
            n: self.n,
            iteration: self.slots.back().map_or(0, |s| s.iteration),
            means: acc
                .into_iter()
                .map(|(k, sum, n, _)| (k, sum / n as f64))
                .collect(),
            user_updated,
        }
    }
}
