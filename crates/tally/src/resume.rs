//! Resuming a run: which directory, whether the new logger fits it, and where its step axis
//! stopped (docs/contract/run-artifacts.md "Resume").
//!
//! A resumed run keeps its directory, `run_config.json` identity and `run_summary.json`
//! counters; the new logger writes a new event file beside the old ones (TensorBoard merges a
//! directory's files) and accepts only steps after the last persisted one, or, rewound to a
//! checkpoint (`resume_from`), after that checkpoint's step, its file opening with the purge
//! marker that hides the later ones from readers.

use crate::error::{Error, Result};
use crate::input::LoggerConfig;
use crate::resolve::Axis;
use crate::run::{RUN_CONFIG_FILE, RUN_SUMMARY_FILE};
use crate::rundir::{runs_parent, RunDirSpec};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tally_schema::artifacts::{
    ResumeSegment, RunConfig, RunIdentity, RunStatus, RunSummary, UserMetric, WandbSettings,
};
use tally_tfevents::proto::{event, SessionLog};
use tally_tfevents::reader::open_event_file;
use tally_tfevents::scalar::scalars_of;

/// The tag an env-step-axis run writes its iteration under (absent on an iteration axis).
const ITERATION_TAG: &str = "Train/iteration";

/// An existing run the logger appends to.
#[derive(Debug, Clone)]
pub struct PriorRun {
    /// The run directory.
    pub dir: PathBuf,
    /// Its `run_config.json`.
    pub config: RunConfig,
    /// Its `run_summary.json`.
    pub summary: RunSummary,
    /// Where its persisted step axis stopped.
    pub axis: Axis,
    /// The last persisted step, if any.
    pub last_step: Option<i64>,
    /// The checkpoint the resume rewinds the run to (`resume_from` before the last iteration).
    pub rewind: Option<Rewind>,
    /// The points its event files show: all of them, and those a rewind keeps.
    pub points: (u64, u64),
    /// The largest creation second in the names of its event files, if it has any.
    pub latest_event_file_secs: Option<u64>,
    /// `run_config.json` and `run_summary.json` as read: put back when the resumed logger
    /// closes `failed` before accepting a step, so a failed resume leaves the run as it was.
    pub documents: PriorDocuments,
}

/// A run's two JSON documents as a resume found them, byte for byte.
#[derive(Debug, Clone)]
pub struct PriorDocuments {
    /// `run_config.json`.
    pub run_config: String,
    /// `run_summary.json`.
    pub run_summary: String,
}

/// Where a resume rewinds a run: the checkpoint's iteration and its step on the run's axis
/// (docs/contract/run-artifacts.md "Resume" (Rewind)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rewind {
    /// The checkpoint's iteration (`resume_from`).
    pub iteration: u64,
    /// Its step: the iteration itself on an iteration axis, else the env step it was written at.
    pub step: i64,
    /// Whether env steps are the run's axis.
    pub env_axis: bool,
}

impl Rewind {
    /// The step of the purge marker: readers drop the earlier files' points from here on.
    pub fn purge_from(&self) -> i64 {
        self.step + 1
    }
}

impl PriorRun {
    /// The run's identity for the resumed segment: its start time, host and git at the first
    /// start stay; the W&B settings are this logger's (name, seed and logger facts are set by
    /// the caller the same way for a new run).
    pub fn identity(&self, wandb: WandbSettings) -> RunIdentity {
        let mut id = self.config.run.clone();
        id.log_dir = self.dir.display().to_string();
        id.wandb = wandb;
        id
    }

    /// The summary the resumed segment continues from (the earlier document, running again,
    /// with one more `resumed` entry started at `start_time_utc`, its counts rewound with the
    /// run), the figures the earlier segments add, and the step axis the new logger continues:
    /// where the run stopped, or the rewind point. `marker`: the new event file opens with the
    /// purge marker (a rewind with an event file).
    pub fn continued_summary(
        &self,
        start_time_utc: &str,
        marker: bool,
    ) -> (RunSummary, Carried, Axis) {
        let mut s = self.summary.clone();
        s.resumed.push(ResumeSegment {
            start_time_utc: start_time_utc.to_owned(),
            previous_status: s.status,
            after_step: self.last_step,
            first_step: None,
            rewound_to_step: self.rewind.map(|r| r.step),
            rewound_to_iteration: self.rewind.map(|r| r.iteration),
            purged_from_step: self.rewind.filter(|_| marker).map(|r| r.purge_from()),
        });
        if let Some(r) = self.rewind {
            // The last accepted step's, as for any run: the checkpoint's until a step arrives.
            // An iteration axis does not hold env steps: the earlier count stays until then.
            s.completed_iterations = r.iteration;
            if r.env_axis {
                s.total_env_steps = r.step as u64;
            }
        }
        s.status = RunStatus::Running;
        s.end_time_utc = None;
        s.log_dir = self.dir.display().to_string();
        (s, Carried::of(self), self.start_axis())
    }

    /// The axis the resumed logger's first step must advance: the rewind point, else where
    /// the run stopped.
    pub fn start_axis(&self) -> Axis {
        let axis = match self.rewind {
            Some(r) => Axis {
                last_iteration: Some(r.iteration),
                last_env_steps: if r.env_axis { r.step as u64 } else { 0 },
                resumed: true,
            },
            None => self.axis,
        };
        Axis {
            resumed: true,
            ..axis
        }
    }

    /// The step on disk the resumed logger starts from: the rewind point's, else the last.
    pub fn start_step(&self) -> Option<i64> {
        self.rewind.map(|r| r.step).or(self.last_step)
    }

    /// The creation second to name the resumed segment's event file by: `wall_secs`, or one
    /// past the latest earlier file's, so the new file sorts after every earlier one
    /// (TensorBoard reads a directory's event files in name order, and a resumed job may run on
    /// a host whose clock is behind).
    pub fn event_file_secs(&self, wall_secs: u64) -> u64 {
        match self.latest_event_file_secs {
            Some(latest) if latest >= wall_secs => latest + 1,
            _ => wall_secs,
        }
    }
}

/// The run `config` resumes, if there is one: `log_dir` when it holds a run, else (no
/// `log_dir`) the most recently started run of this algo and task under `log_root`.
pub fn find(config: &LoggerConfig, spec: &RunDirSpec) -> Result<Option<PathBuf>> {
    if let Some(dir) = &config.log_dir {
        return Ok(dir.join(RUN_CONFIG_FILE).is_file().then(|| dir.clone()));
    }
    latest_run(&runs_parent(spec)?)
}

/// The run under `parent` with the latest `run.start_time_utc` (ties: the later directory
/// name); directories without a readable `run_config.json` are not runs.
pub fn latest_run(parent: &Path) -> Result<Option<PathBuf>> {
    let entries = match std::fs::read_dir(parent) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("list runs in", parent)(e)),
    };
    let mut best: Option<(String, PathBuf)> = None;
    for entry in entries {
        let dir = entry.map_err(Error::io("list runs in", parent))?.path();
        let Ok(config) = read_json::<RunConfig>(&dir.join(RUN_CONFIG_FILE)) else {
            continue;
        };
        let key = config.run.start_time_utc;
        let later = best.as_ref().is_none_or(|(k, d)| (&key, &dir) > (k, d));
        if later {
            best = Some((key, dir));
        }
    }
    Ok(best.map(|(_, d)| d))
}

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    Ok(read_document(path)?.1)
}

/// A JSON document's text and what it holds.
fn read_document<T: DeserializeOwned>(path: &Path) -> Result<(String, T)> {
    let text = std::fs::read_to_string(path).map_err(Error::io("read", path))?;
    let doc = serde_json::from_str(&text).map_err(|source| Error::Json {
        path: path.to_owned(),
        source,
    })?;
    Ok((text, doc))
}

/// Read the run in `dir` and check that `config` may continue it (and rewind it to
/// `resume_from`, when given). Nothing is written.
pub fn load(dir: &Path, config: &LoggerConfig) -> Result<PriorRun> {
    let (config_text, run_config) = read_document::<RunConfig>(&dir.join(RUN_CONFIG_FILE))?;
    let (summary_text, summary) = read_document::<RunSummary>(&dir.join(RUN_SUMMARY_FILE))?;
    check_compatible(dir, &run_config, config)?;
    let points = shown_points(dir)?;
    let (axis, last_step) = match axis_of(&points) {
        (_, None) => summary_axis(&summary, config),
        found => found,
    };
    let rewind = match config.resume_from {
        Some(from) => rewind_to(dir, from, axis, &points)?,
        None => None,
    };
    let kept = points
        .iter()
        .filter(|p| rewind.is_none_or(|r| p.step <= r.step))
        .count();
    Ok(PriorRun {
        dir: dir.to_owned(),
        config: run_config,
        summary,
        axis,
        last_step,
        rewind,
        points: (points.len() as u64, kept as u64),
        latest_event_file_secs: latest_event_file_secs(dir)?,
        documents: PriorDocuments {
            run_config: config_text,
            run_summary: summary_text,
        },
    })
}

/// Where `resume_from` rewinds a run whose axis stopped at `axis`: `None` at its last
/// iteration (an ordinary resume). Refused, naming the value and the run's last iteration,
/// past the last iteration, below 0, or on an env-step axis at an iteration the event files
/// never wrote (its step is unknown).
fn rewind_to(dir: &Path, from: i64, axis: Axis, points: &[Point]) -> Result<Option<Rewind>> {
    let refuse = |why: String| Err(Error::Config(format!("resume_from={from}: {why}")));
    let Some(last) = axis.last_iteration else {
        return refuse(format!(
            "the run in {} has logged no iteration to rewind to",
            dir.display()
        ));
    };
    let iteration = match u64::try_from(from) {
        Ok(it) if it <= last => it,
        _ => {
            return refuse(format!(
                "the run in {} logged iterations up to {last}; resume_from is the iteration \
                 of the checkpoint the job restarts from, from 0 to {last}",
                dir.display()
            ))
        }
    };
    if iteration == last {
        return Ok(None);
    }
    let env_axis = axis.last_env_steps > 0;
    if !env_axis {
        return Ok(Some(Rewind {
            iteration,
            step: iteration as i64,
            env_axis,
        }));
    }
    match points.iter().rev().find(|p| p.iteration == Some(iteration)) {
        Some(p) => Ok(Some(Rewind {
            iteration,
            step: p.step,
            env_axis,
        })),
        None => refuse(format!(
            "the run in {} never wrote iteration {iteration} to its event files (its last \
             iteration is {last}), so the env step to rewind to is unknown; resume from a \
             checkpoint of an iteration the run logged (with log_interval N, every Nth)",
            dir.display()
        )),
    }
}

/// Refuse a logger whose algo, task, profile or simulator differ from the run's: its tags,
/// step axis and run directory would no longer describe one run.
fn check_compatible(dir: &Path, prior: &RunConfig, config: &LoggerConfig) -> Result<()> {
    let run = &prior.run;
    let mismatch = |field: &str, was: &str, now: &str| {
        Err(Error::Config(format!(
            "resume: {field} '{now}' differs from the run in {} ({field} '{was}'); \
             resume with the same {field}, or start a new run",
            dir.display()
        )))
    };
    if !run.algo.eq_ignore_ascii_case(&config.algo) {
        return mismatch("algo", &run.algo, &config.algo);
    }
    if run.task != config.task {
        return mismatch("task", &run.task, &config.task);
    }
    if !config.sim_backend.is_empty() && run.sim_backend != config.sim_backend {
        return mismatch("sim", &run.sim_backend, &config.sim_backend);
    }
    if let Some(facts) = &run.logger {
        if facts.profile != config.profile {
            return mismatch("profile", facts.profile.as_str(), config.profile.as_str());
        }
    }
    Ok(())
}

/// A point readers show: an event with scalars, its step and the `Train/iteration` written
/// with it (present on an env-step axis).
#[derive(Debug, Clone, Copy)]
struct Point {
    step: i64,
    iteration: Option<u64>,
}

/// The points of the event files directly in `dir`, read in run order
/// ([`crate::remote::order`]) as TensorBoard shows them: a purge marker (a session start at
/// step p, a rewinding resume's) drops every point read before it at step p or later.
fn shown_points(dir: &Path) -> Result<Vec<Point>> {
    let files =
        crate::remote::ordered_event_files(dir).map_err(Error::io("list event files in", dir))?;
    let mut points: Vec<Point> = Vec::new();
    for path in files {
        let mut reader = open_event_file(&path).map_err(|e| resume_read_error(&path, e))?;
        while let Some(event) = reader
            .read_event()
            .map_err(|e| resume_read_error(&path, e))?
        {
            if let Some(event::What::SessionLog(log)) = &event.what {
                if log.status == SessionLog::START {
                    points.retain(|p| p.step < event.step);
                }
                continue;
            }
            let mut scalars = scalars_of(&event).peekable();
            if scalars.peek().is_none() {
                continue;
            }
            let iteration = scalars
                .find(|s| s.tag == ITERATION_TAG)
                .map(|s| s.value as u64);
            points.push(Point {
                step: event.step,
                iteration,
            });
        }
    }
    Ok(points)
}

/// Where the step axis of `points` stopped: the largest step (the later of equal ones), and
/// on an env-step axis the iteration written with it.
fn axis_of(points: &[Point]) -> (Axis, Option<i64>) {
    let Some(last) = points.iter().rev().max_by_key(|p| p.step) else {
        return (Axis::default(), None);
    };
    let step_u = u64::try_from(last.step).unwrap_or(0);
    let axis = match last.iteration {
        // Env steps were the axis: the step is the env-step count.
        Some(it) => Axis {
            last_iteration: Some(it),
            last_env_steps: step_u,
            resumed: false,
        },
        None => Axis {
            last_iteration: Some(step_u),
            last_env_steps: 0,
            resumed: false,
        },
    };
    (axis, Some(last.step))
}

/// The axis a run without event files (W&B or no backend) reached, as its last
/// `run_summary.json` recorded it: the step axis is the env-step count when the profile and
/// the run used one, else the iteration.
fn summary_axis(s: &RunSummary, config: &LoggerConfig) -> (Axis, Option<i64>) {
    if s.completed_iterations == 0 && s.total_env_steps == 0 {
        return (Axis::default(), None);
    }
    let env_axis = s.total_env_steps > 0 && !config.profile.iteration_axis();
    let axis = Axis {
        last_iteration: Some(s.completed_iterations),
        last_env_steps: if env_axis { s.total_env_steps } else { 0 },
        resumed: false,
    };
    let step = if env_axis {
        s.total_env_steps
    } else {
        s.completed_iterations
    };
    (axis, i64::try_from(step).ok())
}

/// The largest `<secs>` of the `events.out.tfevents.<secs>.…` files directly in `dir`.
fn latest_event_file_secs(dir: &Path) -> Result<Option<u64>> {
    let mut latest = None;
    for entry in std::fs::read_dir(dir).map_err(Error::io("list event files in", dir))? {
        let name = entry
            .map_err(Error::io("list event files in", dir))?
            .file_name();
        let secs = name
            .to_string_lossy()
            .strip_prefix("events.out.tfevents.")
            .and_then(|rest| rest.split('.').next())
            .and_then(|s| s.parse::<u64>().ok());
        latest = latest.max(secs);
    }
    Ok(latest)
}

fn resume_read_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Config(format!(
        "resume: cannot read the run's event file {} ({e}); its last step is unknown",
        path.display()
    ))
}

/// What a resumed run's earlier segments add to the figures the new logger reports.
#[derive(Debug, Clone, Default)]
pub struct Carried {
    /// Logger wall time of the earlier segments.
    pub wall_time_sec: f64,
    /// Training wall time of the earlier segments.
    pub training_wall_time_sec: f64,
    /// Back-pressure waits so far.
    pub backpressure_waits: u64,
    /// Back-pressure seconds so far.
    pub backpressure_wait_sec: f64,
    /// Sink failures so far.
    pub sink_errors: Vec<String>,
    /// User metric summary values so far (a tag logged again takes the new segment's value).
    pub user_metrics: BTreeMap<String, Option<f64>>,
    /// User metrics documented so far.
    pub user_metric_specs: Vec<UserMetric>,
    /// Steps the earlier segments' event files show (a rewind's purged ones not among them).
    pub persisted_iterations: u64,
    /// Steps the earlier segments logged that their event files lack.
    pub lost_iterations: u64,
}

impl Carried {
    /// The figures of `p`'s summary and config.
    pub fn of(p: &PriorRun) -> Self {
        let s = &p.summary;
        let (all, kept) = p.points;
        // What the earlier summary counted and the files do not hold is lost: its lost steps,
        // and those a killed logger still kept in memory (never written).
        let counted = s.persisted_iterations.unwrap_or(0) + s.pending_iterations;
        let lost = s.lost_iterations + counted.saturating_sub(all);
        Carried {
            persisted_iterations: kept,
            lost_iterations: lost,
            wall_time_sec: s.wall_time_sec,
            training_wall_time_sec: s.training_wall_time_sec,
            backpressure_waits: s.backpressure_waits,
            backpressure_wait_sec: s.backpressure_wait_sec,
            sink_errors: s.sink_errors.clone(),
            user_metrics: s.user_metrics.clone(),
            user_metric_specs: p.config.user_metrics.clone(),
        }
    }
}
