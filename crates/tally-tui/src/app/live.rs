//! The live panel: a ratatui inline viewport redrawn on the 2 Hz clock, lines printed above
//! it, keys, resizes, and the final frame on close.

use super::command::Command;
use super::console::{printable, Gate};
use super::feed::{is_warmup, message_line, messages_between, snapshot};
use super::keys::{Keys, Pressed};
use super::options::PanelOptions;
use super::restore::{BOTTOM, DRAW, RAW, RESTORED};
use super::viewport::{check_size, give_back, open_term, Term};
use crate::glyphs::Glyphs;
use crate::state::PanelState;
use crossterm::cursor::MoveTo;
use crossterm::execute;
use crossterm::terminal::{self as ct, Clear, ClearType};
use ratatui::style::{Color, Modifier, Style};
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tally::terminal::{Level, PanelSnapshot, TerminalState};
use tally::Clock;
use unicode_width::UnicodeWidthChar;

/// How often keys are polled in key mode.
const KEY_POLL: Duration = Duration::from_millis(50);
/// Lines inserted above the viewport per call (bounds the buffer ratatui allocates).
const INSERT_CHUNK: usize = 512;

pub(super) struct Live {
    term: Option<Term>,
    view: PanelState,
    clock: Arc<dyn Clock>,
    size: (u16, u16),
    height: u16,
    seen: u64,
    lines: Vec<(String, Style)>,
    /// The terminal's input, in key mode.
    keys: Option<Keys>,
}

fn desired_height(view: &PanelState, size: (u16, u16)) -> u16 {
    view.height(size.0).min(size.1).max(3)
}

impl Live {
    pub(super) fn open(
        state: &Mutex<TerminalState>,
        opts: &PanelOptions,
        clock: Arc<dyn Clock>,
    ) -> io::Result<Live> {
        let keys = if opts.keys {
            let keys = Keys::open()?;
            ct::enable_raw_mode()?;
            RAW.store(true, Ordering::SeqCst);
            Some(keys)
        } else {
            None
        };
        let size = ct::size()?;
        check_size(size)?;
        let snap = snapshot(state);
        let seen = snap.messages_total;
        let glyphs = opts.glyphs.unwrap_or_else(Glyphs::detect);
        let view = PanelState::new(snap, clock.monotonic(), glyphs, opts.color.unwrap_or(true));
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
            keys,
        })
    }

    pub(super) fn run(
        &mut self,
        state: &Mutex<TerminalState>,
        opts: &PanelOptions,
        rx: &Receiver<Command>,
        gate: &Gate,
        quit: &AtomicBool,
    ) -> io::Result<()> {
        let mut next = Instant::now();
        loop {
            let mut wait = next.saturating_duration_since(Instant::now());
            if self.keys.is_some() {
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
            if cmds.iter().any(|c| matches!(c, Command::Stop)) {
                // Lines printed from now on go straight to their stream; those already queued
                // are drawn in the final frame.
                gate.close();
            }
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
            if let Some(keys) = self.keys.as_mut() {
                // A terminal whose input ended is gone: the panel stops (the error).
                if keys.read()? == Pressed::Quit {
                    quit.store(true, Ordering::SeqCst);
                    force = true;
                }
                // A resize redraws at once (the frame re-lays the panel out for the new size).
                if keys.size().is_some_and(|size| size != self.size) {
                    force = true;
                }
            }
            if stop {
                // The final frame shows the state at close (status, last iteration).
                return self.frame(state, gate);
            }
            if force || Instant::now() >= next {
                self.frame(state, gate)?;
                next = (next + opts.refresh).max(Instant::now());
            }
        }
    }

    /// One frame: snapshot, lines above the panel, viewport size, draw.
    fn frame(&mut self, state: &Mutex<TerminalState>, gate: &Gate) -> io::Result<()> {
        let (snap, user) = gate.take(state);
        // Each user line after the status lines recorded before it was printed.
        for (after, line) in user {
            self.push_messages(&snap, after);
            self.lines.push((printable(&line), Style::new()));
        }
        self.push_messages(&snap, snap.messages_total);
        if RESTORED.load(Ordering::SeqCst) {
            return self.write_lines_plainly();
        }
        self.view.update(snap, self.clock.monotonic());
        let _guard = DRAW.lock().unwrap_or_else(|e| e.into_inner());
        if RESTORED.load(Ordering::SeqCst) {
            return self.write_lines_plainly();
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
            for chunk in wrapped.chunks(INSERT_CHUNK) {
                term.insert_before(chunk.len() as u16, |buf| {
                    for (i, (l, st)) in chunk.iter().enumerate() {
                        buf.set_stringn(0, i as u16, l, width as usize, *st);
                    }
                })?;
            }
        }
        let view = &self.view;
        let frame = term.draw(|f| f.render_widget(view, f.area()))?;
        BOTTOM.store(frame.area.bottom(), Ordering::SeqCst);
        Ok(())
    }

    /// After the terminal was restored (interrupt, panic) nothing is drawn, but the lines
    /// already printed still reach the terminal, as plain lines.
    fn write_lines_plainly(&mut self) -> io::Result<()> {
        let mut out = io::stdout().lock();
        for (line, _) in self.lines.drain(..) {
            writeln!(out, "{line}")?;
        }
        out.flush()
    }

    /// Queue the status lines of `snap` not printed yet, up to number `to`, skipping warm-up
    /// progress (the header shows it).
    fn push_messages(&mut self, snap: &PanelSnapshot, to: u64) {
        for m in messages_between(snap, self.seen, to) {
            if is_warmup(m, snap.training_started_at) {
                continue;
            }
            let style = match m.level {
                Level::Error => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
                Level::Warning => Style::new().fg(Color::Yellow),
                Level::Info => Style::new(),
            };
            let style = if self.view.color { style } else { Style::new() };
            self.lines.push((message_line(m), style));
        }
        self.seen = self.seen.max(to);
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
    pub(super) fn close(&mut self) -> io::Result<()> {
        let _guard = DRAW.lock().unwrap_or_else(|e| e.into_inner());
        if RESTORED.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        give_back(self.term.take())
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
