//! Health findings on any run: its scalars fed in reading order (step order, as TensorBoard
//! reads them) through `tally::health`'s evaluator, the one implementation of the rules
//! (`docs/contract/health.md` "tally health").

use crate::columns::{resolve_inputs, run_name};
use crate::error::Error;
use crate::meta::read_status;
use crate::scalars::RunScalars;
use std::path::{Path, PathBuf};
use tally::health::{Evaluator, Finding, RuleSet, TagSlot};
use tally_tfevents::{Damage, OnCorruption};

/// What the rules found in one run.
#[derive(Debug)]
pub struct RunHealth {
    /// The run's name under the paths given (`.` for a run given as itself).
    pub run: String,
    /// Its directory.
    pub dir: PathBuf,
    /// Every finding, in the order they first fired.
    pub findings: Vec<Finding>,
    /// Values read.
    pub values: u64,
    /// Whether the run was taken as still being written (its `run_summary.json` says
    /// `running`), so a pause at its end counts as a stall.
    pub live: bool,
    /// What the reader found damaged (truncated tails).
    pub damage: Vec<Damage>,
}

/// Checks one run's event `files` (in run order) against `rules`. `now` (wall seconds) is
/// given for a run still being written: a pause since its last step may then be a stall.
pub fn check_files(
    files: &[PathBuf],
    rules: &RuleSet,
    now: Option<f64>,
) -> Result<(Vec<Finding>, u64, Vec<Damage>), Error> {
    let mut eval = Evaluator::new(rules.clone());
    let mut slots: Vec<Option<TagSlot>> = Vec::new();
    let mut reader = RunScalars::new(files.to_vec(), OnCorruption::Error);
    let mut file = None;
    let mut values = 0u64;
    while let Some(index) = reader.advance()? {
        let Some(s) = reader.current() else {
            continue;
        };
        if file != Some(index) {
            // A resumed run's next file: the pause between segments is not a stall.
            eval.new_segment();
            file = Some(index);
        }
        let slot = match s.tag_id {
            Some(id) => {
                if slots.len() <= id {
                    slots.resize(id + 1, None);
                }
                *slots[id].get_or_insert_with(|| eval.tag(s.tag))
            }
            None => eval.tag(s.tag),
        };
        eval.step(s.step, s.wall_time);
        eval.value(slot, s.step, s.wall_time, s.value);
        values += 1;
    }
    if let Some(now) = now {
        eval.overdue(now);
    }
    Ok((eval.into_findings(), values, reader.take_damage()))
}

/// Checks every run under `paths` (event files, run directories, folders of runs) against
/// `rules`, at wall time `now` for the runs still being written.
pub fn check_paths(paths: &[PathBuf], rules: &RuleSet, now: f64) -> Result<Vec<RunHealth>, Error> {
    let (root, runs) = resolve_inputs(paths).map_err(Error::Refused)?;
    let mut out = Vec::with_capacity(runs.len());
    for (dir, files) in runs {
        let live = is_live(&dir);
        let (findings, values, damage) = check_files(&files, rules, live.then_some(now))?;
        out.push(RunHealth {
            run: run_name(&root, &dir),
            dir,
            findings,
            values,
            live,
            damage,
        });
    }
    Ok(out)
}

/// A tally run whose summary says it is still running.
fn is_live(dir: &Path) -> bool {
    read_status(dir).as_deref() == Some("running")
}
