//! The only code that touches the terminal: the 2 Hz render thread with its inline viewport,
//! the plain-text printer, keys for `tally watch`, and restoring the terminal on stop, drop,
//! panic and interrupt.
//!
//! - `live`: the inline viewport, redrawn on the panel's clock, with lines printed above it.
//! - `console`: the user's own lines, printed above the live viewport from any thread.
//! - `printer`: plain lines when the live panel does not run.
//! - `restore`: one live panel per process; the terminal restored exactly once.
//! - `screen`: [`Screen`], a full-height viewport the caller draws into (the curves view).
//! - `options`: [`PanelOptions`], how to run the panel.
//! - `command`: what the panel thread is told; `feed`: what it reads from the logger.
//!
//! A fixed 2 Hz clock independent of the training loop (`docs/contract/panel.md`, "One
//! producer, a fixed clock"): `Logger::step` only updates the shared [`TerminalState`] (a
//! short mutex hold) and never renders or waits on the terminal. The panel thread takes a snapshot under the lock,
//! releases it, and only then draws.

mod command;
mod console;
mod feed;
mod keys;
mod live;
mod options;
mod printer;
mod restore;
mod screen;
mod viewport;

pub use console::{Console, Stream};
pub use options::{PanelOptions, PLAIN_INTERVAL, REFRESH};
pub use restore::restore_terminal;
pub use screen::Screen;

use crate::mode::{Mode, Output, TermEnv};
use command::Command;
use console::Gate;
use crossterm::terminal as ct;
use live::Live;
use printer::plain_loop;
use restore::{install_panic_hook, ACTIVE, RAW, RESTORED};
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use tally::terminal::TerminalState;
use tally::Clock;

/// Starts the panel.
#[derive(Debug)]
pub struct Panel;

/// A running panel. [`PanelHandle::stop`] (or dropping the handle) draws the last frame and
/// restores the terminal.
#[derive(Debug)]
pub struct PanelHandle {
    output: Output,
    gate: Arc<Gate>,
    tx: Sender<Command>,
    thread: Option<JoinHandle<()>>,
    quit: Arc<AtomicBool>,
}

impl Panel {
    /// Start rendering a logger's terminal state on its own thread and hand the logger the
    /// handle: the logger stops the panel right after it closes. Returns the [`Console`] that
    /// prints the caller's lines above the panel (its `output()` says what is running).
    pub fn attach(log: &mut tally::Logger, options: PanelOptions) -> Console {
        let handle = Panel::start(log.terminal(), log.clock(), options);
        let console = handle.console();
        log.attach_view(Box::new(handle));
        console
    }

    /// Start rendering `terminal` on its own thread; its times are readings of `clock`.
    ///
    /// The live panel runs when the mode and the terminal allow it (and no other live panel
    /// runs in this process); otherwise plain lines are printed. Never fails: a terminal that
    /// cannot be driven falls back to plain text.
    pub fn start(
        terminal: Arc<Mutex<TerminalState>>,
        clock: Arc<dyn Clock>,
        mut options: PanelOptions,
    ) -> PanelHandle {
        let env = TermEnv::detect();
        let wanted = env.output(options.mode);
        options.color = Some(options.color.unwrap_or_else(|| env.color()));
        let (tx, rx) = mpsc::channel();
        let gate = Arc::new(Gate::default());
        let quit = Arc::new(AtomicBool::new(false));
        if wanted == Output::Off {
            // Nothing to print: no thread, and the user's lines go straight to their stream.
            return PanelHandle {
                output: Output::Off,
                gate,
                tx,
                thread: None,
                quit,
            };
        }
        let (ready_tx, ready_rx) = mpsc::channel();
        let q = quit.clone();
        let link = Link {
            gate: gate.clone(),
            tx: tx.clone(),
            rx,
        };
        let spawned = std::thread::Builder::new()
            .name("tally-panel".into())
            .spawn(move || run(terminal, clock, options, wanted, link, ready_tx, q));
        match spawned {
            Ok(thread) => {
                let output = ready_rx.recv().unwrap_or(Output::Plain);
                PanelHandle {
                    output,
                    gate,
                    tx,
                    thread: Some(thread),
                    quit,
                }
            }
            Err(e) => {
                eprintln!("tally: cannot start the panel thread: {e}");
                PanelHandle {
                    output: Output::Plain,
                    gate,
                    tx,
                    thread: None,
                    quit,
                }
            }
        }
    }
}

impl PanelHandle {
    /// What is running: the live panel or plain lines.
    pub fn output(&self) -> Output {
        self.output
    }

    /// The console that prints the user's lines above this panel, from any thread.
    pub fn console(&self) -> Console {
        Console::new(self.gate.clone(), self.output)
    }

    /// Print a line above the panel (it scrolls up with the terminal), or as a plain line.
    pub fn log(&self, line: impl Into<String>) {
        let _ = self.tx.send(Command::Log(line.into()));
    }

    /// Draw a frame now instead of at the next tick.
    pub fn refresh(&self) {
        let _ = self.tx.send(Command::Refresh);
    }

    /// Whether the panel thread still runs: it ends early when writing to the terminal fails
    /// (the terminal or the pipe went away), saying so once on stderr.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Whether the user pressed `q`, `Esc` or Ctrl-C (key mode only).
    pub fn quit_requested(&self) -> bool {
        self.quit.load(Ordering::SeqCst)
    }

    /// Draw the final frame and restore the terminal (cursor, raw mode). Idempotent. A panel
    /// that lost its output is no error here: it said so when it stopped.
    pub fn stop(&mut self) -> io::Result<()> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        let _ = self.tx.send(Command::Stop);
        thread
            .join()
            .map_err(|_| io::Error::other("the panel thread panicked"))
    }
}

impl tally::terminal::TerminalView for PanelHandle {
    fn stop(&mut self) -> io::Result<()> {
        PanelHandle::stop(self)
    }
}

impl Drop for PanelHandle {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// What the panel thread is handed: its commands, and the gate it opens while live.
struct Link {
    gate: Arc<Gate>,
    tx: Sender<Command>,
    rx: Receiver<Command>,
}

/// The panel thread. A panel that loses its output (a closed pipe, a terminal gone) stops and
/// says so once on stderr: the run it shows goes on (docs/contract/panel.md "A closed
/// terminal").
fn run(
    state: Arc<Mutex<TerminalState>>,
    clock: Arc<dyn Clock>,
    opts: PanelOptions,
    wanted: Output,
    link: Link,
    ready: Sender<Output>,
    quit: Arc<AtomicBool>,
) {
    let goes_on = match opts.shows_own_run {
        true => ", the run goes on",
        false => "",
    };
    if let Err(e) = drive(state, clock, opts, wanted, link, ready, quit) {
        // Best effort: stderr may be the terminal that went away (eprintln! would panic).
        let _ = writeln!(
            io::stderr(),
            "tally: warning: panel: {e}; the panel stopped{goes_on}"
        );
    }
}

fn drive(
    state: Arc<Mutex<TerminalState>>,
    clock: Arc<dyn Clock>,
    mut opts: PanelOptions,
    wanted: Output,
    link: Link,
    ready: Sender<Output>,
    quit: Arc<AtomicBool>,
) -> io::Result<()> {
    let Link { gate, tx, rx } = link;
    if wanted == Output::Live && !ACTIVE.swap(true, Ordering::SeqCst) {
        RESTORED.store(false, Ordering::SeqCst);
        install_panic_hook();
        let setup = Live::open(&state, &opts, clock.clone());
        match setup {
            Ok(mut live) => {
                gate.open(tx, state.clone());
                let _ = ready.send(Output::Live);
                let result = live.run(&state, &opts, &rx, &gate, &quit);
                // After a terminal error, lines not drawn still reach the terminal. (A panic
                // here drops the panel's receiver instead: later lines then fail to wake it
                // and are written by their caller.)
                let mut out = io::stdout().lock();
                for line in gate.close_and_drain() {
                    let _ = writeln!(out, "{line}");
                }
                drop(out);
                let finished = live.close();
                ACTIVE.store(false, Ordering::SeqCst);
                return result.and(finished);
            }
            Err(e) => {
                if RAW.swap(false, Ordering::SeqCst) {
                    let _ = ct::disable_raw_mode();
                }
                ACTIVE.store(false, Ordering::SeqCst);
                if opts.mode == Mode::On {
                    eprintln!("tally: cannot drive the terminal ({e}); printing plain lines");
                }
            }
        }
    }
    let _ = ready.send(Output::Plain);
    let out = opts
        .plain_writer
        .take()
        .unwrap_or_else(|| Box::new(io::stdout()));
    plain_loop(&state, &*clock, &opts, &rx, out)
}
