//! Drawing primitives every view shares: styled spans, the palette, and writing spans into
//! a [`Buffer`] without cutting them mid-cell.

use crate::glyphs::Glyphs;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier, Style};
use unicode_width::UnicodeWidthStr;

pub(super) type Spans = Vec<(String, Style)>;

pub(super) fn width_of(spans: &Spans) -> u16 {
    spans.iter().map(|(s, _)| s.width() as u16).sum()
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Pal {
    pub(super) color: bool,
}

impl Pal {
    pub(super) fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }
    pub(super) fn bold(self, c: Color) -> Style {
        self.fg(c).add_modifier(Modifier::BOLD)
    }
    pub(super) fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }
    pub(super) fn plain(self) -> Style {
        Style::new()
    }
}

/// Write spans left to right, at most `max` columns.
///
/// Runs of spaces are skipped rather than written: every frame starts from a blank buffer
/// (ratatui resets it) and no style here has a background, so they would draw nothing.
/// That halves the per-frame cost of grapheme segmentation.
pub(super) fn put(buf: &mut Buffer, x: u16, y: u16, max: u16, spans: &Spans) -> u16 {
    let mut x = x;
    let end = x.saturating_add(max);
    for (s, st) in spans {
        let mut rest = s.as_str();
        while !rest.is_empty() && x < end {
            let lead = rest.len() - rest.trim_start_matches(' ').len();
            x = x.saturating_add(lead as u16);
            rest = &rest[lead..];
            let word_end = rest.find(' ').unwrap_or(rest.len());
            if word_end > 0 && x < end {
                let word = &rest[..word_end];
                if word.bytes().all(|b| b.is_ascii_graphic()) {
                    // Printable ASCII is one cell per byte: no grapheme segmentation needed.
                    // Anything else (wide or control characters) goes through ratatui.
                    for ch in word.chars().take((end - x) as usize) {
                        if let Some(cell) = buf.cell_mut((x, y)) {
                            cell.set_char(ch).set_style(*st);
                        }
                        x += 1;
                    }
                } else {
                    let (nx, _) = buf.set_stringn(x, y, word, (end - x) as usize, *st);
                    x = nx;
                }
            }
            rest = &rest[word_end..];
        }
    }
    x.min(end)
}

/// Fill `n` cells from (`x`, `y`) with one symbol (rules and bars), without segmentation.
pub(super) fn fill(buf: &mut Buffer, x: u16, y: u16, n: u16, symbol: &str, style: Style) {
    for dx in 0..n {
        if let Some(cell) = buf.cell_mut((x + dx, y)) {
            cell.set_symbol(symbol).set_style(style);
        }
    }
}

/// Write spans, shortening the last one with an ellipsis when they do not fit.
pub(super) fn put_fit(buf: &mut Buffer, x: u16, y: u16, max: u16, spans: &Spans, g: &Glyphs) {
    if width_of(spans) <= max {
        put(buf, x, y, max, spans);
        return;
    }
    let mut fitted: Spans = Vec::new();
    let mut room = max.saturating_sub(g.ellipsis.width() as u16) as usize;
    for (s, st) in spans {
        let mut t = String::new();
        for ch in s.chars() {
            let cw = ch.to_string().width();
            if cw > room {
                break;
            }
            room -= cw;
            t.push(ch);
        }
        let cut = t.len() < s.len();
        fitted.push((t, *st));
        if cut {
            fitted.push((g.ellipsis.to_owned(), *st));
            break;
        }
    }
    put(buf, x, y, max, &fitted);
}
