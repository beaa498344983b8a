//! `tally diagnose`: prints what [`tally_read::diagnose`] found, as text or JSON.

use super::to_stdout;
use crate::error::CliError;
use crate::error::Exit;
use crate::stderr;
use std::io::Write;
use std::path::PathBuf;
use tally_read::diagnose::Thresholds;
use tally_read::diagnose::{Diagnosis, Evidence};

/// `tally diagnose`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run directory (a schema-v1 run, as for extract).
    pub run_dir: PathBuf,
    /// How many trailing values each figure averages.
    #[arg(long, default_value_t = tally_read::diagnose::DEFAULT_LAST)]
    pub last: usize,
    /// Print JSON: {"healthy", "findings": [{"symptom", "meaning", "check_first", "evidence"}]}.
    #[arg(long)]
    pub json: bool,
    /// learner Collector Wait, % of Iter Wall, at or above which it is high.
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().wait_high_pct)]
    pub wait_high: f64,
    /// learner Collector Wait, % of Iter Wall, below which it is low.
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().wait_low_pct)]
    pub wait_low: f64,
    /// collector Learner Action Wait, % of the collector cycle, that is high.
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().action_wait_high_pct)]
    pub action_wait_high: f64,
    /// learner Inference, % of Iter Wall, that is high.
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().inference_high_pct)]
    pub inference_high: f64,
    /// learner Replay Batch Wait, % of Iter Wall, that is high.
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().batch_wait_high_pct)]
    pub batch_wait_high: f64,
    /// collector Replay Write, % of the collector cycle, that is high.
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().replay_write_high_pct)]
    pub replay_write_high: f64,
    /// Replay H2D Submit, % of Iter Wall, that is high.
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().submit_high_pct)]
    pub submit_high: f64,
    /// Mean GPU utilisation, %, below which the GPU is starved while the learner waits on
    /// the collector (runs with system/gpuN/util_percent).
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().gpu_low_pct)]
    pub gpu_low: f64,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args {
            run_dir,
            last,
            json,
            wait_high,
            wait_low,
            action_wait_high,
            inference_high,
            batch_wait_high,
            replay_write_high,
            submit_high,
            gpu_low,
        } = self;
        let thresholds = Thresholds {
            wait_high_pct: wait_high,
            wait_low_pct: wait_low,
            action_wait_high_pct: action_wait_high,
            inference_high_pct: inference_high,
            batch_wait_high_pct: batch_wait_high,
            replay_write_high_pct: replay_write_high,
            submit_high_pct: submit_high,
            gpu_low_pct: gpu_low,
        };
        thresholds.check([
            "--wait-high",
            "--wait-low",
            "--action-wait-high",
            "--inference-high",
            "--batch-wait-high",
            "--replay-write-high",
            "--submit-high",
            "--gpu-low",
        ])?;
        let mut skipped = stderr::StderrObserver::new(None);
        let diagnosis = tally_read::diagnose::diagnose(&run_dir, last, thresholds, &mut skipped)?;
        stderr::warn(&diagnosis.damage);
        to_stdout(|out| Ok(print(&diagnosis, json, out)?))
    }
}

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
    if let Some(p) = e.percent {
        return format!("{} {p:.1} %", e.figure);
    }
    match (e.share_pct, e.of, e.of_ms) {
        (Some(p), Some(of), Some(of_ms)) => format!(
            "{} {:.2} ms = {p:.1} % of {of} ({of_ms:.2} ms)",
            e.figure, e.ms
        ),
        _ => format!("{} {:.2} ms", e.figure, e.ms),
    }
}
