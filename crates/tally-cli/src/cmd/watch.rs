//! `tally watch RUN_DIR|EVENT_FILE`: the live panel of any run, rebuilt from its event files and
//! following them as they grow (`docs/contract/panel.md` "tally watch").
//!
//! A run written by `tally.Logger` (its `run_config.json` has the logger block) is replayed
//! through [`tally::replay::Replay`], the same calls a live logger makes, into the RL panel. Any
//! other run (tensorboardX, torch, stable-baselines3, `tally.SummaryWriter`) gets the generic
//! dashboard: every scalar tag on the state's [`TagBoard`] and in the 2 s window.
//!
//! The run's event files ([`run_with_subruns`](tally_read::files::run_with_subruns)) are
//! followed with the resumable reader ([`Follow`](tally_read::follow::Follow)) by
//! [`tailer::Tailer`]; a generic run's sub-runs (`add_scalars` series) are followed beside it,
//! their scalars shown under [`subrun_tag`](tally_read::follow::subrun_tag). A corrupt record
//! ends `watch` with an error naming the file and byte offset; the terminal going away (SIGHUP,
//! a failed write) ends it with exit 0 and a line saying so.

mod facts;
mod health;
mod tailer;

use super::PanelMode;
use crate::error::{CliError, Exit};
use facts::{generic_facts, split_target};
pub use facts::{is_logger_run, read_facts};
pub(crate) use health::summary_findings;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
pub use tailer::{Polled, Tailer, IDLE_SECS};
use tally::board::TagBoard;
use tally::terminal::TerminalState;
use tally::{Clock, SystemClock};
use tally_read::meta::check_schema;
use tally_tui::{Output, Panel, PanelOptions};

/// `tally watch`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A run directory (holds events.out.tfevents.*, and run_config.json for a tally run),
    /// one event file, or a folder of runs (shown as curves).
    pub run_dir: PathBuf,
    /// Each tag's whole series as a curve in the terminal, the runs under the path overlaid
    /// (arrows or j/k scroll, h/l and space pick runs, / filters tags, q quits); with
    /// --panel off or off a terminal, one frame printed as text.
    #[arg(long)]
    pub curves: bool,
    /// Live panel: auto (on a terminal), on, or off (plain summary lines until the run ends).
    #[arg(long, value_enum, default_value_t = PanelMode::Auto)]
    pub panel: PanelMode,
    /// Seconds between plain summary lines.
    #[arg(long, default_value_t = 10.0)]
    pub every: f64,
}

impl Args {
    /// Check the flags and run the panel (`lib.rs` sends `--curves` and a folder of runs to
    /// `curves`, which builds on this module).
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args {
            run_dir,
            curves: _,
            panel,
            every,
        } = self;
        if !(every.is_finite() && every > 0.0) {
            return Err(CliError::Usage(format!(
                "--every {every} must be a positive number of seconds"
            )));
        }
        let c = WatchConfig {
            run_dir,
            panel: panel.into(),
            every: std::time::Duration::from_secs_f64(every),
        };
        main(&c)
    }
}

/// How often the event files and the run summary are polled while records come.
pub const POLL: Duration = Duration::from_millis(200);
/// The longest wait between polls: while nothing changes the wait doubles up to this, so an
/// idle watch costs little and a new record still shows within a second.
pub const MAX_POLL: Duration = Duration::from_secs(1);
/// How often the loop looks at keys and signals while it waits.
const TICK: Duration = Duration::from_millis(50);

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

/// SIGHUP seen: the terminal hung up. Registered beside the Ctrl-C handler (which also counts
/// it as an interrupt), so `watch` can tell a hang-up from Ctrl-C.
pub(crate) fn hangup_flag() -> Arc<AtomicBool> {
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
    // Signals first: reading a large run, or walking thousands of files, heeds them.
    let stop = crate::interrupt::interrupt_flag();
    let hup = hangup_flag();
    // Catch up before the first frame, one bounded share (a finished run of ordinary size
    // shows its final state at once); the rest is read in the loop, between frames.
    let mut polled = tailer.poll_some(&state)?;
    let mut finished = !polled.more && tailer.check_end(&state)?;
    let mut panel = Panel::start(
        state.clone(),
        clock,
        PanelOptions {
            mode: c.panel,
            plain_interval: c.every,
            keys: true,
            shows_own_run: false,
            ..PanelOptions::default()
        },
    );
    let live = panel.output() == Output::Live;
    // The wait between polls: POLL while records come, doubling to MAX_POLL while nothing
    // changes (docs/contract/panel.md "tally watch").
    let mut wait = POLL;
    let end = 'watch: loop {
        let mut waited = Duration::ZERO;
        loop {
            // A hang-up also sets the interrupt flag: look at it first.
            if hup.load(Ordering::SeqCst) {
                break 'watch End::HungUp;
            }
            if !panel.is_running() {
                break 'watch End::TerminalGone;
            }
            if stop.load(Ordering::SeqCst) {
                break 'watch End::Interrupted;
            }
            // Plain lines end with the run; the live panel stays until `q`.
            if panel.quit_requested() || (finished && !live) {
                break 'watch End::Done;
            }
            if polled.more || waited >= wait {
                break;
            }
            std::thread::sleep(TICK);
            waited += TICK;
        }
        polled = match tailer.poll_some(&state) {
            Ok(p) => p,
            Err(e) => break End::Failed(e),
        };
        if polled.added > 0 || polled.more {
            panel.refresh();
            wait = POLL;
        } else {
            wait = (wait * 2).min(MAX_POLL);
        }
        if !finished && !polled.more {
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
