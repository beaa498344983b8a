//! The terminal state the logger keeps for the panel: the window, reward history, status.
//!
//! The logger updates it on every step (never rendering); the panel thread takes a
//! [`PanelSnapshot`] at its own 2 Hz clock. Rendering never does I/O; I/O never renders.

use crate::board::TagBoard;
use crate::input::SystemInfo;
use crate::window::{Sample, TimeWindow, WindowSnapshot};
use std::collections::VecDeque;
use tally_schema::Profile;

/// Reward history length (one entry per step carrying a return; docs/contract/panel.md).
pub const REWARD_HISTORY: usize = 200;
/// Status and error lines kept for display.
pub const MESSAGE_HISTORY: usize = 64;

/// A live view of the terminal state (the panel). The logger owns it and stops it right after
/// the run is closed, so the last frame shows the final status.
pub trait TerminalView: Send {
    /// Draw the last frame and give the terminal back.
    fn stop(&mut self) -> std::io::Result<()>;
}

/// Severity of a status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Ordinary progress (warm-up, buffer fill, checkpoint saved).
    Info,
    /// A contract warning (accounted above Iter Wall, sink trouble).
    Warning,
    /// An error.
    Error,
}

/// A status line with its monotonic time.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Seconds on the logger's clock.
    pub t: f64,
    /// Severity.
    pub level: Level,
    /// The text.
    pub text: String,
    /// Progress a later line replaces (warm-up, buffer fill): the status. A note the logger
    /// says once (no GPU metrics) is not, so it never takes a status's place.
    pub progress: bool,
}

/// Static facts the panel title and header show.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFacts {
    /// Algorithm as given.
    pub algo: String,
    /// Task.
    pub task: String,
    /// Simulation backend (empty when the run names none).
    pub sim: String,
    /// The run's display name, when given (the panel title shows it instead of algo · task · sim).
    pub name: Option<String>,
    /// World size.
    pub num_gpus: u32,
    /// Environments per rank, when known.
    pub num_envs: Option<u64>,
    /// Last iteration, when known (progress and ETA need it).
    pub max_iterations: Option<u64>,
    /// Timing profile.
    pub profile: Profile,
}

/// Everything the panel needs, updated by the logger.
#[derive(Debug, Clone)]
pub struct TerminalState {
    /// Run facts.
    pub facts: RunFacts,
    /// The 2 s window.
    pub window: TimeWindow,
    /// Recent collector 100-episode returns.
    pub reward_history: VecDeque<f64>,
    /// Current status ("Initializing...", "Warming up...", "Training", ...).
    pub status: String,
    /// Recent status/warning/error lines.
    pub messages: VecDeque<Message>,
    /// Latest system facts.
    pub system: SystemInfo,
    /// Latest iteration.
    pub iteration: u64,
    /// Latest cumulative env steps.
    pub env_steps: u64,
    /// Monotonic time of the first step (training start; warm-up excluded).
    pub training_started_at: Option<f64>,
    /// Contract warnings so far.
    pub contract_warnings: u64,
    /// Bumped on every change, so a renderer can skip identical frames.
    pub version: u64,
    /// Time of the latest sample or message, on the same clock as `Message::t` (a panel
    /// estimates "now" on that clock from it).
    pub updated_at: Option<f64>,
    /// When the run ended (elapsed time and ETA freeze here); `None` while it runs.
    pub finished_at: Option<f64>,
    /// Messages recorded so far, including those evicted from `messages`.
    pub messages_total: u64,
    /// Every tag's newest value, for a run shown without a schema (`tally watch` of another
    /// tool's run: the generic dashboard); `None` for a logger's run.
    pub board: Option<TagBoard>,
    /// The run's health findings, for the panel's Health line (docs/contract/health.md "In
    /// the logger"); `None` when no rule is on.
    pub health: Option<std::sync::Arc<crate::health::LiveHealth>>,
    /// The newest finding of a run followed by a reader (`tally watch`: the rules on what it
    /// reads, or the run's summary), for the same Health line when no logger is here
    /// (docs/contract/health.md "In tally watch").
    pub health_read: Option<crate::health::Finding>,
    /// The newest system sample's values (docs/contract/system-metrics.md "Where it shows").
    pub machine: Vec<(std::sync::Arc<str>, f64)>,
}

/// A copy of the terminal state taken by the panel thread.
#[derive(Debug, Clone)]
pub struct PanelSnapshot {
    /// Run facts.
    pub facts: RunFacts,
    /// Window means and n.
    pub window: WindowSnapshot,
    /// Reward history.
    pub reward_history: Vec<f64>,
    /// Status text.
    pub status: String,
    /// Recent messages.
    pub messages: Vec<Message>,
    /// Latest system facts.
    pub system: SystemInfo,
    /// Latest iteration.
    pub iteration: u64,
    /// Latest env steps.
    pub env_steps: u64,
    /// Training start.
    pub training_started_at: Option<f64>,
    /// Contract warnings so far.
    pub contract_warnings: u64,
    /// Time of the latest sample or message.
    pub updated_at: Option<f64>,
    /// When the run ended, if it has.
    pub finished_at: Option<f64>,
    /// Messages recorded so far (the last `messages.len()` of them are in `messages`).
    pub messages_total: u64,
    /// The state's change counter when the snapshot was taken.
    pub version: u64,
    /// Every tag's newest value (the generic dashboard), if the state keeps them.
    pub board: Option<TagBoard>,
    /// The newest health finding, as it stands now, if any rule fired.
    pub health: Option<crate::health::Finding>,
    /// The newest system sample's values.
    pub machine: Vec<(std::sync::Arc<str>, f64)>,
}

impl TerminalState {
    /// A fresh state in status "Initializing...".
    pub fn new(facts: RunFacts) -> Self {
        TerminalState {
            facts,
            window: TimeWindow::default(),
            reward_history: VecDeque::with_capacity(REWARD_HISTORY),
            status: "Initializing...".into(),
            messages: VecDeque::new(),
            system: SystemInfo::default(),
            iteration: 0,
            env_steps: 0,
            training_started_at: None,
            contract_warnings: 0,
            version: 0,
            updated_at: None,
            finished_at: None,
            messages_total: 0,
            board: None,
            health: None,
            health_read: None,
            machine: Vec::new(),
        }
    }

    /// Record a status line; it becomes the status unless it is a warning.
    pub fn message(&mut self, t: f64, level: Level, text: String) {
        self.record(t, level, text, true);
    }

    /// A note the logger says once about the run (no GPU metrics): shown as a line, never the
    /// status, never coalesced with warm-up progress (docs/contract/panel.md "Plain output").
    pub fn note(&mut self, t: f64, text: String) {
        self.record(t, Level::Info, text, false);
    }

    fn record(&mut self, t: f64, level: Level, text: String, progress: bool) {
        // Every line the terminal shows passes here: status text and SDK errors alike
        // (docs/contract/run-artifacts.md "Secrets").
        let text = match crate::redact::redact_text(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(clean) => clean,
        };
        if level == Level::Info && progress {
            self.status = text.clone();
        }
        if self.messages.len() == MESSAGE_HISTORY {
            self.messages.pop_front();
        }
        self.messages.push_back(Message {
            t,
            level,
            text,
            progress,
        });
        self.messages_total += 1;
        self.touch(t);
    }

    /// Mark the run as ended at `t`: a panel freezes elapsed time and ETA there.
    pub fn finish(&mut self, t: f64) {
        self.finished_at = Some(t);
        self.touch(t);
    }

    fn touch(&mut self, t: f64) {
        self.updated_at = Some(self.updated_at.map_or(t, |u| u.max(t)));
        self.version += 1;
    }

    /// Add one step's sample.
    pub fn push(
        &mut self,
        sample: Sample,
        episode_return: Option<f64>,
        system: SystemInfo,
        env_steps: u64,
    ) {
        self.training_started_at.get_or_insert(sample.t);
        let t = sample.t;
        self.iteration = sample.iteration;
        self.env_steps = env_steps;
        if self.status != "Training" {
            // Most steps find it set already: no new string.
            self.status = "Training".into();
        }
        if let Some(r) = episode_return {
            if self.reward_history.len() == REWARD_HISTORY {
                self.reward_history.pop_front();
            }
            self.reward_history.push_back(r);
        }
        let keep = |new: Option<u64>, old: Option<u64>| new.or(old);
        self.system = SystemInfo {
            buffer_size: keep(system.buffer_size, self.system.buffer_size),
            batch_size_per_rank: keep(system.batch_size_per_rank, self.system.batch_size_per_rank),
            cuda_mps: system.cuda_mps.or(self.system.cuda_mps),
        };
        self.window.push(sample);
        self.touch(t);
    }

    /// Show a system sample (`system/...` values) in place of the previous one.
    pub fn system_sample(&mut self, values: &[(std::sync::Arc<str>, f64)]) {
        self.machine.clear();
        self.machine.extend(values.iter().cloned());
        self.version += 1;
    }

    /// A copy for rendering.
    pub fn snapshot(&self) -> PanelSnapshot {
        PanelSnapshot {
            facts: self.facts.clone(),
            window: self.window.snapshot(),
            reward_history: self.reward_history.iter().copied().collect(),
            status: self.status.clone(),
            messages: self.messages.iter().cloned().collect(),
            system: self.system,
            iteration: self.iteration,
            env_steps: self.env_steps,
            training_started_at: self.training_started_at,
            contract_warnings: self.contract_warnings,
            updated_at: self.updated_at,
            finished_at: self.finished_at,
            messages_total: self.messages_total,
            version: self.version,
            board: self.board.clone(),
            health: match &self.health {
                Some(h) => h.newest(),
                None => self.health_read.clone(),
            },
            machine: self.machine.clone(),
        }
    }
}
