//! The terminal's 2-second time-sliding window of rank-reduced samples.
//!
//! The panel shows two-second time-sliding means; `Avg 2s (n=…)` counts the rank-reduced
//! learner samples in the window (docs/contract/panel.md). A sample is evicted when
//! `sample.t < now − 2.0` (strict), the window moves only when a sample arrives, a key
//! missing from some samples is averaged over the samples that have it, and percentages are
//! computed afterwards from the means (ratio of means).

use crate::tag::Tag;
use std::collections::{HashMap, VecDeque};

/// Window length in seconds.
pub const WINDOW_SECS: f64 = 2.0;
/// At most this many samples are kept, however fast the loop runs.
pub const WINDOW_CAP: usize = 512;
/// Evicted samples' value buffers kept for the next steps to fill (a step evicts about one).
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

/// A time-sliding window.
#[derive(Debug, Clone)]
pub struct TimeWindow {
    span: f64,
    cap: usize,
    samples: VecDeque<Sample>,
    /// Emptied value buffers of evicted samples, reused so a steady-state step allocates none.
    spare: Vec<Vec<(Tag, f64)>>,
}

impl Default for TimeWindow {
    fn default() -> Self {
        TimeWindow::new(WINDOW_SECS, WINDOW_CAP)
    }
}

impl TimeWindow {
    /// A window of `span` seconds holding at most `cap` samples.
    pub fn new(span: f64, cap: usize) -> Self {
        TimeWindow {
            span,
            cap,
            samples: VecDeque::new(),
            spare: Vec::with_capacity(SPARE_CAP),
        }
    }

    /// Add a sample and evict those older than the span, measured from its arrival.
    pub fn push(&mut self, sample: Sample) {
        let now = sample.t;
        self.samples.push_back(sample);
        while self.samples.front().is_some_and(|s| s.t < now - self.span) {
            self.evict();
        }
        while self.samples.len() > self.cap {
            self.evict();
        }
    }

    fn evict(&mut self) {
        if let Some(mut s) = self.samples.pop_front() {
            if self.spare.len() < SPARE_CAP {
                s.values.clear();
                self.spare.push(s.values);
            }
        }
    }

    /// An evicted sample's emptied value buffer, if one is kept (for the next step to fill).
    pub fn take_spare(&mut self) -> Option<Vec<(Tag, f64)>> {
        self.spare.pop()
    }

    /// Number of samples in the window.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Per-key means over the window.
    pub fn snapshot(&self) -> WindowSnapshot {
        let mut acc: HashMap<Tag, (f64, u32)> = HashMap::new();
        let mut user_updated: HashMap<Tag, f64> = HashMap::new();
        for s in &self.samples {
            for (tag, v) in &s.values {
                let e = acc.entry(tag.clone()).or_insert((0.0, 0));
                e.0 += v;
                e.1 += 1;
                if matches!(tag, Tag::User(_)) {
                    user_updated.insert(tag.clone(), s.t);
                }
            }
        }
        WindowSnapshot {
            n: self.samples.len(),
            iteration: self.samples.back().map_or(0, |s| s.iteration),
            means: acc
                .into_iter()
                .map(|(k, (sum, n))| (k, sum / f64::from(n)))
                .collect(),
            user_updated,
        }
    }
}
