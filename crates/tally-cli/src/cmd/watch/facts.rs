//! What `watch` was given and what the run is: its directory or one event file, and the
//! panel's run facts from `run_config.json` (docs/contract/panel.md "tally watch").

use std::path::{Path, PathBuf};
use tally::terminal::RunFacts;
use tally::Profile;
use tally_read::meta::RunConfigFacts;
use tally_tfevents::is_event_file_name;

/// The panel's run facts from `dir/run_config.json` (`run.algo`, `run.task`, and the
/// `run.logger` block: profile, GPUs, envs, iterations); a run without them (another tool's, or
/// no config yet) shows an unknown algorithm and task on one GPU, one env, no iteration limit.
pub fn read_facts(dir: &Path) -> RunFacts {
    let facts = RunConfigFacts::read_or_default(dir);
    let profile = facts.profile().unwrap_or(Profile::SacFamily);
    let logger = facts.logger.as_ref();
    RunFacts {
        algo: facts.algo.clone().unwrap_or_else(|| "unknown".into()),
        task: facts.task.clone().unwrap_or_else(|| "unknown".into()),
        sim: facts.sim.clone().unwrap_or_default(),
        name: facts.name.clone(),
        num_gpus: logger.map_or(1, |l| l.num_gpus).max(1),
        num_envs: logger.and_then(|l| l.num_envs),
        max_iterations: logger.and_then(|l| l.max_iterations),
        profile,
    }
}

/// Whether `dir` holds a run written by the tally `Logger`: its `run_config.json` carries the
/// logger block the RL panel is laid out by.
pub fn is_logger_run(dir: &Path) -> bool {
    RunConfigFacts::read_or_default(dir).logger.is_some()
}

/// The facts of a run shown without a schema: only its name (the directory's).
pub(super) fn generic_facts(dir: &Path) -> RunFacts {
    let name = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    RunFacts {
        algo: String::new(),
        task: name,
        sim: String::new(),
        name: None,
        num_gpus: 1,
        num_envs: None,
        max_iterations: None,
        profile: Profile::SacFamily,
    }
}

/// What `watch` was given, as (the directory of the run's JSON artefacts, the one event file
/// to read): an event file is read alone, its directory holding its artefacts.
pub(super) fn split_target(path: PathBuf) -> (PathBuf, Option<PathBuf>) {
    let is_event_file = path.is_file()
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(is_event_file_name);
    match path.parent().filter(|_| is_event_file) {
        Some(parent) => {
            let dir = if parent.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                parent.to_owned()
            };
            (dir, Some(path))
        }
        None => (path, None),
    }
}
