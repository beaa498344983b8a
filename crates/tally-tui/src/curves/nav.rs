//! Where the user is in the curves view: the run cursor, the runs picked, the tag filter and
//! the first chart shown, moved by keys (`docs/contract/panel.md` "Curves in the terminal").

use crate::key::Key;

/// What a key asks of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing changed.
    None,
    /// The view changed: draw again.
    Redraw,
    /// `q`, `Esc` or Ctrl-C: leave.
    Quit,
}

/// The view's place, kept between frames.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Nav {
    /// The run the cursor is on.
    pub cursor: usize,
    /// Which runs are drawn, by run index.
    pub picked: Vec<bool>,
    /// Tags shown contain this (case-insensitive); empty: every tag.
    pub filter: String,
    /// The filter is being typed (`/` until Enter or Esc).
    pub editing: bool,
    /// The first tag shown, in the filtered list.
    pub offset: usize,
}

impl Nav {
    /// Every one of `runs` picked.
    pub fn new(runs: usize) -> Nav {
        Nav {
            picked: vec![true; runs],
            ..Nav::default()
        }
    }

    /// The run list grew to `runs`: the new runs are picked.
    pub fn grow(&mut self, runs: usize) {
        if runs > self.picked.len() {
            self.picked.resize(runs, true);
        }
    }

    /// Whether run `i` is drawn.
    pub fn is_picked(&self, i: usize) -> bool {
        self.picked.get(i).copied().unwrap_or(true)
    }

    /// Whether `tag` passes the filter.
    pub fn shows(&self, tag: &str) -> bool {
        self.filter.is_empty() || tag.to_lowercase().contains(&self.filter.to_lowercase())
    }

    /// Apply `key`, with `tags` tags passing the filter now.
    pub fn key(&mut self, key: Key, tags: usize) -> Action {
        if key == Key::CtrlC {
            return Action::Quit;
        }
        if self.editing {
            match key {
                Key::Enter => self.editing = false,
                Key::Esc => {
                    self.editing = false;
                    self.filter.clear();
                    self.offset = 0;
                }
                Key::Backspace => {
                    self.filter.pop();
                    self.offset = 0;
                }
                Key::Char(c) => {
                    self.filter.push(c);
                    self.offset = 0;
                }
                _ => return Action::None,
            }
            return Action::Redraw;
        }
        let runs = self.picked.len();
        match key {
            Key::Char('q' | 'Q') | Key::Esc => return Action::Quit,
            Key::Up | Key::Char('k') => {
                if self.offset == 0 {
                    return Action::None;
                }
                self.offset -= 1;
            }
            Key::Down | Key::Char('j') => {
                if self.offset + 1 >= tags {
                    return Action::None;
                }
                self.offset += 1;
            }
            Key::Left | Key::Char('h') if runs > 0 => {
                self.cursor = (self.cursor + runs - 1) % runs;
            }
            Key::Right | Key::Char('l') if runs > 0 => {
                self.cursor = (self.cursor + 1) % runs;
            }
            Key::Char(' ') if runs > 0 => {
                let i = self.cursor.min(runs - 1);
                self.picked[i] = !self.picked[i];
            }
            Key::Char('/') => self.editing = true,
            _ => return Action::None,
        }
        Action::Redraw
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_move_the_cursor_toggle_runs_scroll_and_filter() {
        let mut nav = Nav::new(3);
        assert_eq!(nav.key(Key::Right, 5), Action::Redraw);
        assert_eq!(nav.key(Key::Char(' '), 5), Action::Redraw);
        assert_eq!(nav.picked, [true, false, true]);
        nav.key(Key::Left, 5);
        nav.key(Key::Left, 5);
        assert_eq!(nav.cursor, 2);
        assert_eq!(nav.key(Key::Up, 5), Action::None);
        nav.key(Key::Char('j'), 5);
        assert_eq!(nav.offset, 1);
        nav.key(Key::Char('/'), 5);
        for c in "LoSs".chars() {
            nav.key(Key::Char(c), 5);
        }
        // `q` while typing is a letter of the filter.
        assert_eq!(nav.key(Key::Char('q'), 5), Action::Redraw);
        nav.key(Key::Backspace, 5);
        assert_eq!(nav.key(Key::Enter, 5), Action::Redraw);
        assert_eq!((nav.filter.as_str(), nav.offset), ("LoSs", 0));
        assert!(nav.shows("losses/value_loss") && !nav.shows("charts/return"));
        nav.key(Key::Char('/'), 5);
        nav.key(Key::Esc, 5);
        assert!(nav.filter.is_empty() && !nav.editing);
        assert_eq!(nav.key(Key::Esc, 5), Action::Quit);
        assert_eq!(nav.key(Key::CtrlC, 5), Action::Quit);
        nav.grow(4);
        assert!(nav.is_picked(3));
    }
}
