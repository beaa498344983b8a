//! The RL panel: metrics, rewards, and the learner and collector timelines, by width tier.
//!
//! Width tiers (`docs/contract/panel.md`, "Width tiers"): below 96 columns metrics, rewards
//! and timing stack vertically with a single `Timing` column and short titles, and the reward
//! peak loses precision rather than a core label being cut; from 96 to 119 columns metrics
//! and rewards sit side by side and timing uses the short `Learner` / `Collector` titles; from
//! 120 columns timing uses the full three columns `Learner (Iter Wall)`, `Collector (own
//! clock)` and `System`. The two timing clocks are drawn as separate columns divided by a
//! rule and are never summed (`docs/contract/timelines.md`).
//!
//! When the area is shorter than the panel, rows are dropped by priority (spacers and rules,
//! then gauges and terminations, then metric diagnostics, quiet collector rows and reward
//! terms), as few as needed, and each table title counts what it hides; core rows, titles and
//! labels are never cut.

mod table;
mod tables;

use super::draw::{fill, Pal, Spans};
use super::frame::{centered, draw_frame, header_lines};
use super::layout::{split, Tier, GAP};
use crate::glyphs::Glyphs;
use crate::state::{Model, PanelState};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use table::{Table, ALL, CORE_ONLY, SPACE_RANK};
use tables::{stacked_timing, tables, Tables};

enum Item {
    Line { y: u16, spans: Spans },
    Table { which: Which, area: Rect },
    Bar { x: u16, y: u16, h: u16 },
}

#[derive(Clone, Copy)]
enum Which {
    Metrics,
    Rewards,
    Learner,
    Collector,
    System,
    Timing,
}

struct Plan {
    items: Vec<Item>,
    /// Inner height (without the border).
    height: u16,
}

struct Layout<'a> {
    model: &'a Model,
    glyphs: &'a Glyphs,
    pal: Pal,
    tier: Tier,
    tables: Tables,
    timing: Table,
}

impl<'a> Layout<'a> {
    fn new(state: &'a PanelState, width: u16) -> Layout<'a> {
        let tier = Tier::for_width(width);
        let pal = Pal { color: state.color };
        let tables = tables(&state.model, tier, &state.glyphs, pal);
        let timing = stacked_timing(&tables, pal);
        Layout {
            model: &state.model,
            glyphs: &state.glyphs,
            pal,
            tier,
            tables,
            timing,
        }
    }

    fn table(&self, w: Which) -> &Table {
        match w {
            Which::Metrics => &self.tables.metrics,
            Which::Rewards => &self.tables.rewards,
            Which::Learner => &self.tables.learner,
            Which::Collector => &self.tables.collector,
            Which::System => &self.tables.system,
            Which::Timing => &self.timing,
        }
    }

    /// Place everything inside an inner area `width` columns wide, showing rows up to `cutoff`.
    fn plan(&self, width: u16, cutoff: u32) -> Plan {
        let mut items = Vec::new();
        let mut y = 0u16;
        let spacer = u16::from(cutoff > SPACE_RANK);
        for line in header_lines(self.model, self.glyphs, self.pal, width) {
            items.push(Item::Line { y, spans: line });
            y += 1;
        }
        y += spacer;
        let h = |w: Which| self.table(w).height(cutoff);
        let nat = |w: Which| self.table(w).natural_width(cutoff);
        let place = |items: &mut Vec<Item>, which: Which, x: u16, y: u16, w: u16| {
            let area = Rect::new(x, y, w, self.table(which).height(cutoff));
            items.push(Item::Table { which, area });
        };
        match self.tier {
            Tier::Stacked => {
                for (i, which) in [Which::Metrics, Which::Rewards, Which::Timing]
                    .into_iter()
                    .enumerate()
                {
                    if i > 0 {
                        y += spacer;
                    }
                    place(&mut items, which, 0, y, width);
                    y += h(which);
                }
            }
            Tier::SideBySide | Tier::Full => {
                let right_stack: Vec<Which> = if self.tier == Tier::Full {
                    vec![Which::Rewards]
                } else {
                    vec![Which::Rewards, Which::System]
                };
                let right_nat = right_stack.iter().map(|w| nat(*w)).max().unwrap_or(0);
                let widths = split(width.saturating_sub(GAP), &[nat(Which::Metrics), right_nat]);
                place(&mut items, Which::Metrics, 0, y, widths[0]);
                let rx = widths[0] + GAP;
                let mut ry = y;
                for (i, which) in right_stack.iter().enumerate() {
                    if i > 0 {
                        ry += spacer;
                    }
                    place(&mut items, *which, rx, ry, widths[1]);
                    ry += h(*which);
                }
                y = (y + h(Which::Metrics)).max(ry) + spacer;
                let groups: Vec<Which> = if self.tier == Tier::Full {
                    vec![Which::Learner, Which::Collector, Which::System]
                } else {
                    vec![Which::Learner, Which::Collector]
                };
                // Each clock gets its own column with a rule between: never one summed table.
                let seps = (groups.len() as u16 - 1) * 3;
                let nats: Vec<u16> = groups.iter().map(|w| nat(*w)).collect();
                let widths = split(width.saturating_sub(seps), &nats);
                let gh = groups.iter().map(|w| h(*w)).max().unwrap_or(0);
                let mut x = 0;
                for (i, which) in groups.iter().enumerate() {
                    if i > 0 {
                        items.push(Item::Bar { x: x + 1, y, h: gh });
                        x += 3;
                    }
                    place(&mut items, *which, x, y, widths[i]);
                    x += widths[i];
                }
                y += gh;
            }
        }
        Plan { items, height: y }
    }

    /// The highest cutoff whose plan fits `height` inner rows (core rows always show; if
    /// even they do not fit, the bottom is clipped).
    fn fit(&self, width: u16, height: u16) -> (u32, Plan) {
        let plan = self.plan(width, ALL);
        if plan.height <= height {
            return (ALL, plan);
        }
        let tables = [
            &self.tables.metrics,
            &self.tables.rewards,
            &self.tables.learner,
            &self.tables.collector,
            &self.tables.system,
            &self.timing,
        ];
        let mut cuts: Vec<u32> = tables
            .iter()
            .flat_map(|t| t.rows.iter().map(|r| r.rank + 1))
            .filter(|c| *c > CORE_ONLY)
            .collect();
        cuts.push(CORE_ONLY);
        cuts.push(SPACE_RANK + 1);
        cuts.sort_unstable();
        cuts.dedup();
        // Heights grow with the cutoff: find the last cutoff that fits.
        let fits = cuts.partition_point(|c| self.plan(width, *c).height <= height);
        let cutoff = cuts[fits.saturating_sub(1)];
        (cutoff, self.plan(width, cutoff))
    }

    fn render(&self, area: Rect, buf: &mut Buffer, title_max: u16) {
        let g = self.glyphs;
        let pal = self.pal;
        let inner_w = area.width.saturating_sub(4);
        let (cutoff, plan) = self.fit(inner_w, area.height.saturating_sub(2));
        let inner = draw_frame(self.model, g, pal, area, plan.height, title_max, buf);
        let bottom = inner.y + inner.height;
        for item in &plan.items {
            match item {
                Item::Line { y, spans } => centered(buf, inner, *y, spans, g),
                Item::Table { which, area } => {
                    let y = inner.y + area.y;
                    if y >= bottom {
                        continue;
                    }
                    let r = Rect::new(inner.x + area.x, y, area.width, area.height.min(bottom - y));
                    self.table(*which).render(r, cutoff, buf, g, pal);
                }
                Item::Bar { x, y, h } => {
                    for dy in 0..*h {
                        let yy = inner.y + y + dy;
                        if yy < bottom {
                            fill(buf, inner.x + x, yy, 1, g.bar, pal.dim());
                        }
                    }
                }
            }
        }
    }
}

/// The full height of an RL panel `width` columns wide (borders included).
pub(super) fn height(state: &PanelState, width: u16) -> u16 {
    let layout = Layout::new(state, width);
    layout.plan(width.saturating_sub(4), ALL).height + 2
}

/// Draw an RL panel into `area`.
pub(super) fn render(state: &PanelState, area: Rect, buf: &mut Buffer) {
    let layout = Layout::new(state, area.width);
    layout.render(area, buf, area.width.saturating_sub(4));
}
