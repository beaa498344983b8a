//! What `tally watch` shows of a followed run's health (docs/contract/health.md "In tally
//! watch").

use std::path::Path;
use tally::health::{Evaluator, Finding, RuleSet, TagSlot};
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
}

impl Default for Health {
    fn default() -> Self {
        Health {
            eval: Evaluator::new(RuleSet::defaults()),
            slots: Default::default(),
            file: None,
            told: 0,
            summary_seen: None,
            from_summary: Vec::new(),
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
