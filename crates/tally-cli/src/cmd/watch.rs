//! `tally watch RUN_DIR`: the live panel of a run directory, rebuilt from its event file and
//! following it as it grows.
//!
//! The run's newest event file ([`run_event_files`]) is tailed with the resumable reader (`Ok(None)`
//! at a partial record means "not yet", and the next poll picks up the appended bytes); every
//! event goes into the terminal state through [`tally::replay::Replay`], the same calls a live
//! logger makes (`docs/contract/panel.md` "tally watch"). Run facts come from
//! `run_config.json` when present; the run's end from `run_summary.json`.

use crate::error::{CliError, Exit};
use crate::run_files::run_event_files;
use crate::run_reader::RunConfigFacts;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tally::replay::Replay;
use tally::terminal::{Level, RunFacts, TerminalState};
use tally::{Clock, Profile, SystemClock};
use tally_tfevents::{into_scalars, EventReader, ScalarEvent};
use tally_tui::{Output, Panel, PanelOptions};

/// How often the event file and the run summary are polled.
pub const POLL: Duration = Duration::from_millis(200);

/// Validated `tally watch` settings.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// The run directory.
    pub run_dir: PathBuf,
    /// `--panel auto|on|off`.
    pub panel: tally_tui::Mode,
    /// Seconds between plain summary lines.
    pub every: Duration,
}

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
        num_gpus: logger.map_or(1, |l| l.num_gpus).max(1),
        num_envs: logger.map_or(1, |l| l.num_envs).max(1),
        max_iterations: logger.map_or(0, |l| l.max_iterations),
        profile,
    }
}

/// The run's status from `dir/run_summary.json` (`running`, `completed`, ...), if readable.
pub fn read_status(dir: &Path) -> Option<String> {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run_summary.json")).ok()?).ok()?;
    doc["status"].as_str().map(str::to_owned)
}

/// Follows a run directory's event file into a [`TerminalState`].
#[derive(Debug)]
pub struct Tailer {
    dir: PathBuf,
    reader: Option<EventReader<File>>,
    failed: bool,
    replay: Replay,
}

impl Tailer {
    /// A tailer of `dir` (the event file may not exist yet) whose events are placed on `clock`.
    pub fn new(dir: impl Into<PathBuf>, clock: Arc<dyn Clock>) -> Tailer {
        Tailer {
            dir: dir.into(),
            reader: None,
            failed: false,
            replay: Replay::new(clock),
        }
    }

    /// Read every complete event appended since the last call into `state`; returns how many
    /// samples were added. A corrupt file becomes an error line in the panel and stops tailing.
    pub fn poll(&mut self, state: &Mutex<TerminalState>) -> usize {
        if self.failed {
            return 0;
        }
        if self.reader.is_none() {
            // The newest of a resumed run's files is the one a live writer appends to.
            let path = match run_event_files(&self.dir) {
                Ok(mut files) => match files.pop() {
                    Some(path) => path,
                    None => return 0,
                },
                Err(e) => {
                    self.fail(state, e.to_string());
                    return 0;
                }
            };
            match File::open(&path) {
                Ok(f) => self.reader = Some(EventReader::new(f)),
                Err(e) => {
                    self.fail(state, format!("{}: {e}", path.display()));
                    return 0;
                }
            }
        }
        let mut added = 0;
        loop {
            let Some(reader) = self.reader.as_mut() else {
                return added;
            };
            match reader.read_event() {
                Ok(Some(event)) => {
                    let scalars: Vec<ScalarEvent> = into_scalars(event).collect();
                    if let Some(first) = scalars.first() {
                        let (step, wall) = (first.step, first.wall_time);
                        self.push(state, step, wall, &scalars);
                        added += 1;
                    }
                }
                // A partial record at the end: the writer is still writing; try again later.
                Ok(None) => return added,
                Err(e) => {
                    self.fail(state, e.to_string());
                    return added;
                }
            }
        }
    }

    fn push(
        &mut self,
        state: &Mutex<TerminalState>,
        step: i64,
        wall: f64,
        scalars: &[ScalarEvent],
    ) {
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        self.replay.event(&mut s, step, wall, scalars);
    }

    fn fail(&mut self, state: &Mutex<TerminalState>, text: String) {
        self.failed = true;
        self.message(state, Level::Error, text);
    }

    /// Show a status line now.
    pub fn message(&self, state: &Mutex<TerminalState>, level: Level, text: String) {
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        self.replay.message(&mut s, level, text);
    }

    /// Mark the run ended in `state` when its summary says so (after the file was read
    /// through); returns whether it has ended.
    pub fn update_status(&self, state: &Mutex<TerminalState>) -> bool {
        let Some(status) = read_status(&self.dir).filter(|s| s != "running") else {
            return false;
        };
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        self.replay.finish(&mut s, &status);
        true
    }
}

/// `tally watch`: render the run until `q` (live), or until it ends (plain).
pub fn main(c: &WatchConfig) -> Result<Exit, CliError> {
    if !c.run_dir.is_dir() {
        return Err(CliError::Refused(format!(
            "{} is not a run directory",
            c.run_dir.display()
        )));
    }
    let state = Arc::new(Mutex::new(TerminalState::new(read_facts(&c.run_dir))));
    let clock: Arc<dyn Clock> = Arc::new(SystemClock::default());
    let mut tailer = Tailer::new(&c.run_dir, clock.clone());
    // Catch up before the first frame: a finished run shows its final state at once.
    if tailer.poll(&state) == 0 {
        let waiting = format!("Waiting for events in {}", c.run_dir.display());
        tailer.message(&state, Level::Info, waiting);
    }
    let mut finished = tailer.update_status(&state);
    let stop = crate::interrupt::interrupt_flag();
    let mut panel = Panel::start(
        state.clone(),
        clock,
        PanelOptions {
            mode: c.panel,
            plain_interval: c.every,
            keys: true,
            ..PanelOptions::default()
        },
    );
    let live = panel.output() == Output::Live;
    loop {
        if panel.quit_requested() || stop.load(Ordering::SeqCst) {
            break;
        }
        // Plain lines end with the run; the live panel stays until `q`.
        if finished && !live {
            break;
        }
        std::thread::sleep(POLL);
        if tailer.poll(&state) > 0 {
            panel.refresh();
        }
        finished = finished || tailer.update_status(&state);
    }
    // The run was shown; a panel that fails to restore is reported but is not the run's failure.
    if let Err(e) = panel.stop() {
        eprintln!("tally: panel: {e}");
    }
    Ok(if stop.load(Ordering::SeqCst) {
        Exit::Interrupted
    } else {
        Exit::Success
    })
}
