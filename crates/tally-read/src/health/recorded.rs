//! The findings a logger recorded in its run's `run_summary.json`, and the one verdict that
//! joins them to what the scalars show (docs/contract/health.md "tally health").

use std::path::Path;
use tally::health::{Finding, RuleKind};

/// The findings a `run_summary.json` lists (none when it cannot be read).
pub fn summary_findings(path: &Path) -> Vec<Finding> {
    // Read as every artefact is: a special file in its place is refused, never waited on.
    crate::meta::read_json(path)
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

/// The run's verdict: what its scalars show, and each finding its logger recorded in `dir`'s
/// `run_summary.json` that they do not (a rule on a tag told once, the scalars' account kept),
/// in the order they first fired. The logger sees what the files cannot: the pause of a run it
/// stopped or ended for a stall, a sink falling behind.
pub fn with_recorded(dir: &Path, mut scalars: Vec<Finding>) -> Vec<Finding> {
    let recorded = summary_findings(&dir.join(tally::run::RUN_SUMMARY_FILE));
    if recorded.is_empty() {
        return scalars;
    }
    for f in recorded {
        if !scalars.iter().any(|s| s.rule == f.rule && s.tag == f.tag) {
            scalars.push(f);
        }
    }
    scalars.sort_by_key(|f| f.first_step);
    scalars
}
