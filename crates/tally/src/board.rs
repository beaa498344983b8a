//! The latest value of every scalar tag of a run shown without a schema: `tally watch` of a
//! run another tool wrote (tensorboardX, torch, stable-baselines3) keeps here what its generic
//! dashboard needs beyond the 2 s window (docs/contract/panel.md "The generic dashboard").
//!
//! The window holds only the last 2 seconds; a tag logged once a minute would vanish from a
//! panel built from it alone, so each tag's last value and when it came are kept here.

use crate::window::WINDOW_SECS;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// A tag's newest value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latest {
    /// The value.
    pub value: f64,
    /// Its step.
    pub step: i64,
    /// When it arrived, seconds on the run's clock.
    pub t: f64,
}

/// Every tag's newest value, and the step axis's recent progress.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TagBoard {
    /// Tag → its newest value.
    pub tags: BTreeMap<Arc<str>, Latest>,
    /// (time, step) each time the largest step grew: those of the last 2 s, at least two.
    steps: VecDeque<(f64, i64)>,
}

impl TagBoard {
    /// Record `value` of `tag` at `step`, arriving at `t`.
    pub fn record(&mut self, tag: &str, value: f64, step: i64, t: f64) {
        let latest = Latest { value, step, t };
        match self.tags.get_mut(tag) {
            Some(old) => *old = latest,
            None => {
                self.tags.insert(Arc::from(tag), latest);
            }
        }
        if self.steps.back().is_none_or(|(_, s)| step > *s) {
            self.steps.push_back((t, step));
            while self.steps.len() > 2 && self.steps[0].0 < t - WINDOW_SECS {
                self.steps.pop_front();
            }
        }
    }

    /// Forget what a purge marker at `from_step` dropped (docs/contract/consumers.md
    /// "Following a run: tally watch"): the newest value of each tag `purged` names when it is
    /// at `from_step` or later (the tag leaves the board until it is written again: older
    /// values are not kept), and the step axis's points from there on.
    pub fn purge(&mut self, from_step: i64, purged: impl Fn(&str) -> bool) {
        self.tags
            .retain(|tag, latest| latest.step < from_step || !purged(tag));
        self.steps.retain(|(_, step)| *step < from_step);
    }

    /// The largest step seen.
    pub fn step(&self) -> Option<i64> {
        self.steps.back().map(|(_, s)| *s)
    }

    /// Steps per second over the step points of the last 2 s, or between the last two points
    /// when the step grows more slowly than that; `None` until it has grown.
    pub fn steps_per_sec(&self) -> Option<f64> {
        let (t0, s0) = *self.steps.front()?;
        let (t1, s1) = *self.steps.back()?;
        (t1 > t0 && s1 > s0).then(|| (s1 - s0) as f64 / (t1 - t0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_purge_forgets_the_newest_values_and_steps_from_its_step_on() {
        let mut b = TagBoard::default();
        b.record("a", 1.0, 5, 0.0);
        b.record("b", 2.0, 10, 1.0);
        b.record("sub/c", 3.0, 10, 1.0);
        b.purge(8, |tag| !tag.starts_with("sub/"));
        assert_eq!(
            b.tags.keys().map(|k| &**k).collect::<Vec<_>>(),
            ["a", "sub/c"]
        );
        assert_eq!(b.step(), Some(5));
        // The new session's steps count again from the marker.
        b.record("b", 4.0, 8, 2.0);
        assert_eq!(b.step(), Some(8));
        assert_eq!(b.tags["b"].value, 4.0);
    }

    #[test]
    fn the_rate_spans_the_last_two_seconds_of_step_growth() {
        let mut b = TagBoard::default();
        assert_eq!(b.steps_per_sec(), None);
        b.record("a", 1.0, 0, 0.0);
        b.record("b", 2.0, 0, 0.0);
        assert_eq!(b.steps_per_sec(), None, "one step point has no rate");
        b.record("a", 3.0, 100, 10.0);
        // Two points 10 s apart: the rate between them, however old the first.
        assert_eq!(b.steps_per_sec(), Some(10.0));
        b.record("a", 4.0, 300, 11.0);
        b.record("a", 5.0, 500, 12.0);
        // Points at 10, 11, 12: the one at 0 drops, the one at 10 is exactly 2 s old and stays.
        assert_eq!(b.steps_per_sec(), Some(200.0));
        b.record("a", 6.0, 700, 12.5);
        // 10 is now older than 12.5 − 2: from 11.
        assert_eq!(b.steps_per_sec(), Some(400.0 / 1.5));
        assert_eq!(b.step(), Some(700));
        assert_eq!(b.tags["a"].value, 6.0);
        assert_eq!(
            b.tags["b"],
            Latest {
                value: 2.0,
                step: 0,
                t: 0.0
            }
        );
    }
}
