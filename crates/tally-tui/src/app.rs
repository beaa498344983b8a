//! The only code that touches the terminal: the 2 Hz render thread with its inline viewport,
//! the plain-text printer, keys for `tally watch`, and restoring the terminal on stop, drop,
//! panic and interrupt.
//!
//! Issue 4: a fixed 2 Hz clock independent of the training loop; `Logger::step` only updates
//! the shared [`TerminalState`] (a short mutex hold) and never renders or waits on the
//! terminal. This thread takes a snapshot under the lock, releases it, and only then draws.

use crate::glyphs::Glyphs;
use crate::mode::{Mode, Output, TermEnv};
use crate::plain::{ascii, summary_line};
use crate::state::PanelState;
use crate::view::strip_markup;
use crossterm::cursor::{MoveTo, Show};
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::terminal::{self as ct, Clear, ClearType};
use crossterm::{execute, queue};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Position;
use ratatui::style::{Color, Modifier, Style};
use ratatui::{Terminal, TerminalOptions, Viewport};
use std::io::{self, Stdout, Write};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, Once};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tally::terminal::{Level, Message, PanelSnapshot, TerminalState};
use unicode_width::UnicodeWidthChar;

/// Seed 000: the panel refreshes on a fixed 2 Hz clock.
pub const REFRESH: Duration = Duration::from_millis(500);
/// Issue 4: off a terminal, a summary line every 10 s by default.
pub const PLAIN_INTERVAL: Duration = Duration::from_secs(10);
/// How often keys are polled in key mode.
const KEY_POLL: Duration = Duration::from_millis(50);

/// Which clock the snapshot's times (`Message::t`, `training_started_at`) are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// A logger's monotonic clock: "now" is estimated from the state's `updated_at`.
    #[default]
    Logger,
    /// Seconds since the Unix epoch (event-file wall times; `tally watch`).
    Unix,
}

/// How to run the panel.
pub struct PanelOptions {
    /// `auto`, `on` or `off`.
    pub mode: Mode,
    /// Frame period (2 Hz).
    pub refresh: Duration,
    /// Seconds between plain summary lines.
    pub plain_interval: Duration,
    /// Symbols; detected from the locale when `None`.
    pub glyphs: Option<Glyphs>,
    /// Colour; `!NO_COLOR` when `None`.
    pub color: Option<bool>,
    /// Read keys (`q`, `Esc`, Ctrl-C set [`PanelHandle::quit_requested`]); puts the terminal
    /// in raw mode while the panel runs.
    pub keys: bool,
    /// The clock of the snapshot's times.
    pub clock: Clock,
    /// Where plain lines go (stdout when `None`).
    pub plain_writer: Option<Box<dyn Write + Send>>,
}

impl Default for PanelOptions {
    fn default() -> Self {
        PanelOptions {
            mode: Mode::Auto,
            refresh: REFRESH,
            plain_interval: PLAIN_INTERVAL,
            glyphs: None,
            color: None,
            keys: false,
            clock: Clock::Logger,
            plain_writer: None,
        }
    }
}

impl std::fmt::Debug for PanelOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PanelOptions")
            .field("mode", &self.mode)
            .field("refresh", &self.refresh)
            .field("plain_interval", &self.plain_interval)
            .field("glyphs", &self.glyphs)
            .field("color", &self.color)
            .field("keys", &self.keys)
            .field("clock", &self.clock)
            .field("plain_writer", &self.plain_writer.is_some())
            .finish()
    }
}

enum Command {
    Log(String),
    Refresh,
    Stop,
}

/// Starts the panel.
#[derive(Debug)]
pub struct Panel;

/// A running panel. [`PanelHandle::stop`] (or dropping the handle) draws the last frame and
/// restores the terminal.
#[derive(Debug)]
pub struct PanelHandle {
    output: Output,
    tx: Sender<Command>,
    thread: Option<JoinHandle<io::Result<()>>>,
    quit: Arc<AtomicBool>,
}

impl Panel {
    /// Start rendering `terminal` (a logger's [`tally::Logger::terminal`]) on its own thread.
    ///
    /// The live panel runs when the mode and the terminal allow it (and no other live panel
    /// runs in this process); otherwise plain lines are printed. Never fails: a terminal that
    /// cannot be driven falls back to plain text.
    pub fn start(terminal: Arc<Mutex<TerminalState>>, mut options: PanelOptions) -> PanelHandle {
        let env = TermEnv::detect();
        let wanted = env.output(options.mode);
        options.color = Some(options.color.unwrap_or_else(|| env.color()));
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let quit = Arc::new(AtomicBool::new(false));
        let q = quit.clone();
        let spawned = std::thread::Builder::new()
            .name("tally-panel".into())
            .spawn(move || run(terminal, options, wanted, rx, ready_tx, q));
        match spawned {
            Ok(thread) => {
                let output = ready_rx.recv().unwrap_or(Output::Plain);
                PanelHandle {
                    output,
                    tx,
                    thread: Some(thread),
                    quit,
                }
            }
            Err(e) => {
                eprintln!("tally: cannot start the panel thread: {e}");
                PanelHandle {
                    output: Output::Plain,
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

    /// Print a line above the panel (it scrolls up with the terminal), or as a plain line.
    pub fn log(&self, line: impl Into<String>) {
        let _ = self.tx.send(Command::Log(line.into()));
    }

    /// Draw a frame now instead of at the next tick.
    pub fn refresh(&self) {
        let _ = self.tx.send(Command::Refresh);
    }

    /// Whether the user pressed `q`, `Esc` or Ctrl-C (key mode only).
    pub fn quit_requested(&self) -> bool {
        self.quit.load(Ordering::SeqCst)
    }

    /// Draw the final frame and restore the terminal (cursor, raw mode). Idempotent.
    pub fn stop(&mut self) -> io::Result<()> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        let _ = self.tx.send(Command::Stop);
        thread
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the panel thread panicked")))
    }
}

impl Drop for PanelHandle {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

// ---- process-wide terminal restoration ------------------------------------------------------

/// A live panel owns the terminal (only one at a time).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// The terminal was already restored (by the panic hook or an interrupt handler).
static RESTORED: AtomicBool = AtomicBool::new(false);
/// The panel put the terminal in raw mode.
static RAW: AtomicBool = AtomicBool::new(false);
/// Screen row just below the viewport.
static BOTTOM: AtomicU16 = AtomicU16::new(0);
/// Held while drawing, so a restore does not interleave with a frame.
static DRAW: Mutex<()> = Mutex::new(());
static HOOK: Once = Once::new();

/// Restore the terminal now if a live panel is running: leave raw mode, move below the
/// panel and show the cursor. Afterwards the panel draws nothing more.
///
/// For interrupt handlers and panic hooks; idempotent and safe to call when no panel runs.
pub fn restore_terminal() {
    if !ACTIVE.load(Ordering::SeqCst) || RESTORED.swap(true, Ordering::SeqCst) {
        return;
    }
    // Wait briefly for a frame in progress; never block a panicking thread for long.
    let mut guard = None;
    for _ in 0..50 {
        match DRAW.try_lock() {
            Ok(g) => {
                guard = Some(g);
                break;
            }
            Err(std::sync::TryLockError::Poisoned(p)) => {
                guard = Some(p.into_inner());
                break;
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::sleep(Duration::from_millis(5))
            }
        }
    }
    leave_terminal();
    drop(guard);
}

fn leave_terminal() {
    if RAW.swap(false, Ordering::SeqCst) {
        let _ = ct::disable_raw_mode();
    }
    let mut out = io::stdout();
    let row = BOTTOM.load(Ordering::SeqCst).saturating_sub(1);
    let _ = queue!(out, MoveTo(0, row));
    let _ = out.write_all(b"\r\n");
    let _ = execute!(out, Show);
}

fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // Restore first so the panic message lands on a usable terminal.
            restore_terminal();
            previous(info);
        }));
    });
}

// ---- the render thread --------------------------------------------------------------------

/// Estimates "now" on the logger's clock from the times the state was updated.
struct NowSource {
    clock: Clock,
    origin: Instant,
    offset: Option<f64>,
}

impl NowSource {
    fn observe(&mut self, snap: &PanelSnapshot) {
        if let (Clock::Logger, Some(t)) = (self.clock, snap.updated_at) {
            // The update happened before we saw it, so each observation bounds the offset
            // from below; the largest bound is the best estimate.
            let o = t - self.origin.elapsed().as_secs_f64();
            self.offset = Some(self.offset.map_or(o, |p: f64| p.max(o)));
        }
    }

    fn now(&self) -> f64 {
        match self.clock {
            Clock::Unix => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            Clock::Logger => self
                .offset
                .map_or(0.0, |o| o + self.origin.elapsed().as_secs_f64()),
        }
    }
}

fn snapshot(state: &Mutex<TerminalState>) -> PanelSnapshot {
    state.lock().unwrap_or_else(|e| e.into_inner()).snapshot()
}

/// Messages recorded since `seen` (a count of all messages ever recorded).
fn new_messages(snap: &PanelSnapshot, seen: u64) -> &[Message] {
    let fresh = snap.messages_total.saturating_sub(seen) as usize;
    let n = snap.messages.len();
    &snap.messages[n - fresh.min(n)..]
}

/// Whether `m` is warm-up progress: an info line from before training started. Those show in
/// the panel header (or, in plain mode, only the latest one per interval); everything else
/// is also printed as a line.
fn is_warmup(m: &Message, snap: &PanelSnapshot) -> bool {
    m.level == Level::Info && snap.training_started_at.is_none_or(|t0| m.t < t0)
}

fn message_line(m: &Message) -> String {
    let text = strip_markup(&m.text);
    match m.level {
        Level::Error => format!("ERROR {text}"),
        Level::Warning => format!("WARN {text}"),
        Level::Info => text,
    }
}

fn run(
    state: Arc<Mutex<TerminalState>>,
    mut opts: PanelOptions,
    wanted: Output,
    rx: Receiver<Command>,
    ready: Sender<Output>,
    quit: Arc<AtomicBool>,
) -> io::Result<()> {
    if wanted == Output::Live && !ACTIVE.swap(true, Ordering::SeqCst) {
        RESTORED.store(false, Ordering::SeqCst);
        install_panic_hook();
        let setup = Live::open(&state, &opts);
        match setup {
            Ok(mut live) => {
                let _ = ready.send(Output::Live);
                let result = live.run(&state, &opts, &rx, &quit);
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
    plain_loop(&state, &opts, &rx, out)
}

fn plain_loop(
    state: &Mutex<TerminalState>,
    opts: &PanelOptions,
    rx: &Receiver<Command>,
    mut out: Box<dyn Write + Send>,
) -> io::Result<()> {
    let origin = Instant::now();
    let mut clock = NowSource {
        clock: opts.clock,
        origin,
        offset: None,
    };
    let mut seen = 0u64;
    let mut pending_info: Option<String> = None;
    let mut last_info: Option<Instant> = None;
    let mut last_summary: Option<Instant> = None;
    // The previous frame's model of an rft run, whose eval tables the next one keeps.
    let mut rft_model: Option<crate::state::Model> = None;
    let mut stop = false;
    while !stop {
        match rx.recv_timeout(opts.refresh) {
            Ok(Command::Log(line)) => writeln!(out, "{}", ascii(&line))?,
            Ok(Command::Refresh) | Err(RecvTimeoutError::Timeout) => {}
            Ok(Command::Stop) | Err(RecvTimeoutError::Disconnected) => stop = true,
        }
        let snap = snapshot(state);
        clock.observe(&snap);
        let training = snap.training_started_at.is_some();
        if training && snap.facts.profile == tally_schema::Profile::Rft {
            // Follow every frame: eval keys sit in the window only around an eval step.
            let now = clock.now();
            rft_model = Some(match &rft_model {
                Some(prev) => crate::state::Model::after(prev, &snap, now),
                None => crate::state::Model::build(&snap, now),
            });
        }
        for m in new_messages(&snap, seen) {
            if is_warmup(m, &snap) {
                // Warm-up progress: only the latest, at most once per interval.
                pending_info = Some(message_line(m));
            } else {
                // Keep the order: held-back warm-up progress is older than this line.
                if let Some(line) = pending_info.take() {
                    writeln!(out, "{}", ascii(&line))?;
                    last_info = Some(Instant::now());
                }
                writeln!(out, "{}", ascii(&message_line(m)))?;
            }
        }
        seen = snap.messages_total;
        let due = |t: Option<Instant>| t.is_none_or(|t| t.elapsed() >= opts.plain_interval);
        if pending_info.is_some() && (due(last_info) || training || stop) {
            if let Some(line) = pending_info.take() {
                writeln!(out, "{}", ascii(&line))?;
            }
            last_info = Some(Instant::now());
        }
        if training && (stop || due(last_summary)) {
            if last_summary.is_none() && !stop {
                // The first summary waits one interval, so a short run prints one final line.
                last_summary = Some(Instant::now());
            } else {
                let model = match &rft_model {
                    Some(m) => m.clone(),
                    None => crate::state::Model::build(&snap, clock.now()),
                };
                writeln!(out, "{}", summary_line(&model))?;
                last_summary = Some(Instant::now());
            }
        }
        out.flush()?;
    }
    Ok(())
}

type Term = Terminal<CrosstermBackend<Stdout>>;

struct Live {
    term: Option<Term>,
    view: PanelState,
    clock: NowSource,
    size: (u16, u16),
    height: u16,
    seen: u64,
    lines: Vec<(String, Style)>,
    keys: bool,
}

fn desired_height(view: &PanelState, size: (u16, u16)) -> u16 {
    view.height(size.0).min(size.1).max(3)
}

fn open_term(height: u16) -> io::Result<Term> {
    Terminal::with_options(
        CrosstermBackend::new(io::stdout()),
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )
}

impl Live {
    fn open(state: &Mutex<TerminalState>, opts: &PanelOptions) -> io::Result<Live> {
        if opts.keys {
            ct::enable_raw_mode()?;
            RAW.store(true, Ordering::SeqCst);
        }
        let size = ct::size()?;
        if size.0 < 20 || size.1 < 3 {
            return Err(io::Error::other(format!(
                "terminal of {}x{} is too small",
                size.0, size.1
            )));
        }
        let mut clock = NowSource {
            clock: opts.clock,
            origin: Instant::now(),
            offset: None,
        };
        let snap = snapshot(state);
        clock.observe(&snap);
        let seen = snap.messages_total;
        let glyphs = opts.glyphs.unwrap_or_else(Glyphs::detect);
        let view = PanelState::new(snap, clock.now(), glyphs, opts.color.unwrap_or(true));
        let height = desired_height(&view, size);
        let term = open_term(height)?;
        Ok(Live {
            term: Some(term),
            view,
            clock,
            size,
            height,
            seen,
            lines: Vec::new(),
            keys: opts.keys,
        })
    }

    fn run(
        &mut self,
        state: &Mutex<TerminalState>,
        opts: &PanelOptions,
        rx: &Receiver<Command>,
        quit: &AtomicBool,
    ) -> io::Result<()> {
        let mut next = Instant::now();
        loop {
            let mut wait = next.saturating_duration_since(Instant::now());
            if self.keys {
                wait = wait.min(KEY_POLL);
            }
            let mut force = false;
            let mut stop = false;
            let mut cmds = Vec::new();
            match rx.recv_timeout(wait) {
                Ok(cmd) => cmds.push(cmd),
                Err(RecvTimeoutError::Disconnected) => stop = true,
                Err(RecvTimeoutError::Timeout) => {}
            }
            cmds.extend(rx.try_iter());
            for cmd in cmds {
                match cmd {
                    Command::Log(l) => {
                        self.lines.push((l, Style::new()));
                        force = true;
                    }
                    Command::Refresh => force = true,
                    Command::Stop => stop = true,
                }
            }
            if self.keys {
                while event::poll(Duration::ZERO)? {
                    match event::read()? {
                        Event::Key(k) if k.kind != KeyEventKind::Release => {
                            let ctrl_c = k.code == KeyCode::Char('c')
                                && k.modifiers.contains(KeyModifiers::CONTROL);
                            if ctrl_c || matches!(k.code, KeyCode::Char('q' | 'Q') | KeyCode::Esc) {
                                quit.store(true, Ordering::SeqCst);
                                force = true;
                            }
                        }
                        Event::Resize(..) => force = true,
                        _ => {}
                    }
                }
            }
            if stop {
                // The final frame shows the state at close (status, last iteration).
                return self.frame(state);
            }
            if force || Instant::now() >= next {
                self.frame(state)?;
                next = (next + opts.refresh).max(Instant::now());
            }
        }
    }

    /// One frame: snapshot, lines above the panel, viewport size, draw.
    fn frame(&mut self, state: &Mutex<TerminalState>) -> io::Result<()> {
        if RESTORED.load(Ordering::SeqCst) {
            return Ok(());
        }
        let snap = snapshot(state);
        self.clock.observe(&snap);
        for m in new_messages(&snap, self.seen) {
            // Warm-up progress shows in the header; everything else also scrolls above.
            if !is_warmup(m, &snap) {
                let style = match m.level {
                    Level::Error => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
                    Level::Warning => Style::new().fg(Color::Yellow),
                    Level::Info => Style::new(),
                };
                let style = if self.view.color { style } else { Style::new() };
                self.lines.push((message_line(m), style));
            }
        }
        self.seen = snap.messages_total;
        self.view.update(snap, self.clock.now());
        let _guard = DRAW.lock().unwrap_or_else(|e| e.into_inner());
        if RESTORED.load(Ordering::SeqCst) {
            return Ok(());
        }
        let size = ct::size()?;
        let want = desired_height(&self.view, size);
        // Re-evaluate the tier on every resize; grow at once, shrink only with the terminal.
        if size != self.size || want > self.height {
            self.reopen(size, want)?;
        }
        let Some(term) = self.term.as_mut() else {
            return Ok(());
        };
        if !self.lines.is_empty() {
            let width = size.0.max(1);
            let wrapped: Vec<(String, Style)> = self
                .lines
                .drain(..)
                .flat_map(|(l, st)| wrap(&l, width).into_iter().map(move |w| (w, st)))
                .collect();
            term.insert_before(wrapped.len() as u16, |buf| {
                for (i, (l, st)) in wrapped.iter().enumerate() {
                    buf.set_stringn(0, i as u16, l, width as usize, *st);
                }
            })?;
        }
        let view = &self.view;
        let frame = term.draw(|f| f.render_widget(view, f.area()))?;
        BOTTOM.store(frame.area.bottom(), Ordering::SeqCst);
        Ok(())
    }

    /// Replace the viewport: clear it and open a new one of `height` rows.
    ///
    /// When only the height changes, the new viewport starts where the old one did. When the
    /// width changes, many terminals re-wrap the old panel's full-width lines, so its rows are
    /// no longer where they were: the visible screen is cleared and the panel starts at the top.
    fn reopen(&mut self, size: (u16, u16), height: u16) -> io::Result<()> {
        if let Some(mut term) = self.term.take() {
            let top = term.get_frame().area().y.min(size.1.saturating_sub(1));
            drop(term);
            let mut out = io::stdout();
            if size.0 != self.size.0 {
                execute!(out, Clear(ClearType::All), MoveTo(0, 0))?;
            } else {
                execute!(out, MoveTo(0, top), Clear(ClearType::FromCursorDown))?;
            }
        }
        self.term = Some(open_term(height)?);
        self.size = size;
        self.height = height;
        Ok(())
    }

    /// The final frame, then the cursor below the panel, visible, and raw mode off.
    fn close(&mut self) -> io::Result<()> {
        let _guard = DRAW.lock().unwrap_or_else(|e| e.into_inner());
        if RESTORED.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let mut result = Ok(());
        if let Some(term) = self.term.as_mut() {
            let bottom = term.get_frame().area().bottom();
            result = term
                .set_cursor_position(Position::new(0, bottom.saturating_sub(1)))
                .and_then(|_| term.show_cursor());
            BOTTOM.store(bottom, Ordering::SeqCst);
        }
        self.term = None;
        if RAW.swap(false, Ordering::SeqCst) {
            let _ = ct::disable_raw_mode();
        }
        let mut out = io::stdout();
        let _ = out.write_all(b"\r\n");
        let _ = execute!(out, Show);
        result
    }
}

/// Split `line` into pieces at most `width` columns wide.
fn wrap(line: &str, width: u16) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut w = 0usize;
    for ch in line.chars() {
        let cw = ch.width().unwrap_or(0);
        if w + cw > width as usize {
            out.push(String::new());
            w = 0;
        }
        w += cw;
        if let Some(last) = out.last_mut() {
            last.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_splits_long_log_lines_at_the_width() {
        assert_eq!(wrap("abcdef", 4), vec!["abcd", "ef"]);
        assert_eq!(wrap("", 4), vec![""]);
    }
}
