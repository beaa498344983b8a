//! `tally diagnose`: the bottleneck table applied to a run's canonical timelines, averaged over
//! its last N logged iterations (`docs/contract/consumers.md` "Reading a bottleneck"). The run
//! passes the same schema-v1 gate as `extract`; what the reader found damaged is reported.

mod table;

pub use table::{Evidence, Finding, Thresholds};

use crate::cmd::extract::require_canonical;
use crate::error::CliError;
use crate::run_files::{damage_json, require_run_event_files};
use crate::run_reader::{read_json, read_tails, RunConfigFacts};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use tally_schema::Profile;
use tally_tfevents::Damage;

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

/// Read the run in `dir`, average the last `last` values of each figure, and apply the table.
pub fn diagnose(dir: &Path, last: usize, thresholds: Thresholds) -> Result<Diagnosis, CliError> {
    if last == 0 {
        return Err(CliError::Setting("--last must be at least 1".into()));
    }
    let files = require_run_event_files(dir)?;
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
            return Err(CliError::Refused(format!(
                "{}: a {} run: the bottleneck table reads the off-policy learner and collector \
                 timelines (sac_family, appo); this profile has none to compare",
                run_dir.display(),
                p.as_str()
            )))
        }
        None => {
            return Err(CliError::Refused(format!(
                "{}: no timing profile (run.logger.profile or a known run.algo): diagnose needs \
                 it to know which timeline rows the run has",
                config_path.display()
            )))
        }
    };
    let get = |tag: &str| tails.mean(tag);
    let means = table::Means::new(profile, &get);
    let checked = table::checked(&means);
    if checked.is_empty() {
        return Err(CliError::Refused(format!(
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

/// Print the diagnosis as text or as JSON
/// (`{"healthy", "findings": [{"symptom", "meaning", "check_first", "evidence"}], ...}`).
pub fn print(d: &Diagnosis, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if json {
        let v = json!({
            "run": d.run_dir.display().to_string(),
            "profile": d.profile.as_str(),
            "last": d.last,
            "healthy": d.findings.is_empty(),
            "findings": d.findings,
            "checked": d.checked,
            "thresholds": d.thresholds,
            "damage": damage_json(&d.damage),
        });
        let text = serde_json::to_string_pretty(&v).map_err(std::io::Error::other)?;
        return writeln!(out, "{text}");
    }
    writeln!(
        out,
        "run: {} ({}, means of the last {} logged values)",
        d.run_dir.display(),
        d.profile.as_str(),
        d.last
    )?;
    if d.findings.is_empty() {
        writeln!(
            out,
            "healthy: no row of the bottleneck table fires at these thresholds"
        )?;
        for (i, e) in d.checked.iter().enumerate() {
            let head = if i == 0 { "checked:" } else { "" };
            writeln!(out, "  {head:12} {}", evidence_line(e))?;
        }
        return Ok(());
    }
    for f in &d.findings {
        writeln!(out, "\n{}", f.symptom)?;
        for (i, e) in f.evidence.iter().enumerate() {
            let head = if i == 0 { "evidence:" } else { "" };
            writeln!(out, "  {head:12} {}", evidence_line(e))?;
        }
        writeln!(out, "  {:12} {}", "meaning:", f.meaning)?;
        writeln!(out, "  {:12} {}", "check first:", f.check_first)?;
    }
    Ok(())
}

/// "learner Collector Wait 4.40 ms = 44.0 % of Iter Wall (10.00 ms)".
fn evidence_line(e: &Evidence) -> String {
    match (e.share_pct, e.of, e.of_ms) {
        (Some(p), Some(of), Some(of_ms)) => format!(
            "{} {:.2} ms = {p:.1} % of {of} ({of_ms:.2} ms)",
            e.figure, e.ms
        ),
        _ => format!("{} {:.2} ms", e.figure, e.ms),
    }
}
