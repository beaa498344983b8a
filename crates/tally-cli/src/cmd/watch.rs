//! `tally watch RUN_DIR|EVENT_FILE`: the live panel of any run, rebuilt from its event files and
//! following them as they grow (`docs/contract/panel.md` "tally watch").
//!
//! A run written by `tally.Logger` (its `run_config.json` has the logger block) is replayed
//! through [`tally::replay::Replay`], the same calls a live logger makes, into the RL panel. Any
//! other run (tensorboardX, torch, stable-baselines3, `tally.SummaryWriter`) gets the generic
//! dashboard: every scalar tag on the state's [`TagBoard`] and in the 2 s window.
//!
//! The run's event files ([`run_with_subruns`]) are followed with the resumable reader
//! ([`Follow`]); a generic run's sub-runs (`add_scalars` series) are followed beside it, their
//! scalars shown under [`subrun_tag`]. A corrupt record ends `watch` with an error
//! naming the file and byte offset; the terminal going away (SIGHUP, a failed write) ends it
//! with exit 0 and a line saying so.

use crate::error::{CliError, Exit};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tally::board::TagBoard;
use tally::replay::Replay;
use tally::terminal::{Level, RunFacts, TerminalState};
use tally::window::Sample;
use tally::{Clock, Profile, SystemClock, SystemInfo, Tag};
use tally_read::files::{dir_event_files, run_with_subruns};
use tally_read::follow::{subrun_tag, Follow};
use tally_read::meta::{check_schema, read_status, RunConfigFacts};
use tally_tfevents::{into_scalars, is_event_file_name, ScalarEvent};
use tally_tui::{Output, Panel, PanelOptions};

/// How often the event files and the run summary are polled.
pub const POLL: Duration = Duration::from_millis(200);
/// After this long without a new record, a running writer is said to have gone quiet: the run
/// artefacts record no producer pid, so whether its process is gone cannot be told.
pub const IDLE_SECS: f64 = 30.0;

/// Validated `tally watch` settings.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// The run directory, or one event file.
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
fn generic_facts(dir: &Path) -> RunFacts {
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

/// How a run's events reach the terminal state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A logger's run: replayed into the RL panel.
    Logger,
    /// Any other run: the generic dashboard.
    Generic,
}

/// One step's values of a generic run, gathered across its events (writers such as
/// tensorboardX put one scalar in each event) into one window sample.
#[derive(Debug)]
struct Pending {
    step: i64,
    t: f64,
    values: Vec<(Tag, f64)>,
}

/// Follows a run's event files into a [`TerminalState`].
#[derive(Debug)]
pub struct Tailer {
    /// Where the run's JSON artefacts are.
    dir: PathBuf,
    /// The one event file to read, when an event file rather than a directory was given.
    only: Option<PathBuf>,
    /// `None` until the first event file shows which kind of run this is.
    kind: Option<Kind>,
    /// The run's own event files.
    main: Follow,
    /// A generic run's sub-runs, by directory, with their names.
    subruns: BTreeMap<PathBuf, (String, Follow)>,
    clock: Arc<dyn Clock>,
    replay: Replay,
    pending: Option<Pending>,
    last_record: Option<f64>,
    idle_said: bool,
}

impl Tailer {
    /// A tailer of a logger's run at `path` (a run directory, whose event files may not exist
    /// yet, or one event file) whose events are placed on `clock`.
    pub fn new(path: impl Into<PathBuf>, clock: Arc<dyn Clock>) -> Tailer {
        Tailer::with_kind(path.into(), clock, Some(Kind::Logger))
    }

    /// A tailer of another tool's run at `path`: the generic dashboard.
    pub fn generic(path: impl Into<PathBuf>, clock: Arc<dyn Clock>) -> Tailer {
        Tailer::with_kind(path.into(), clock, Some(Kind::Generic))
    }

    /// A tailer that tells the kind of run at `path` from its `run_config.json` when the first
    /// event file appears (a logger writes the config first), and sets `state` up for it.
    pub fn detect(path: impl Into<PathBuf>, clock: Arc<dyn Clock>) -> Tailer {
        Tailer::with_kind(path.into(), clock, None)
    }

    fn with_kind(path: PathBuf, clock: Arc<dyn Clock>, kind: Option<Kind>) -> Tailer {
        let (dir, only) = split_target(path);
        Tailer {
            dir,
            only,
            kind,
            main: Follow::default(),
            subruns: BTreeMap::new(),
            replay: Replay::new(clock.clone()),
            clock,
            pending: None,
            last_record: None,
            idle_said: false,
        }
    }

    /// Set `state` up for the kind of run found, once: a logger's run gets its facts, any
    /// other run the generic dashboard.
    fn decide(&mut self, state: &Mutex<TerminalState>) -> Result<(), CliError> {
        if self.kind.is_some() {
            return Ok(());
        }
        check_schema(&self.dir)?;
        let kind = if is_logger_run(&self.dir) {
            Kind::Logger
        } else {
            Kind::Generic
        };
        let mut s = lock(state);
        if kind == Kind::Logger {
            s.facts = read_facts(&self.dir);
            s.board = None;
        } else {
            s.facts = generic_facts(&self.dir);
            s.board.get_or_insert_with(TagBoard::default);
        }
        self.kind = Some(kind);
        Ok(())
    }

    /// Read every complete event appended since the last call into `state`; returns how many
    /// events with scalars were added. A corrupt record is an error naming the file and byte
    /// offset, also shown in the panel (`watch` stops there).
    pub fn poll(&mut self, state: &Mutex<TerminalState>) -> Result<usize, CliError> {
        let result = self.read(state);
        self.flush(state);
        if let Err(e) = &result {
            self.message(state, Level::Error, e.to_string());
        }
        if matches!(result, Ok(n) if n > 0) {
            self.last_record = Some(self.clock.monotonic());
            self.idle_said = false;
        }
        result
    }

    /// Read every complete event of the run and of its sub-runs, merged in wall-time order (the
    /// run's own first on a tie), so one step's values from every file meet in one window
    /// sample.
    fn read(&mut self, state: &Mutex<TerminalState>) -> Result<usize, CliError> {
        let mut added = 0;
        let (dir, only) = (self.dir.clone(), self.only.clone());
        self.find_subruns()?;
        self.main.wake();
        for (_, follow) in self.subruns.values_mut() {
            follow.wake();
        }
        loop {
            let warn = warning(&self.replay, state);
            let main = self
                .main
                .peek(|| target_files(&dir, only.as_deref()), warn)?;
            if main.is_some() && self.kind.is_none() {
                self.decide(state)?;
                self.find_subruns()?;
            }
            let mut first = main.map(|wall| (wall, None));
            for (sub_dir, (_, follow)) in &mut self.subruns {
                let warn = warning(&self.replay, state);
                if let Some(wall) = follow.peek(|| dir_event_files(sub_dir), warn)? {
                    if first.as_ref().is_none_or(|(w, _)| wall < *w) {
                        first = Some((wall, Some(sub_dir.clone())));
                    }
                }
            }
            let Some((_, from)) = first else {
                return Ok(added);
            };
            let (event, name) = match &from {
                None => (self.main.take(), None),
                Some(d) => {
                    let (name, follow) = self.subruns.get_mut(d).expect("found above");
                    (follow.take(), Some(name.clone()))
                }
            };
            let mut scalars: Vec<ScalarEvent> = event.into_iter().flat_map(into_scalars).collect();
            if let Some(name) = name {
                for sc in &mut scalars {
                    sc.tag = subrun_tag(&name, &sc.tag);
                }
            }
            if !scalars.is_empty() {
                self.push(state, &scalars);
                added += 1;
            }
        }
    }

    /// Add a generic run's sub-runs not known yet (`add_scalars` opens them on first use). A
    /// logger's run has no place for them on the RL panel; a single event file given has none.
    fn find_subruns(&mut self) -> Result<(), CliError> {
        if self.kind != Some(Kind::Generic) || self.only.is_some() {
            return Ok(());
        }
        for (name, dir) in run_with_subruns(&self.dir)?.subruns {
            self.subruns
                .entry(dir)
                .or_insert_with(|| (name, Follow::default()));
        }
        Ok(())
    }

    fn push(&mut self, state: &Mutex<TerminalState>, scalars: &[ScalarEvent]) {
        let (step, wall) = (scalars[0].step, scalars[0].wall_time);
        if self.kind == Some(Kind::Logger) {
            self.replay.event(&mut lock(state), step, wall, scalars);
            return;
        }
        let t = self.clock.monotonic_at(wall);
        if self.pending.as_ref().is_some_and(|p| p.step != step) {
            self.flush(state);
        }
        let mut s = lock(state);
        let board = s.board.get_or_insert_with(TagBoard::default);
        for sc in scalars {
            board.record(&sc.tag, sc.value, sc.step, t);
        }
        let p = self.pending.get_or_insert_with(|| Pending {
            step,
            t,
            values: Vec::new(),
        });
        p.values.extend(
            scalars
                .iter()
                .map(|sc| (Tag::User(Arc::from(sc.tag.as_str())), sc.value)),
        );
    }

    /// Put the gathered step of a generic run into the window.
    fn flush(&mut self, state: &Mutex<TerminalState>) {
        let Some(p) = self.pending.take() else {
            return;
        };
        let sample = Sample {
            t: p.t,
            iteration: p.step.max(0) as u64,
            values: p.values,
        };
        lock(state).push(sample, None, SystemInfo::default(), 0);
    }

    /// Show a status line now.
    pub fn message(&self, state: &Mutex<TerminalState>, level: Level, text: String) {
        self.replay.message(&mut lock(state), level, text);
    }

    /// Mark the run ended in `state` when its summary says so; returns whether it has ended.
    /// The files are read once more first (the writer closes them before its last summary), and
    /// a record the run ended in the middle of is reported as a truncated tail.
    pub fn check_end(&mut self, state: &Mutex<TerminalState>) -> Result<bool, CliError> {
        let Some(status) = read_status(&self.dir).filter(|s| s != "running") else {
            return Ok(false);
        };
        self.poll(state)?;
        if let Some((path, at, bytes)) = self.main.partial_tail() {
            let text = format!(
                "{}: truncated final record at byte {at} ({bytes} bytes): the run ended before it \
                 was written whole",
                path.display(),
            );
            self.message(state, Level::Warning, text);
        }
        self.replay.finish(&mut lock(state), &status);
        Ok(true)
    }

    /// Say once, on the panel, that no record has come for [`IDLE_SECS`] (counted from the
    /// last record, or from the first call); said again after records resume and stop again.
    /// Returns whether it was said now.
    pub fn check_idle(&mut self, state: &Mutex<TerminalState>) -> bool {
        let now = self.clock.monotonic();
        let since = *self.last_record.get_or_insert(now);
        if self.idle_said || now - since < IDLE_SECS {
            return false;
        }
        self.idle_said = true;
        let text = format!("No new record for {IDLE_SECS:.0}s: the writer may have stopped");
        self.message(state, Level::Info, text);
        true
    }
}

/// What `watch` was given, as (the directory of the run's JSON artefacts, the one event file
/// to read): an event file is read alone, its directory holding its artefacts.
fn split_target(path: PathBuf) -> (PathBuf, Option<PathBuf>) {
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

/// The event files to read: the one given, else the run's own ([`run_with_subruns`]).
fn target_files(dir: &Path, only: Option<&Path>) -> tally_read::Result<Vec<PathBuf>> {
    match only {
        Some(file) => Ok(vec![file.to_owned()]),
        None => run_with_subruns(dir).map(|r| r.files),
    }
}

/// Where a follower's warnings go: a warning line on the panel.
fn warning<'a>(replay: &'a Replay, state: &'a Mutex<TerminalState>) -> impl FnMut(String) + 'a {
    move |text| replay.message(&mut lock(state), Level::Warning, text)
}

fn lock(state: &Mutex<TerminalState>) -> std::sync::MutexGuard<'_, TerminalState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// SIGHUP seen: the terminal hung up. Registered beside the Ctrl-C handler (which also counts
/// it as an interrupt), so `watch` can tell a hang-up from Ctrl-C.
fn hangup_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGHUP, flag.clone()) {
        let _ = writeln!(std::io::stderr(), "tally: cannot watch for SIGHUP: {e}");
    }
    flag
}

/// Why the watch loop ended.
enum End {
    /// `q`, or the run ended (plain mode).
    Done,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// SIGHUP.
    HungUp,
    /// The panel stopped on its own: a write to the terminal failed, or its input ended.
    TerminalGone,
    /// A corrupt record, or the run refused.
    Failed(CliError),
}

/// `tally watch`: render the run until `q` (live), or until it ends (plain).
pub fn main(c: &WatchConfig) -> Result<Exit, CliError> {
    let (dir, only) = split_target(c.run_dir.clone());
    if only.is_none() && !dir.is_dir() {
        return Err(CliError::Refused(format!(
            "{} is not a run directory or an event file",
            c.run_dir.display()
        )));
    }
    let dir = &dir;
    check_schema(dir)?;
    let mut initial = TerminalState::new(read_facts(dir));
    if !is_logger_run(dir) {
        // Until the first event file says otherwise, the run is shown generically.
        initial.facts = generic_facts(dir);
        initial.board = Some(TagBoard::default());
    }
    let state = Arc::new(Mutex::new(initial));
    let clock: Arc<dyn Clock> = Arc::new(SystemClock::default());
    let mut tailer = Tailer::detect(&c.run_dir, clock.clone());
    // Catch up before the first frame: a finished run shows its final state at once.
    if tailer.poll(&state)? == 0 {
        let waiting = format!("Waiting for events in {}", dir.display());
        tailer.message(&state, Level::Info, waiting);
    }
    let mut finished = tailer.check_end(&state)?;
    let stop = crate::interrupt::interrupt_flag();
    let hup = hangup_flag();
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
    let end = loop {
        // A hang-up also sets the interrupt flag: look at it first.
        if hup.load(Ordering::SeqCst) {
            break End::HungUp;
        }
        if !panel.is_running() {
            break End::TerminalGone;
        }
        if stop.load(Ordering::SeqCst) {
            break End::Interrupted;
        }
        // Plain lines end with the run; the live panel stays until `q`.
        if panel.quit_requested() || (finished && !live) {
            break End::Done;
        }
        std::thread::sleep(POLL);
        match tailer.poll(&state) {
            Ok(n) if n > 0 => panel.refresh(),
            Ok(_) => {}
            Err(e) => break End::Failed(e),
        }
        if !finished {
            match tailer.check_end(&state) {
                Ok(ended) => finished = ended,
                Err(e) => break End::Failed(e),
            }
        }
        if !finished && tailer.check_idle(&state) {
            panel.refresh();
        }
    };
    let stopped = panel.stop();
    let mut stderr = std::io::stderr();
    // stderr may be the terminal that went away: these lines are best effort.
    match end {
        End::Failed(e) => return Err(e),
        End::HungUp => {
            let _ = writeln!(
                stderr,
                "tally watch: the terminal hung up (SIGHUP); stopped"
            );
            return Ok(Exit::Success);
        }
        End::TerminalGone => {
            // The panel said why (once) when it stopped: a write failed, or the terminal's
            // input ended (docs/contract/panel.md "A closed terminal").
            let _ = writeln!(stderr, "tally watch: the terminal went away; stopped");
            return Ok(Exit::Success);
        }
        End::Interrupted | End::Done => {}
    }
    // The run was shown; a panel that fails to restore is reported but is not the run's failure.
    if let Err(e) = stopped {
        let _ = writeln!(stderr, "tally: panel: {e}");
    }
    Ok(if matches!(end, End::Interrupted) {
        Exit::Interrupted
    } else {
        Exit::Success
    })
}
