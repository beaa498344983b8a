//! What `tally watch` shows of a followed run's health (docs/contract/health.md "In tally
//! watch").

use std::path::Path;
use tally::health::{Evaluator, Finding, RuleKind, RuleSet, TagSlot};
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

/// The findings a `run_summary.json` lists (none when it cannot be read).
pub(crate) fn summary_findings(path: &Path) -> Vec<Finding> {
    // Read as every artefact is: a special file in its place is refused, never waited on.
    tally_read::meta::read_json(path)
        .ok()
        .flatten()
        .and_then(|doc| {
            let list = doc.get("health")?.as_array()?.clone();
            Some(list.iter().filter_map(finding_of).collect())
        })
        .unwrap_or_default()
}

/// A finding as `run_summary.json` lists it (docs/contract/run-artifacts.md "Run summary").
fn finding_of(v: &serde_json::Value) -> Option<Finding> {
    let last_value = match &v["last_value"] {
        serde_json::Value::Number(n) => n.as_f64()?,
        serde_json::Value::String(s) if s == "NaN" => f64::NAN,
        serde_json::Value::String(s) if s == "Infinity" => f64::INFINITY,
        serde_json::Value::String(s) if s == "-Infinity" => f64::NEG_INFINITY,
        _ => return None,
    };
    Some(Finding {
        rule: RuleKind::parse(v["rule"].as_str()?)?,
        tag: v["tag"].as_str().unwrap_or_default().to_owned(),
        first_step: v["first_step"].as_i64()?,
        last_step: v["last_step"].as_i64()?,
        count: v["count"].as_u64()?,
        last_value,
        message: v["message"].as_str()?.to_owned(),
    })
}
