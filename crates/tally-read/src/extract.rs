//! The off-policy summary extractor (`tally extract`), fail-closed on the schema contract.
//!
//! By default it reads only schema-v1 canonical tags and fails when `metric_schema_version` is
//! missing or unsupported; `--legacy-unversioned` is the one path for pre-schema runs (no
//! stamp, no canonical tag, recognised legacy tags), never a fallback for an unversioned
//! modern run; a canonical/legacy mix fails closed (`docs/contract/consumers.md`). A run whose
//! summary says `completed` but whose event files end early fails too, unless
//! `--allow-truncated` (`docs/contract/consumers.md` "What readers report").

use crate::error::Error;
use crate::files::require_run_event_files;
use crate::legacy::{legacy_profile, require_pre_schema, Asker};
use crate::meta::{read_json, require_schema_v1, RunConfigFacts};
use crate::observer::Observer;
use crate::tails::{is_canonical, is_legacy, is_unknown_canonical, read_tails, Tails};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tally_schema::{legacy::LEGACY, legacy_mapping, Profile};
use tally_tfevents::Damage;

/// One figure: a canonical source with its scale to the row's unit, or legacy-only sources.
struct Row {
    label: &'static str,
    canonical: Option<(&'static str, f64)>,
    legacy_only: &'static [(&'static str, f64)],
}

const fn c(label: &'static str, tag: &'static str, scale: f64) -> Row {
    Row {
        label,
        canonical: Some((tag, scale)),
        legacy_only: &[],
    }
}

/// The extractor's figures, in output order: the off-policy summary of
/// `docs/contract/consumers.md`, plus every learner and collector phase.
const ROWS: &[Row] = &[
    c("iter_ms", "Perf/iteration_time", 1000.0),
    c("steps_per_sec", "Perf/total_fps", 1.0),
    Row {
        label: "collector_active_steps_per_sec",
        canonical: None,
        legacy_only: &[("perf/collector_active_steps_per_sec", 1.0)],
    },
    Row {
        label: "collector_cycle_ms",
        canonical: None,
        legacy_only: &[("perf/collector_cycle_ms", 1.0)],
    },
    c(
        "learner_collector_wait_ms",
        "Perf/learner_collector_wait_ms",
        1.0,
    ),
    c("learner_inference_ms", "Perf/learner_inference_ms", 1.0),
    c(
        "learner_inference_h2d_ms",
        "Perf/learner_inference_h2d_ms",
        1.0,
    ),
    c(
        "learner_inference_forward_ms",
        "Perf/learner_inference_forward_ms",
        1.0,
    ),
    c(
        "learner_inference_d2h_ms",
        "Perf/learner_inference_d2h_ms",
        1.0,
    ),
    c(
        "learner_collector_release_ms",
        "Perf/learner_collector_release_ms",
        1.0,
    ),
    c(
        "learner_replay_batch_wait_ms",
        "Perf/learner_replay_batch_wait_ms",
        1.0,
    ),
    c(
        "learner_replay_stage_ms",
        "Perf/learner_replay_stage_ms",
        1.0,
    ),
    c(
        "learner_replay_sample_ms",
        "Perf/learner_replay_sample_ms",
        1.0,
    ),
    c("learner_train_ms", "Perf/learning_time", 1000.0),
    c(
        "learner_weight_publish_ms",
        "Perf/learner_weight_publish_ms",
        1.0,
    ),
    c(
        "replay_ingress_h2d_submit_ms",
        "Perf/replay_ingress_h2d_submit_ms",
        1.0,
    ),
    c(
        "collector_inference_request_ms",
        "Perf/collector_inference_request_ms",
        1.0,
    ),
    c(
        "collector_learner_action_wait_ms",
        "Perf/collector_learner_action_wait_ms",
        1.0,
    ),
    c("collector_env_step_ms", "Perf/collector_env_step_ms", 1.0),
    c(
        "collector_transition_extract_ms",
        "Perf/collector_transition_extract_ms",
        1.0,
    ),
    c(
        "collector_replay_write_ms",
        "Perf/collector_replay_write_ms",
        1.0,
    ),
    c(
        "collector_metrics_publish_ms",
        "Perf/collector_metrics_publish_ms",
        1.0,
    ),
    c("collector_mlp_infer_ms", "Perf/collector_mlp_infer_ms", 1.0),
    c("collector_rollout_ms", "Perf/collection_time", 1000.0),
    c(
        "dp_gradient_sync_ms_per_rank",
        "Perf/dp_gradient_sync_ms_per_rank",
        1.0,
    ),
];

/// `extract --legacy-unversioned`, for the legacy gate's messages.
const EXTRACT: Asker = Asker {
    flag: "--legacy-unversioned",
    way_out: "drop the flag",
};

/// Extraction mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Schema-v1 canonical tags only (the default).
    Versioned,
    /// Pre-schema runs through the legacy map, with the profile `--profile` names (needed when
    /// the run's `run_config.json` names none).
    LegacyUnversioned(Option<Profile>),
}

/// The extracted figures: label → mean of the last N values in the row's unit (None = missing).
pub type Figures = Vec<(&'static str, Option<f64>)>;

/// What `extract` found: the figures, and the damage the reader reported on the way.
#[derive(Debug)]
pub struct Extraction {
    /// The figures, in output order.
    pub figures: Figures,
    /// Truncated tails found in the run's files.
    pub damage: Vec<Damage>,
}

/// Check the run against the mode's rules and compute every figure; `allow_truncated`
/// accepts a `completed` run whose files end early. A summary still saying `running` is a
/// note to `observer`.
pub fn extract(
    dir: &Path,
    last: usize,
    mode: Mode,
    allow_truncated: bool,
    observer: &mut dyn Observer,
) -> Result<Extraction, Error> {
    if last == 0 {
        return Err(Error::Setting("--last must be at least 1".into()));
    }
    let files = require_run_event_files(dir, observer)?;
    let run_dir = files[0].parent().unwrap_or(dir);
    // Messages about the run as a whole name its newest file.
    let file = files[files.len() - 1].clone();
    let summary_path = run_dir.join("run_summary.json");
    let summary = read_json(&summary_path)?;
    let config = read_json(&run_dir.join("run_config.json"))?;
    let facts = RunConfigFacts::from_config(config.as_ref());
    let tails = read_tails(&files, last)?;
    if let Some(note) = unfinalised(&summary_path, summary.as_ref()) {
        observer.note(&note);
    }
    if !allow_truncated {
        let log_interval = facts.logger.as_ref().map_or(1, |l| l.log_interval.max(1));
        let count_check = (mode == Mode::Versioned).then_some(log_interval);
        require_complete(&summary_path, summary.as_ref(), &files, &tails, count_check)?;
    }
    let profile = match mode {
        Mode::Versioned => {
            require_canonical(&file, &summary_path, summary.as_ref(), &tails)?;
            None
        }
        Mode::LegacyUnversioned(named) => {
            let tags: Vec<&str> = tails.last.keys().map(String::as_str).collect();
            require_pre_schema(EXTRACT, &file, &summary_path, summary.as_ref(), &tags)?;
            // Export's rule: the run's profile or the one named, never guessed.
            let config_path = run_dir.join("run_config.json");
            let (profile, source) = legacy_profile(run_dir, &config_path, &facts, named)?;
            observer.note(&format!(
                "{}: reading legacy tags with profile {profile} ({})",
                run_dir.display(),
                source.describe()
            ));
            Some(profile)
        }
    };
    let mut out = Vec::with_capacity(ROWS.len());
    for row in ROWS {
        let value = match profile {
            None => match row.canonical {
                Some((tag, scale)) => tails.mean(tag).map(|v| v * scale),
                None => continue,
            },
            Some(profile) => legacy_value(row, &tails, profile),
        };
        out.push((row.label, value));
    }
    Ok(Extraction {
        figures: out,
        damage: tails.damage,
    })
}

/// The schema-v1 gate of a run read for its canonical tags (`docs/contract/consumers.md`
/// "The schema-v1 gate"): the summary's stamp, no legacy tag, no unknown tag in a canonical
/// group, at least one canonical `Perf/` or `Train/` tag. `file` is the run's newest file.
pub fn require_canonical(
    file: &Path,
    summary_path: &Path,
    summary: Option<&Value>,
    tails: &Tails,
) -> Result<(), Error> {
    require_schema_v1(summary_path, summary)?;
    if let Some(t) = tails.last.keys().find(|t| is_legacy(t)) {
        return Err(Error::Refused(format!(
            "{}: legacy tag '{t}' in a schema-v1 run: canonical/legacy mixes fail closed (the producer must emit canonical tags only)",
            file.display()
        )));
    }
    if let Some(t) = tails.last.keys().find(|t| is_unknown_canonical(t)) {
        return Err(Error::Refused(format!(
            "{}: unknown tag '{t}' in a canonical group of a schema-v1 run: not a schema-v1 \
             tag (a typo, or a newer schema); extract refuses rather than guess",
            file.display()
        )));
    }
    if !tails
        .last
        .keys()
        .any(|t| (t.starts_with("Perf/") || t.starts_with("Train/")) && is_canonical(t))
    {
        return Err(Error::Refused(format!(
            "{}: no canonical Perf/ or Train/ tag: nothing to extract",
            file.display()
        )));
    }
    Ok(())
}

/// A summary still saying `running`: the run is live, or its final summary could not be
/// written (docs/contract/run-artifacts.md "Storage faults"); either way the figures are what
/// the files hold, and the run is not reported as completed.
fn unfinalised(summary_path: &Path, summary: Option<&Value>) -> Option<String> {
    let summary = summary?;
    if summary.get("status").and_then(Value::as_str) != Some("running") {
        return None;
    }
    let claimed = summary
        .get("completed_iterations")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Some(format!(
        "{}: says the run is still running ({claimed} iterations): either it is live, or its \
         summary could not be finalised (the run directory turned read-only or full, or the \
         process was killed); the figures are from what the event files hold",
        summary_path.display()
    ))
}

/// Fails a run whose summary says `completed` while its event files end early: the newest
/// file ends inside a record, or (with `count_check`'s log interval) the last persisted
/// iteration is a whole log interval or more behind `completed_iterations`.
fn require_complete(
    summary_path: &Path,
    summary: Option<&Value>,
    files: &[PathBuf],
    tails: &Tails,
    count_check: Option<u64>,
) -> Result<(), Error> {
    let Some(summary) = summary else {
        return Ok(());
    };
    if summary.get("status").and_then(Value::as_str) != Some("completed") {
        return Ok(());
    }
    let allow = "pass --allow-truncated to extract what is on disk";
    let newest = files.last().map(PathBuf::as_path);
    // A torn tail in an earlier file is a killed segment the run resumed after: only warned.
    if let Some(tail) = tails
        .damage
        .iter()
        .find(|d| matches!(d, Damage::TruncatedTail { .. }) && d.path() == newest)
    {
        return Err(Error::Refused(format!(
            "{tail}; {} says the run completed, so its event file was cut short: {allow}",
            summary_path.display()
        )));
    }
    let (Some(interval), Some(claimed)) = (
        count_check,
        summary.get("completed_iterations").and_then(Value::as_u64),
    ) else {
        return Ok(());
    };
    // The iteration is the step, or `Train/iteration` where env steps are the axis.
    let persisted = match tails.last.get("Train/iteration") {
        Some(values) => values.back().map(|v| *v as i64),
        None => tails.max_step,
    };
    let behind = match persisted {
        Some(it) => claimed.saturating_sub(u64::try_from(it).unwrap_or(0)) >= interval,
        None => true,
    };
    if behind {
        let found = persisted.map_or("no iteration".to_owned(), |it| format!("iteration {it}"));
        return Err(Error::Refused(format!(
            "{}: says the run completed {claimed} iterations (log interval {interval}), but its \
             event files end at {found}: {allow}",
            summary_path.display()
        )));
    }
    Ok(())
}

/// A row's figure from legacy tags: legacy-only sources first, then every old name the legacy
/// map sends to the row's canonical tag (for this profile), scaled old → canonical → row unit.
fn legacy_value(row: &Row, tails: &Tails, profile: Profile) -> Option<f64> {
    for (tag, scale) in row.legacy_only {
        if let Some(v) = tails.mean(tag) {
            return Some(v * scale);
        }
    }
    let (canonical, row_scale) = row.canonical?;
    LEGACY
        .iter()
        .filter(|r| r.new == canonical)
        .filter(|r| legacy_mapping(r.old, Some(profile)).is_some_and(|m| m.new == canonical))
        .find_map(|r| tails.mean(r.old).map(|v| v * r.scale * row_scale))
}
