//! `tally diagnose`: prints what [`tally_read::diagnose`] found, as text or JSON.

use std::io::Write;
use tally_read::diagnose::{Diagnosis, Evidence};

/// Print the diagnosis as text or as JSON
/// (`{"healthy", "findings": [{"symptom", "meaning", "check_first", "evidence"}], ...}`).
pub fn print(d: &Diagnosis, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if json {
        let text = serde_json::to_string_pretty(&d.to_json()).map_err(std::io::Error::other)?;
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
