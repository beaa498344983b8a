//! A run's bottleneck (`tally diagnose`): the bottleneck table applied to a run's canonical timelines, averaged over
//! its last N logged iterations (`docs/contract/consumers.md` "Reading a bottleneck"). The run
//! passes the same schema-v1 gate as `extract`; what the reader found damaged is reported.

mod table;

pub use table::{Evidence, Finding, Thresholds, GPU_STARVED};

use crate::error::Error;
use crate::extract::require_canonical;
use crate::files::require_run_event_files;
use crate::meta::{read_json, RunConfigFacts};
use crate::tails::read_tails;
use std::path::{Path, PathBuf};
use tally_schema::Profile;
use tally_tfevents::Damage;

/// How many trailing logged values each figure averages unless told otherwise.
pub const DEFAULT_LAST: usize = 100;

/// What `diagnose` found in one run.
#[derive(Debug)]
pub struct Diagnosis {
    /// The run directory.
    pub run_dir: PathBuf,
    /// Its timing profile.
    pub profile: Profile,
    /// How many trailing values of each figure were averaged.
    pub last: usize,
    /// The thresholds applied.
    pub thresholds: Thresholds,
    /// The figure each row reads, for the rows the run can answer.
    pub checked: Vec<Evidence>,
    /// The rows that fired, in table order; none means healthy.
    pub findings: Vec<Finding>,
    /// Truncated tails found in the run's files.
    pub damage: Vec<Damage>,
}

impl Diagnosis {
    /// The diagnosis as `tally diagnose --json` prints it and the board serves it:
    /// `{"run", "profile", "last", "healthy", "findings", "checked", "thresholds", "damage"}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "run": self.run_dir.display().to_string(),
            "profile": self.profile.as_str(),
            "last": self.last,
            "healthy": self.findings.is_empty(),
            "findings": self.findings,
            "checked": self.checked,
            "thresholds": self.thresholds,
            "damage": crate::damage::damage_json(&self.damage),
        })
    }
}

/// Read the run in `dir`, average the last `last` values of each figure, and apply the table.
pub fn diagnose(
    dir: &Path,
    last: usize,
    thresholds: Thresholds,
    observer: &mut dyn crate::observer::Observer,
) -> Result<Diagnosis, Error> {
    if last == 0 {
        return Err(Error::Setting("--last must be at least 1".into()));
    }
    let files = require_run_event_files(dir, observer)?;
    let run_dir = files[0].parent().unwrap_or(dir).to_owned();
    let summary_path = run_dir.join("run_summary.json");
    let summary = read_json(&summary_path)?;
    let tails = read_tails(&files, last)?;
    require_canonical(
        &files[files.len() - 1],
        &summary_path,
        summary.as_ref(),
        &tails,
    )?;
    let config_path = run_dir.join("run_config.json");
    let facts = RunConfigFacts::from_config(read_json(&config_path)?.as_ref());
    let profile = match facts.profile() {
        Some(p @ (Profile::SacFamily | Profile::Appo)) => p,
        Some(p) => {
            return Err(Error::Refused(format!(
                "{}: a {} run: the bottleneck table reads the off-policy learner and collector \
                 timelines (sac_family, appo); this profile has none to compare",
                run_dir.display(),
                p.as_str()
            )))
        }
        None => {
            return Err(Error::Refused(format!(
                "{}: no timing profile (run.logger.profile or a known run.algo): diagnose needs \
                 it to know which timeline rows the run has",
                config_path.display()
            )))
        }
    };
    let get = |tag: &str| tails.mean(tag);
    let mut means = table::Means::new(profile, &get);
    // Each GPU's mean utilisation over its last values, averaged over the GPUs.
    let gpus: Vec<f64> = tails
        .last
        .keys()
        .filter(|t| t.starts_with("system/gpu") && t.ends_with("/util_percent"))
        .filter_map(|t| tails.mean(t))
        .collect();
    if !gpus.is_empty() {
        means.gpu_util = Some((gpus.iter().sum::<f64>() / gpus.len() as f64, gpus.len()));
    }
    let checked = table::checked(&means);
    if checked.is_empty() {
        return Err(Error::Refused(format!(
            "{}: none of the timeline figures the bottleneck table reads was logged",
            run_dir.display()
        )));
    }
    let findings = table::findings(&means, &thresholds);
    Ok(Diagnosis {
        run_dir,
        profile,
        last,
        thresholds,
        checked,
        findings,
        damage: tails.damage,
    })
}
