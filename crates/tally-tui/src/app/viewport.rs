//! The inline viewport both of the terminal's holders draw into, the live panel and the curves
//! view's screen: how it is opened, how small a terminal is refused, and how the terminal is
//! given back (docs/contract/panel.md "Terminal restoration").

use super::restore::{BOTTOM, RAW};
use crossterm::cursor::Show;
use crossterm::execute;
use crossterm::terminal as ct;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Position;
use ratatui::{Terminal, TerminalOptions, Viewport};
use std::io::{self, Stdout, Write};
use std::sync::atomic::Ordering;

pub(super) type Term = Terminal<CrosstermBackend<Stdout>>;

/// An inline viewport `height` rows high, from the cursor down.
pub(super) fn open_term(height: u16) -> io::Result<Term> {
    Terminal::with_options(
        CrosstermBackend::new(io::stdout()),
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )
}

/// Refuses a terminal too small to draw anything readable (the caller prints plain text then).
pub(super) fn check_size(size: (u16, u16)) -> io::Result<()> {
    if size.0 < 20 || size.1 < 3 {
        return Err(io::Error::other(format!(
            "terminal of {}x{} is too small",
            size.0, size.1
        )));
    }
    Ok(())
}

/// Gives the terminal back after the last frame of `term`: the cursor on a new line below it,
/// visible, raw mode off.
pub(super) fn give_back(term: Option<Term>) -> io::Result<()> {
    let mut result = Ok(());
    if let Some(mut term) = term {
        let bottom = term.get_frame().area().bottom();
        result = term
            .set_cursor_position(Position::new(0, bottom.saturating_sub(1)))
            .and_then(|_| term.show_cursor());
        BOTTOM.store(bottom, Ordering::SeqCst);
    }
    if RAW.swap(false, Ordering::SeqCst) {
        let _ = ct::disable_raw_mode();
    }
    let mut out = io::stdout();
    let _ = out.write_all(b"\r\n");
    let _ = execute!(out, Show);
    result
}
