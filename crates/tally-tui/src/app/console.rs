//! The user's own output while a panel runs: lines printed from any thread go above the live
//! viewport, in order with the panel's status lines, or straight to their stream when no live
//! panel runs (`docs/contract/panel.md`, "The user's output under the panel").

use super::command::Command;
use super::feed::snapshot;
use crate::mode::Output;
use std::io::{self, Write};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard};
use tally::terminal::{PanelSnapshot, TerminalState};

/// Which of the process's streams a line was written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// The way to the live panel thread while it runs.
struct Link {
    tx: Sender<Command>,
    state: Arc<Mutex<TerminalState>>,
}

#[derive(Default)]
struct Inner {
    /// `Some` while the live viewport runs.
    link: Option<Link>,
    /// Lines not drawn yet, each with the number of status lines recorded before it.
    lines: Vec<(u64, String)>,
}

/// The user's lines on their way to the live panel.
///
/// A line is queued, with the state's status-line count read, under this lock; the panel takes
/// its snapshot and the queued lines under it too. So every line it takes was printed after
/// exactly the status lines its count says, and every later line after all the status lines in
/// that snapshot: the two kinds are drawn in the order they happened. The panel closes the gate
/// before its final frame, so every line queued is drawn and every later one is written
/// straight to its stream: none is lost at the switch.
#[derive(Default)]
pub(super) struct Gate(Mutex<Inner>);

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Gate")
            .field(&self.lock().link.is_some())
            .finish()
    }
}

impl Gate {
    pub(super) fn open(&self, tx: Sender<Command>, state: Arc<Mutex<TerminalState>>) {
        self.lock().link = Some(Link { tx, state });
    }

    pub(super) fn close(&self) {
        self.lock().link = None;
    }

    /// Close, and the lines queued but never drawn (the panel stopped on an error).
    pub(super) fn close_and_drain(&self) -> Vec<String> {
        let mut inner = self.lock();
        inner.link = None;
        inner.lines.drain(..).map(|(_, line)| line).collect()
    }

    /// A snapshot of `state` and the lines queued so far, taken together.
    pub(super) fn take(&self, state: &Mutex<TerminalState>) -> (PanelSnapshot, Vec<(u64, String)>) {
        let mut inner = self.lock();
        let snap = snapshot(state);
        (snap, std::mem::take(&mut inner.lines))
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Prints lines above a running panel; cheap to clone and safe to use from any thread.
///
/// While the live viewport runs, each line is inserted above it (it stays in the scrollback)
/// in the order it was printed, interleaved with the panel's own status lines in the order
/// they happened. Otherwise (plain lines, `off`, not a terminal, or after the panel stopped)
/// lines go to their stream unchanged.
#[derive(Clone)]
pub struct Console {
    gate: Arc<Gate>,
    output: Output,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console")
            .field("output", &self.output)
            .field("live", &self.is_live())
            .finish()
    }
}

impl Console {
    pub(super) fn new(gate: Arc<Gate>, output: Output) -> Console {
        Console { gate, output }
    }

    /// What the panel runs as (the live viewport, plain lines, or nothing).
    pub fn output(&self) -> Output {
        self.output
    }

    /// Whether lines go above the live viewport right now.
    pub fn is_live(&self) -> bool {
        self.gate.lock().link.is_some()
    }

    /// Print `text` (one or more lines; a final newline is implied) meant for `stream`.
    pub fn print(&self, stream: Stream, text: &str) -> io::Result<()> {
        let text = text.strip_suffix('\n').unwrap_or(text);
        for line in text.split('\n') {
            if let Err(line) = self.above(line.to_owned()) {
                match stream {
                    Stream::Stdout => writeln!(io::stdout().lock(), "{line}")?,
                    Stream::Stderr => writeln!(io::stderr().lock(), "{line}")?,
                }
            }
        }
        Ok(())
    }

    /// Hand one line (no newline) to the live panel; gives it back when no live panel runs,
    /// for the caller to write to its own stream.
    pub fn above(&self, line: String) -> Result<(), String> {
        let mut inner = self.gate.lock();
        let Some(link) = inner.link.as_ref() else {
            return Err(line);
        };
        // Wake the panel for the next frame; if its thread is gone (it panicked), the caller
        // writes the line itself.
        if link.tx.send(Command::Refresh).is_err() {
            return Err(line);
        }
        let after = link
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .messages_total;
        inner.lines.push((after, line));
        Ok(())
    }
}

/// What a terminal would show of `line` on one row: the text after its last carriage return,
/// without escape sequences or control characters, tabs expanded to 8 columns.
///
/// Escape sequences would move the cursor inside the panel's drawing, so they are dropped
/// (colour with them).
pub(super) fn printable(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let line = line.rsplit('\r').next().unwrap_or(line);
    let mut out = String::with_capacity(line.len());
    let mut cols = 0usize;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => skip_escape(&mut chars),
            '\t' => {
                let n = 8 - cols % 8;
                out.extend(std::iter::repeat_n(' ', n));
                cols += n;
            }
            c if c.is_control() => {}
            c => {
                out.push(c);
                cols += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            }
        }
    }
    out
}

/// Skip the rest of an escape sequence whose `ESC` was just read: CSI (`ESC [ … final`),
/// OSC and string commands (up to `BEL` or `ESC \`), or a two-character escape.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\x40'..='\x7e').contains(&c) {
                    break;
                }
            }
        }
        Some(']' | 'P' | '_' | '^' | 'X') => {
            while let Some(c) = chars.next() {
                if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                    break;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn a_line_keeps_what_a_terminal_would_show() {
        assert_eq!(printable("plain text"), "plain text");
        assert_eq!(printable("\x1b[31mred\x1b[0m done"), "red done");
        assert_eq!(printable("\x1b]0;title\x07after"), "after");
        assert_eq!(printable("\x1b]8;;http://x\x1b\\link"), "link");
        assert_eq!(printable(" 10%\r 50%\r100%"), "100%");
        assert_eq!(printable("windows line\r"), "windows line");
        assert_eq!(printable("a\tb"), "a       b");
        assert_eq!(printable("ab\x07c\x08"), "abc");
    }
}
