//! A full-height inline viewport the caller draws into from its own loop, with the keys it
//! reads (the curves view of `tally watch`). It takes the terminal as the live panel does (one
//! at a time, raw mode for keys) and gives it back the same way: on close, on drop, on panic
//! and from `restore_terminal` (docs/contract/panel.md "Terminal restoration").

use super::keys::Keys;
use super::restore::{install_panic_hook, ACTIVE, BOTTOM, DRAW, RAW, RESTORED};
use super::viewport::{check_size, give_back, open_term, Term};
use crate::key::Key;
use crossterm::cursor::MoveTo;
use crossterm::execute;
use crossterm::terminal::{self as ct, Clear, ClearType};
use ratatui::widgets::Widget;
use std::io;
use std::sync::atomic::Ordering;

/// The terminal, held for a view drawn by the caller.
pub struct Screen {
    term: Option<Term>,
    keys: Keys,
    size: (u16, u16),
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen").field("size", &self.size).finish()
    }
}

impl Screen {
    /// Take the terminal: raw mode, a viewport as high as the terminal. Fails when another live
    /// panel holds it, or the terminal cannot be driven (the caller prints plain text then).
    pub fn open() -> io::Result<Screen> {
        if ACTIVE.swap(true, Ordering::SeqCst) {
            return Err(io::Error::other("another live panel holds the terminal"));
        }
        RESTORED.store(false, Ordering::SeqCst);
        install_panic_hook();
        let opened = (|| {
            let keys = Keys::open()?;
            ct::enable_raw_mode()?;
            RAW.store(true, Ordering::SeqCst);
            let size = ct::size()?;
            check_size(size)?;
            let term = open_term(size.1)?;
            Ok(Screen {
                term: Some(term),
                keys,
                size,
            })
        })();
        if opened.is_err() {
            if RAW.swap(false, Ordering::SeqCst) {
                let _ = ct::disable_raw_mode();
            }
            ACTIVE.store(false, Ordering::SeqCst);
        }
        opened
    }

    /// The keys typed since the last look; an error when the terminal is gone (its input
    /// ended, it hung up: docs/contract/panel.md "tally watch").
    pub fn keys(&mut self) -> io::Result<Vec<Key>> {
        self.keys.read_keys()
    }

    /// The terminal's size now (columns, rows).
    pub fn size(&self) -> (u16, u16) {
        self.keys.size().unwrap_or(self.size)
    }

    /// Draw `view` over the whole viewport; a resized terminal gets a new viewport first.
    pub fn draw(&mut self, view: impl Widget) -> io::Result<()> {
        let _guard = DRAW.lock().unwrap_or_else(|e| e.into_inner());
        if RESTORED.load(Ordering::SeqCst) {
            return Ok(());
        }
        let size = ct::size()?;
        if size != self.size {
            // Terminals re-wrap or scroll what was drawn: start again from a clear screen.
            self.term = None;
            execute!(io::stdout(), Clear(ClearType::All), MoveTo(0, 0))?;
            self.term = Some(open_term(size.1)?);
            self.size = size;
        }
        let Some(term) = self.term.as_mut() else {
            return Ok(());
        };
        let frame = term.draw(|f| f.render_widget(view, f.area()))?;
        BOTTOM.store(frame.area.bottom(), Ordering::SeqCst);
        Ok(())
    }

    /// Give the terminal back: the cursor below the last frame, visible, raw mode off.
    /// Idempotent; also done on drop.
    pub fn close(&mut self) -> io::Result<()> {
        let _guard = DRAW.lock().unwrap_or_else(|e| e.into_inner());
        if !ACTIVE.load(Ordering::SeqCst) || RESTORED.swap(true, Ordering::SeqCst) {
            self.term = None;
            ACTIVE.store(false, Ordering::SeqCst);
            return Ok(());
        }
        let result = give_back(self.term.take());
        ACTIVE.store(false, Ordering::SeqCst);
        result
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
