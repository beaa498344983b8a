//! Pure rendering of a [`PanelState`] into a ratatui [`Buffer`].
//!
//! - `layout`: the width tiers ([`Tier`]) and how a row's columns are shared.
//! - `draw`: styled spans, the palette, and writing spans into a buffer.
//! - `frame`: the border with the title, and the header lines every panel has.
//! - `rl`: the RL panel (metrics, rewards, learner and collector timelines, system).
//! - `rft`: the `rft` panel (category groups instead of the RL tables).
//! - `generic`: the dashboard of a run without a schema (tag groups instead of the RL tables).
//!
//! Dependencies point one way: this module → `rl` / `rft` / `generic` → `frame` → `draw`, and
//! each of them may use `layout`, which uses nothing else here.

mod draw;
mod frame;
mod generic;
mod layout;
mod rft;
mod rl;

pub use layout::Tier;

use crate::state::PanelState;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

impl PanelState {
    /// The panel's full height at `width` columns (every row shown, borders included).
    pub fn height(&self, width: u16) -> u16 {
        if let Some(g) = &self.model.generic {
            return generic::height(self, g, width);
        }
        if let Some(rft) = &self.model.rft {
            return rft::height(self, rft, width);
        }
        rl::height(self, width)
    }

    /// The tier the panel uses at `width` columns.
    pub fn tier(&self, width: u16) -> Tier {
        Tier::for_width(width)
    }
}

impl Widget for &PanelState {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width < 8 || area.height < 3 {
            return;
        }
        if let Some(g) = &self.model.generic {
            return generic::render(self, g, area, buf);
        }
        if let Some(rft) = &self.model.rft {
            return rft::render(self, rft, area, buf);
        }
        rl::render(self, area, buf);
    }
}

/// The text of a buffer, one line per row, trailing spaces trimmed (tests and snapshots).
pub fn buffer_text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.y..area.y + area.height {
        let mut line = String::new();
        let mut x = area.x;
        while x < area.x + area.width {
            let sym = buf[(x, y)].symbol();
            line.push_str(sym);
            x += (sym.width() as u16).max(1);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Render `state` into a fresh buffer `width` × `height` (its full height when `None`).
pub fn render_to_buffer(state: &PanelState, width: u16, height: Option<u16>) -> Buffer {
    let h = height.unwrap_or_else(|| state.height(width));
    let mut buf = Buffer::empty(Rect::new(0, 0, width, h));
    state.render(buf.area, &mut buf);
    buf
}
