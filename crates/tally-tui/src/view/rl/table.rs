//! One table of the RL panel: a title, a rule, and label / value rows that each carry a
//! priority, so a short terminal drops the least important rows first.

use crate::glyphs::Glyphs;
use crate::view::draw::{fill, put, put_fit, width_of, Pal, Spans};
use crate::view::layout::PAD;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use unicode_width::UnicodeWidthStr;

/// Row priorities (lower is more important).
pub(super) const CORE: u8 = 0;
pub(super) const DETAIL: u8 = 1;
pub(super) const GAUGE: u8 = 2;
const SPACE: u8 = 3;
/// A row's rank is `prio * PRIO_RANK + table weight * TABLE_RANK + index`; a cutoff shows
/// the rows whose rank is below it. Spacers and rules rank exactly [`SPACE_RANK`].
const PRIO_RANK: u32 = 100_000;
const TABLE_RANK: u32 = 10_000;
pub(super) const SPACE_RANK: u32 = SPACE as u32 * PRIO_RANK;
/// Shows every row.
pub(super) const ALL: u32 = u32::MAX;
/// Shows the core rows only.
pub(super) const CORE_ONLY: u32 = PRIO_RANK;

#[derive(Debug, Clone)]
pub(super) struct Row {
    pub(super) label: Spans,
    pub(super) value: Spans,
    pub(super) prio: u8,
    pub(super) rank: u32,
}

impl Row {
    pub(super) fn new(
        label: impl Into<String>,
        ls: Style,
        value: impl Into<String>,
        vs: Style,
        prio: u8,
    ) -> Row {
        Row {
            label: vec![(label.into(), ls)],
            value: vec![(value.into(), vs)],
            prio,
            rank: 0,
        }
    }
    pub(super) fn heading(label: &str, style: Style, prio: u8) -> Row {
        Row {
            label: vec![(label.to_owned(), style)],
            value: Vec::new(),
            prio,
            rank: 0,
        }
    }
    pub(super) fn spacer() -> Row {
        Row {
            label: Vec::new(),
            value: Vec::new(),
            prio: SPACE,
            rank: SPACE_RANK,
        }
    }
    fn is_spacer(&self) -> bool {
        self.label.is_empty() && self.value.is_empty()
    }
}

#[derive(Debug, Clone)]
pub(super) struct Table {
    pub(super) title: String,
    pub(super) title_style: Style,
    pub(super) value_title: &'static str,
    pub(super) rows: Vec<Row>,
    /// Values right-aligned (numbers of varying length) or left-aligned in their column
    /// (pre-padded timing values, so their `ms` and `%` line up).
    pub(super) align_right: bool,
}

impl Table {
    /// Give each row its rank; `weight` orders tables within a priority (lower first).
    pub(super) fn rank(&mut self, weight: u32) {
        for (i, r) in self.rows.iter_mut().enumerate() {
            r.rank = if r.is_spacer() {
                SPACE_RANK
            } else {
                u32::from(r.prio) * PRIO_RANK + weight * TABLE_RANK + i as u32
            };
        }
    }
    fn visible(&self, cutoff: u32) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(move |r| r.rank < cutoff)
    }
    fn hidden(&self, cutoff: u32) -> usize {
        self.rows
            .iter()
            .filter(|r| r.rank >= cutoff && !r.is_spacer())
            .count()
    }
    pub(super) fn height(&self, cutoff: u32) -> u16 {
        1 + u16::from(cutoff > SPACE_RANK) + self.visible(cutoff).count() as u16
    }
    fn title_text(&self, cutoff: u32) -> String {
        match self.hidden(cutoff) {
            0 => self.title.clone(),
            n => format!("{} (+{n})", self.title),
        }
    }
    fn value_col(&self, cutoff: u32) -> u16 {
        self.visible(cutoff)
            .map(|r| width_of(&r.value))
            .chain(std::iter::once(self.value_title.width() as u16))
            .max()
            .unwrap_or(0)
    }
    /// The narrowest width that shows every visible label and value whole.
    pub(super) fn natural_width(&self, cutoff: u32) -> u16 {
        let title = self.title_text(cutoff).width() as u16 + PAD + self.value_title.width() as u16;
        let rows = if self.align_right {
            self.visible(cutoff)
                .map(|r| width_of(&r.label) + PAD + width_of(&r.value))
                .max()
                .unwrap_or(0)
        } else {
            let labels = self
                .visible(cutoff)
                .map(|r| width_of(&r.label))
                .max()
                .unwrap_or(0);
            labels + PAD + self.value_col(cutoff)
        };
        title.max(rows)
    }

    pub(super) fn render(&self, area: Rect, cutoff: u32, buf: &mut Buffer, g: &Glyphs, pal: Pal) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let right = area.x + area.width;
        let vcol = self.value_col(cutoff).min(area.width);
        let mut y = area.y;
        let bottom = area.y + area.height;
        let vt = self.value_title;
        let title = self.title_text(cutoff);
        let tw = area.width.saturating_sub(vt.width() as u16 + 1);
        buf.set_stringn(area.x, y, &title, tw as usize, self.title_style);
        let vx = if self.align_right {
            right - vt.width() as u16
        } else {
            right - vcol
        };
        buf.set_string(vx.max(area.x), y, vt, self.title_style);
        y += 1;
        if cutoff > SPACE_RANK && y < bottom {
            fill(buf, area.x, y, area.width, g.rule, pal.dim());
            y += 1;
        }
        for row in self.visible(cutoff) {
            if y >= bottom {
                break;
            }
            let vw = width_of(&row.value);
            let vx = if self.align_right {
                right - vw.min(area.width)
            } else {
                right - vcol
            };
            let label_room = if row.value.is_empty() {
                area.width
            } else {
                vx.saturating_sub(area.x).saturating_sub(1)
            };
            put_fit(buf, area.x, y, label_room, &row.label, g);
            put(buf, vx, y, right - vx, &row.value);
            y += 1;
        }
    }
}
