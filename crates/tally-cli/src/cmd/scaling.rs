//! `tally scaling`: prints what [`tally_read::scaling`] reports, as a table or JSON.

use super::to_stdout;
use crate::error::CliError;
use crate::error::Exit;
use crate::stderr;
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use tally_read::damage::damage_json;
use tally_read::scaling::Report;

/// `tally scaling`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run directories of the same task (schema-v1 runs).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// How many trailing values each figure averages.
    #[arg(long, default_value_t = 20)]
    pub last: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args { dirs, last, json } = self;
        let mut skipped = stderr::StderrObserver::new(None);
        let report = tally_read::scaling::report(&dirs, last, &mut skipped)?;
        stderr::warn(&report.damage);
        to_stdout(|out| Ok(print(&report, json, out)?))
    }
}

/// Print the report as an aligned table or JSON (with a `damage` list: file, offset, kind,
/// detail).
pub fn print(report: &Report, json_out: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let (task, rows) = (report.task.as_str(), report.rows.as_slice());
    let base = rows.first().map_or(1, |r| r.gpus);
    if json_out {
        let runs: Vec<Value> = rows
            .iter()
            .map(|r| {
                json!({"run": r.run.display().to_string(), "gpus": r.gpus, "steps_per_sec": r.steps_per_sec,
                       "speedup": r.speedup, "efficiency": r.efficiency, "dp_gradient_sync_ms_per_rank": r.dp_sync_ms_per_rank})
            })
            .collect();
        let doc = json!({"task": task, "base_gpus": base, "runs": runs,
                         "damage": damage_json(&report.damage)});
        return writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    }
    writeln!(
        out,
        "task {task}: scaling against {base} GPU{}",
        if base == 1 { "" } else { "s" }
    )?;
    writeln!(
        out,
        "{:>5}  {:>14}  {:>8}  {:>10}  {:>15}  run",
        "gpus", "steps/s", "speed-up", "efficiency", "dp sync ms/rank"
    )?;
    for r in rows {
        let sync = r
            .dp_sync_ms_per_rank
            .map_or("-".to_owned(), |v| format!("{v:.3}"));
        writeln!(
            out,
            "{:>5}  {:>14.1}  {:>7.2}x  {:>9.1}%  {:>15}  {}",
            r.gpus,
            r.steps_per_sec,
            r.speedup,
            r.efficiency * 100.0,
            sync,
            r.run.display()
        )?;
    }
    Ok(())
}
