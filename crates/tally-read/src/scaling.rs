//! The data-parallel scaling report (`tally scaling`) over runs of one task at several GPU counts.
//!
//! It reads schema-v1 canonical tags only, with no legacy mode (`docs/contract/consumers.md`). Throughput is `Perf/total_fps` (summed over ranks by the logger); speed-up and
//! efficiency are against the run with the fewest GPUs.

use crate::error::Error;
use crate::files::require_run_event_files;
use crate::meta::{read_json, require_schema_v1};
use crate::tails::{is_legacy, read_tails};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tally_tfevents::Damage;

/// One run's row of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalingRow {
    /// The run directory.
    pub run: PathBuf,
    /// World size from run_config.json.
    pub gpus: u64,
    /// Mean of the last N `Perf/total_fps`.
    pub steps_per_sec: f64,
    /// Throughput over the smallest run's.
    pub speedup: f64,
    /// Speed-up over the GPU ratio.
    pub efficiency: f64,
    /// Mean per-rank gradient all-reduce time, when the run recorded it.
    pub dp_sync_ms_per_rank: Option<f64>,
}

fn gpus_and_task(dir: &Path) -> Result<(u64, String), Error> {
    let path = dir.join("run_config.json");
    let config = read_json(&path)?.ok_or_else(|| {
        Error::Refused(format!(
            "{}: missing: the GPU count comes from the run config",
            path.display()
        ))
    })?;
    let gpus = config
        .pointer("/run/logger/num_gpus")
        .or_else(|| config.pointer("/config/training/num_gpus"))
        .and_then(Value::as_u64)
        .filter(|g| *g >= 1)
        .ok_or_else(|| {
            Error::Refused(format!(
                "{}: no run.logger.num_gpus (or config.training.num_gpus) integer >= 1",
                path.display()
            ))
        })?;
    let task = config
        .pointer("/run/task")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::Refused(format!("{}: no run.task", path.display())))?
        .to_owned();
    Ok((gpus, task))
}

/// The scaling report: the task, one row per run, and the damage the reader found.
#[derive(Debug)]
pub struct Report {
    /// The task every run shares.
    pub task: String,
    /// One row per run, by GPU count.
    pub rows: Vec<ScalingRow>,
    /// Truncated tails found in the runs' files.
    pub damage: Vec<Damage>,
}

/// Build the report for `dirs` (at least one), averaging the last `last` values.
pub fn report(
    dirs: &[PathBuf],
    last: usize,
    observer: &mut dyn crate::observer::Observer,
) -> Result<Report, Error> {
    if last == 0 {
        return Err(Error::Setting("--last must be at least 1".into()));
    }
    let mut rows = Vec::new();
    let mut damage = Vec::new();
    let mut task: Option<(String, PathBuf)> = None;
    for dir in dirs {
        let files = require_run_event_files(dir, observer)?;
        let file = &files[files.len() - 1];
        let run_dir = file.parent().unwrap_or(dir);
        let summary_path = run_dir.join("run_summary.json");
        require_schema_v1(&summary_path, read_json(&summary_path)?.as_ref())?;
        let (gpus, t) = gpus_and_task(run_dir)?;
        match &task {
            Some((first, first_dir)) if *first != t => {
                return Err(Error::Refused(format!(
                    "{} is task '{t}' but {} is task '{first}': a scaling report compares one task",
                    dir.display(),
                    first_dir.display()
                )))
            }
            None => task = Some((t, dir.clone())),
            _ => {}
        }
        let mut tails = read_tails(&files, last)?;
        damage.append(&mut tails.damage);
        if let Some(tag) = tails.last.keys().find(|t| is_legacy(t)) {
            return Err(Error::Refused(format!(
                "{}: legacy tag '{tag}': the scaling report reads schema-v1 runs only",
                file.display()
            )));
        }
        let fps = tails.mean("Perf/total_fps").ok_or_else(|| {
            Error::Refused(format!(
                "{}: no Perf/total_fps: throughput was never logged",
                file.display()
            ))
        })?;
        rows.push(ScalingRow {
            run: run_dir.to_owned(),
            gpus,
            steps_per_sec: fps,
            speedup: 1.0,
            efficiency: 1.0,
            dp_sync_ms_per_rank: tails.mean("Perf/dp_gradient_sync_ms_per_rank"),
        });
    }
    rows.sort_by(|a, b| a.gpus.cmp(&b.gpus).then(a.run.cmp(&b.run)));
    let (base_gpus, base_fps) = rows
        .first()
        .map(|r| (r.gpus, r.steps_per_sec))
        .ok_or_else(|| Error::Setting("no run given".into()))?;
    for r in &mut rows {
        r.speedup = if base_fps > 0.0 {
            r.steps_per_sec / base_fps
        } else {
            f64::NAN
        };
        r.efficiency = r.speedup / (r.gpus as f64 / base_gpus as f64);
    }
    Ok(Report {
        task: task.map(|(t, _)| t).unwrap_or_default(),
        rows,
        damage,
    })
}
