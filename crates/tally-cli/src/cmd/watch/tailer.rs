//! Following a run's event files (and a generic run's sub-runs) into a [`TerminalState`]: read
//! a bounded share per poll, replayed into the RL panel or put on the generic dashboard, purge
//! markers applied, the run's end and a quiet writer told (docs/contract/panel.md "tally watch"),
//! and each path the listing skipped named once (docs/contract/untrusted-input.md "Special
//! files").

use super::facts::{generic_facts, is_logger_run, read_facts, split_target};
use super::health::Health;
use crate::error::CliError;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tally::board::TagBoard;
use tally::health::live::finding_text;
use tally::replay::Replay;
use tally::terminal::{Level, TerminalState};
use tally::window::{Sample, TimeWindow};
use tally::{Clock, SystemInfo, Tag};
use tally_read::files::RunWithSubruns;
use tally_read::follow::{subrun_tag, Follow, Purge};
use tally_read::listing::RunListing;
use tally_read::meta::{check_schema, read_status};
use tally_tfevents::{into_scalars, ScalarEvent};

/// How long one poll reads before it lets the loop draw and look at keys and signals.
const READ_BUDGET: Duration = Duration::from_millis(100);
/// After this long without a new record, a running writer is said to have gone quiet: the run
/// artefacts record no producer pid, so whether its process is gone cannot be told.
pub const IDLE_SECS: f64 = 30.0;

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
    /// The run's tree, listed once per poll at the cost of what changed.
    listing: RunListing,
    /// The last poll stopped with more to read (its budget, or files left to walk).
    more: bool,
    /// Whether any event with scalars was read yet, and the last "waiting" progress shown.
    any: bool,
    waiting: Option<(usize, usize)>,
    /// The tags each sub-run (by name; the run's own: `None`) put on the board, so a purge
    /// marker in one forgets only its own.
    board_tags: BTreeMap<Option<String>, BTreeSet<String>>,
    /// The step of each entry of the state's reward history (a logger's run), so a purge drops
    /// the purged entries.
    reward_steps: VecDeque<i64>,
    /// The run's health (docs/contract/health.md "In tally watch").
    health: Health,
    /// The paths the listing skipped that the panel has named.
    skipped_told: BTreeSet<PathBuf>,
}

/// What one poll read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Polled {
    /// Events with scalars added.
    pub added: usize,
    /// More is there to read now: poll again without waiting.
    pub more: bool,
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
            listing: RunListing::new(&dir),
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
            more: false,
            any: false,
            waiting: None,
            board_tags: BTreeMap::new(),
            reward_steps: VecDeque::new(),
            health: Health::default(),
            skipped_told: BTreeSet::new(),
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
        let mut added = 0;
        loop {
            let polled = self.poll_some(state)?;
            added += polled.added;
            if !polled.more {
                return Ok(added);
            }
        }
    }

    /// As [`poll`](Self::poll), reading for at most about `READ_BUDGET` and walking at most
    /// [`tally_read::follow::FILES_PER_LOOK`] files of each directory: `more` says there is
    /// more to read now (docs/contract/panel.md "tally watch").
    pub fn poll_some(&mut self, state: &Mutex<TerminalState>) -> Result<Polled, CliError> {
        self.more = false;
        let result = self.read(state, Instant::now() + READ_BUDGET);
        self.flush(state);
        self.tell_skipped(state);
        self.tell_health(state);
        if let Err(e) = &result {
            self.message(state, Level::Error, e.to_string());
        }
        let added = result?;
        if added > 0 {
            self.any = true;
            self.last_record = Some(self.clock.monotonic());
            self.idle_said = false;
        }
        self.show_waiting(state);
        Ok(Polled {
            added,
            more: self.more,
        })
    }

    /// Each path the listing skipped once, with why, as a warning line: listed again at every
    /// poll, it is named only the first time (docs/contract/untrusted-input.md "Special files").
    fn tell_skipped(&mut self, state: &Mutex<TerminalState>) {
        for (path, why) in self.listing.skipped() {
            if self.skipped_told.insert(path.clone()) {
                let text = format!("{}: skipped: {why}", path.display());
                self.message(state, Level::Warning, text);
            }
        }
    }

    /// Each new finding once as a line (`health: RULE on TAG: MESSAGE`, as the logger says it),
    /// and the newest as it stands on the Health line (docs/contract/health.md "In tally
    /// watch").
    fn tell_health(&mut self, state: &Mutex<TerminalState>) {
        let findings = match self.kind {
            Some(Kind::Logger) => {
                self.health.read_summary(&self.dir);
                &self.health.from_summary[..]
            }
            Some(Kind::Generic) => {
                self.health.judge_end(&self.dir, self.clock.as_ref());
                self.health.eval.findings()
            }
            None => return,
        };
        let new: Vec<String> = findings
            .iter()
            .skip(self.health.told)
            .map(finding_text)
            .collect();
        let newest = findings.last().cloned();
        self.health.told = self.health.told.max(findings.len());
        for text in new {
            self.message(state, Level::Warning, text);
        }
        if newest.is_some() {
            lock(state).health_read = newest;
        }
    }

    /// While no record has come, say so, with how far the walk over the run's files got.
    fn show_waiting(&mut self, state: &Mutex<TerminalState>) {
        if self.any {
            return;
        }
        let progress = self.main.progress().unwrap_or((0, 0));
        if self.waiting == Some(progress) {
            return;
        }
        self.waiting = Some(progress);
        let text = match progress {
            (_, 0) => format!("Waiting for events in {}", self.dir.display()),
            (at, total) => format!(
                "Waiting for events in {}: {at} of {total} event files read, none holds a record yet",
                self.dir.display()
            ),
        };
        // A bucket's mirror is named by its URL (docs/contract/object-storage.md).
        self.message(state, Level::Info, crate::stderr::shown(text));
    }

    /// Read every complete event of the run and of its sub-runs, merged in wall-time order (the
    /// run's own first on a tie), so one step's values from every file meet in one window
    /// sample; until `deadline`, then `more` is set. A purge marker met on the way is applied
    /// before the next event of its run.
    fn read(&mut self, state: &Mutex<TerminalState>, deadline: Instant) -> Result<usize, CliError> {
        let mut added = 0;
        let mut listed = self.list()?;
        self.find_subruns(&listed);
        self.main.wake();
        for (_, follow) in self.subruns.values_mut() {
            follow.wake();
        }
        loop {
            if added % 64 == 63 && Instant::now() > deadline {
                self.more = true;
                return Ok(added);
            }
            let warn = warning(&self.replay, state);
            let main_files = || Ok(listed.files.clone());
            let main = self.main.peek(main_files, warn)?;
            self.more |= self.main.more();
            let mut purges: Vec<(Option<String>, Purge)> = Vec::new();
            if let Some(p) = self.main.take_purge() {
                purges.push((None, p));
            }
            if main.is_some() && self.kind.is_none() {
                self.decide(state)?;
                listed = self.list()?;
                self.find_subruns(&listed);
            }
            let mut first = main.map(|wall| (wall, None));
            let listing = &self.listing;
            for (sub_dir, (name, follow)) in &mut self.subruns {
                let warn = warning(&self.replay, state);
                let wall = follow.peek(|| Ok(listing.files_of(sub_dir)), warn)?;
                self.more |= follow.more();
                if let Some(p) = follow.take_purge() {
                    purges.push((Some(name.clone()), p));
                }
                if let Some(wall) = wall {
                    if first.as_ref().is_none_or(|(w, _)| wall < *w) {
                        first = Some((wall, Some(sub_dir.clone())));
                    }
                }
            }
            for (source, purge) in purges {
                self.purge(state, source, purge);
            }
            let Some((_, from)) = first else {
                return Ok(added);
            };
            let (event, name) = match &from {
                None => {
                    let event = self.main.take();
                    let file = self.main.progress().map(|(at, _)| at);
                    if file != self.health.file {
                        if self.health.file.is_some() {
                            // A resumed run's next file (docs/contract/health.md "Stall").
                            self.health.eval.new_segment();
                        }
                        self.health.file = file;
                    }
                    (event, None)
                }
                Some(d) => {
                    let (name, follow) = self.subruns.get_mut(d).expect("found above");
                    (follow.take(), Some(name.clone()))
                }
            };
            let mut scalars: Vec<ScalarEvent> = event.into_iter().flat_map(into_scalars).collect();
            if let Some(name) = &name {
                for sc in &mut scalars {
                    sc.tag = subrun_tag(name, &sc.tag);
                }
            }
            if !scalars.is_empty() {
                self.push(state, &scalars, name);
                added += 1;
            }
        }
    }

    /// The run's files and sub-runs now: the one event file given, else the run's tree.
    fn list(&mut self) -> Result<RunWithSubruns, CliError> {
        match &self.only {
            Some(file) => Ok(RunWithSubruns {
                files: vec![file.clone()],
                subruns: Vec::new(),
            }),
            None => Ok(self.listing.list()?),
        }
    }

    /// Apply a purge marker of the run (`source` `None`) or of a sub-run: what was shown from
    /// its earlier files at the marker's step or later goes (docs/contract/consumers.md
    /// "Following a run: tally watch"), and each drop is reported as the readers report it.
    fn purge(&mut self, state: &Mutex<TerminalState>, source: Option<String>, purge: Purge) {
        if self.pending.as_ref().is_some_and(|p| p.step >= purge.step) {
            self.pending = None;
        }
        self.flush(state);
        let mut s = lock(state);
        // The window's sums cannot lose single samples: it starts again from the new session.
        s.window = TimeWindow::default();
        if let Some(board) = s.board.as_mut() {
            let own = self.board_tags.get(&source);
            board.purge(purge.step, |tag| own.is_some_and(|t| t.contains(tag)));
        }
        let steps = &mut self.reward_steps;
        let mut kept = steps.iter().map(|step| *step < purge.step);
        s.reward_history.retain(|_| kept.next().unwrap_or(true));
        steps.retain(|step| *step < purge.step);
        for d in &purge.damage {
            self.replay.message(&mut s, Level::Warning, d.to_string());
        }
    }

    /// Add a generic run's sub-runs not known yet (`add_scalars` opens them on first use). A
    /// logger's run has no place for them on the RL panel; a single event file given has none.
    fn find_subruns(&mut self, listed: &RunWithSubruns) {
        if self.kind != Some(Kind::Generic) || self.only.is_some() {
            return;
        }
        for (name, dir) in &listed.subruns {
            self.subruns
                .entry(dir.clone())
                .or_insert_with(|| (name.clone(), Follow::default()));
        }
    }

    fn push(
        &mut self,
        state: &Mutex<TerminalState>,
        scalars: &[ScalarEvent],
        source: Option<String>,
    ) {
        let (step, wall) = (scalars[0].step, scalars[0].wall_time);
        if self.kind == Some(Kind::Logger) {
            let mut s = lock(state);
            self.replay.event(&mut s, step, wall, scalars);
            // The reward history's steps, entry for entry (what the replay pushed to it).
            if scalars.iter().any(|sc| sc.tag == "Train/mean_reward") {
                self.reward_steps.push_back(step);
            }
            while self.reward_steps.len() > s.reward_history.len() {
                self.reward_steps.pop_front();
            }
            return;
        }
        let own = self.board_tags.entry(source).or_default();
        for sc in scalars {
            if !own.contains(&sc.tag) {
                own.insert(sc.tag.clone());
            }
        }
        let t = self.clock.monotonic_at(wall);
        if self.pending.as_ref().is_some_and(|p| p.step != step) {
            self.flush(state);
        }
        for sc in scalars {
            self.health.value(sc);
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

/// Where a follower's warnings go: a warning line on the panel.
fn warning<'a>(replay: &'a Replay, state: &'a Mutex<TerminalState>) -> impl FnMut(String) + 'a {
    move |text| replay.message(&mut lock(state), Level::Warning, text)
}

fn lock(state: &Mutex<TerminalState>) -> std::sync::MutexGuard<'_, TerminalState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}
