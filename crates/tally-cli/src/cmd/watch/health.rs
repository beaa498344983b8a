//! What `tally watch` shows of a followed run's health (docs/contract/health.md "In tally
//! watch").

use std::path::Path;
use tally::health::{Evaluator, Finding, RuleSet, TagSlot};
use tally::Clock;
pub(crate) use tally_read::health::summary_findings;
use tally_tfevents::ScalarEvent;

/// A followed run's health findings: a logger's from its `run_summary.json` (which the logger
/// rewrites with them, its stall timer's included); any other run's from the default rules fed
/// what `watch` reads, as `tally health` feeds them.
#[derive(Debug)]
pub(super) struct Health {
    pub(super) eval: Evaluator,
    slots: std::collections::HashMap<String, TagSlot>,
    /// The run's own file being read: a resumed run's next file starts a segment, so the pause
    /// between them is not a stall.
    pub(super) file: Option<usize>,
    /// Findings already told as a line.
    pub(super) told: usize,
    /// When `run_summary.json` was last read (a logger's run).
    summary_seen: Option<std::time::SystemTime>,
    /// The findings the summary held then.
    pub(super) from_summary: Vec<Finding>,
    /// When (monotonic seconds) the run's end was last judged.
    end_judged: Option<f64>,
}

/// How often a generic run's end is judged for a stall: the default stall is a minute at least,
/// and whether the run is still being written is a scan of `/proc`.
const JUDGE_END_EVERY_S: f64 = 5.0;

impl Default for Health {
    fn default() -> Self {
        Health {
            eval: Evaluator::new(RuleSet::defaults()),
            slots: Default::default(),
            file: None,
            told: 0,
            summary_seen: None,
            from_summary: Vec::new(),
            end_judged: None,
        }
    }
}

impl Health {
    /// Feeds one value read from a generic run.
    pub(super) fn value(&mut self, sc: &ScalarEvent) {
        let slot = match self.slots.get(&sc.tag) {
            Some(s) => *s,
            None => {
                let s = self.eval.tag(&sc.tag);
                self.slots.insert(sc.tag.clone(), s);
                s
            }
        };
        self.eval.step(sc.step, sc.wall_time);
        self.eval.value(slot, sc.step, sc.wall_time, sc.value);
    }

    /// For a generic run still being written (as `tally health` judges it: an open descriptor,
    /// or the live writer its file's name carries), no step since its last for longer than the
    /// stall rule's threshold at `clock`'s wall time is a stall, as `tally health` finds it.
    pub(super) fn judge_end(&mut self, dir: &Path, clock: &dyn Clock) {
        let now = clock.monotonic();
        if self.end_judged.is_some_and(|t| now - t < JUDGE_END_EVERY_S) {
            return;
        }
        self.end_judged = Some(now);
        if tally_read::health::is_live(dir) {
            self.eval.overdue(clock.wall());
        }
    }

    /// The logger's findings as its summary lists them now, read again when the file changed.
    pub(super) fn read_summary(&mut self, dir: &Path) {
        let path = dir.join(tally::run::RUN_SUMMARY_FILE);
        let Ok(modified) = std::fs::metadata(&path).and_then(|m| m.modified()) else {
            return;
        };
        if self.summary_seen == Some(modified) {
            return;
        }
        self.summary_seen = Some(modified);
        self.from_summary = summary_findings(&path);
    }
}
