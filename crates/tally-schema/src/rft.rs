//! The `rft` profile's namespace: Trinity-RFT's hierarchical metric names
//! (`docs/contract/rft.md`).
//!
//! Most metrics follow `{category}/{taskset_name}/{metric_name}/{statistic}`; the
//! taskset part exists only for evaluation (`eval/`, `bench/`); statistics are mean, max,
//! min, std, sum, last, or `mean@N` / `std@N` / `best@k` / `worst@k` for eval, optionally
//! followed by a detailed statistic (`…/mean@2/std`). Keys reach the logger already
//! aggregated to the step level, so an `:agg` suffix left in a key is an error.

use crate::lookup::{lookup, TagRef};
use crate::types::Unit;

/// The Trinity-RFT key categories, in the order the contract lists them.
pub const RFT_CATEGORIES: [&str; 13] = [
    "rollout",
    "eval",
    "bench",
    "time",
    "actor",
    "critic",
    "perf",
    "global_seqlen",
    "response_length",
    "prompt_length",
    "timing_per_token_ms",
    "experience_pipeline",
    "sample",
];

/// The step figures Trinity's explorer adds itself, with no statistic: `rollout/<name>`.
pub const UNSUFFIXED_ROLLOUT: [&str; 2] = ["finished_task_count", "model_version"];
/// `eval|bench/<taskset>/<name>` keys with no statistic: the explorer's count, and the two
/// timings its task-to-step aggregation keeps unsuffixed (their mean over the tasks).
pub const UNSUFFIXED_EVAL: [&str; 3] = [
    "finished_task_count",
    "time/task_execution",
    "time/run_execution",
];

/// Whether `parts` name one of the step figures Trinity writes with no statistic.
fn unsuffixed(parts: &[&str]) -> bool {
    match parts {
        ["rollout", name] => UNSUFFIXED_ROLLOUT.contains(name),
        ["eval" | "bench", _taskset, metric @ ..] => UNSUFFIXED_EVAL.contains(&&*metric.join("/")),
        _ => false,
    }
}

/// A validated Trinity-style key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RftKey<'a> {
    /// The category (first segment).
    pub category: &'a str,
    /// The taskset (eval/bench only).
    pub taskset: Option<&'a str>,
    /// The statistic, when the key ends in one.
    pub statistic: Option<&'a str>,
    /// The unit implied by the category (`time/` seconds, `timing_per_token_ms/` ms).
    pub unit: Unit,
}

const PLAIN_STATS: [&str; 6] = ["mean", "max", "min", "std", "sum", "last"];
const DETAIL_STATS: [&str; 4] = ["mean", "std", "max", "min"];

/// Whether `s` is an eval statistic `mean@N`, `std@N`, `best@k` or `worst@k` (N, k ≥ 1).
pub fn is_eval_statistic(s: &str) -> bool {
    let Some((name, n)) = s.split_once('@') else {
        return false;
    };
    matches!(name, "mean" | "std" | "best" | "worst")
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && n.parse::<u64>().is_ok_and(|n| n >= 1)
}

/// Validate `key` against the Trinity naming convention; the error says what is wrong.
pub fn validate_rft_key(key: &str) -> Result<RftKey<'_>, String> {
    if key.is_empty() {
        return Err("the key is empty".into());
    }
    if let Some((name, agg)) = key.rsplit_once(':') {
        return Err(format!(
            "'{name}:{agg}' still carries an aggregation suffix: the logger takes step-level keys \
             (aggregate first, e.g. tally.metrics.aggregate_metrics)"
        ));
    }
    if !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("keys are printable ASCII without spaces".into());
    }
    let parts: Vec<&str> = key.split('/').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err("a key segment is empty".into());
    }
    let category = parts[0];
    if !RFT_CATEGORIES.contains(&category) {
        return Err(format!(
            "unknown category '{category}/': the rft namespace is {}",
            RFT_CATEGORIES.join("/, ") + "/"
        ));
    }
    let unit = match category {
        "time" => Unit::S,
        "timing_per_token_ms" => Unit::Ms,
        _ => Unit::Unitless,
    };
    match category {
        _ if unsuffixed(&parts) => Ok(RftKey {
            category,
            taskset: (category != "rollout").then(|| parts[1]),
            statistic: None,
            unit,
        }),
        "eval" | "bench" => {
            // {category}/{taskset}/{metric...}/{statistic}[/{detail}]
            if parts.len() < 4 {
                return Err(format!(
                    "{category}/ keys are {category}/<taskset>/<metric>/<statistic>"
                ));
            }
            let last = parts[parts.len() - 1];
            let before = parts[parts.len() - 2];
            let statistic = if is_eval_statistic(last)
                || PLAIN_STATS.contains(&last) && !is_eval_statistic(before)
            {
                last
            } else if DETAIL_STATS.contains(&last) && is_eval_statistic(before) && parts.len() >= 5
            {
                before
            } else {
                return Err(format!(
                    "'{last}' is not a statistic: {category}/ keys end in mean@N, std@N, best@k, worst@k \
                     (optionally /mean|std|max|min with detailed_stats) or mean|max|min|std|sum|last"
                ));
            };
            Ok(RftKey {
                category,
                taskset: Some(parts[1]),
                statistic: Some(statistic),
                unit,
            })
        }
        "rollout" => {
            let last = parts[parts.len() - 1];
            if parts.len() < 3 || !PLAIN_STATS.contains(&last) {
                return Err(
                    "rollout/ keys are rollout/<metric>/<statistic> with mean|max|min|std|sum|last"
                        .into(),
                );
            }
            Ok(RftKey {
                category,
                taskset: None,
                statistic: Some(last),
                unit,
            })
        }
        _ => {
            if parts.len() < 2 {
                return Err(format!("{category}/ keys name a metric: {category}/<name>"));
            }
            let last = parts[parts.len() - 1];
            let statistic = (parts.len() >= 3 && PLAIN_STATS.contains(&last)).then_some(last);
            Ok(RftKey {
                category,
                taskset: None,
                statistic,
                unit,
            })
        }
    }
}

/// Whether `key`, outside the rft namespace, can be written as the user's own metric
/// (docs/contract/rft.md "Keys outside the namespace"); `Err` says why not: a canonical tag, a
/// legacy or retired name, a tag TensorBoard or W&B could not use.
pub fn outside_key_as_user(key: &str) -> Result<(), String> {
    match lookup(key) {
        Ok(TagRef::User(_)) => Ok(()),
        Ok(_) => Err("it is a canonical tag".into()),
        Err(e) => Err(e.to_string()),
    }
}
