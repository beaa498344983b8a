//! Pure rendering of an `rft` run: Trinity-RFT's categories as groups instead of the RL tables
//! (`docs/contract/panel.md`, "The RFT panel"; the key convention is `docs/contract/rft.md`).
//!
//! Each group of the [`RftModel`] is a small table: the title (`rollout`, `eval/<taskset>`)
//! with the column headers on its line, a rule, then one row per metric. The width tiers of
//! [`Tier`] decide how many columns groups flow in (one below 96 columns, two from 96, three
//! from 120); a group wider than one column spans as many as it needs, and consecutive
//! narrow groups fill the columns top to bottom, so reading down then across follows the
//! category order. A group too wide for the panel drops its least important statistics first
//! (small-k `worst@k` / `best@k`, then plain statistics, then `std@N`; `mean@N` last) and its
//! title counts them; a label is cut only when even one column does not fit. When the panel
//! is taller than the terminal, spacers and rules go first, then whole groups from the end of
//! category order, named on a `+N more` line.

use super::draw::{fill, put, put_fit, Pal, Spans};
use super::frame::{centered, draw_frame, header_lines};
use super::layout::{split, Tier, GAP, PAD};
use crate::format;
use crate::glyphs::Glyphs;
use crate::rft::{Column, RftGroup, RftModel};
use crate::state::PanelState;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use tally_schema::Unit;
use unicode_width::UnicodeWidthStr;

/// One group with every cell formatted once per frame.
struct Grid<'a> {
    group: &'a RftGroup,
    headers: Vec<String>,
    /// `cells[row][column]`, empty where the key is absent.
    cells: Vec<Vec<String>>,
    /// Per column: the widest of its header and cells.
    widths: Vec<u16>,
    /// Columns in the order they are dropped when the group is too wide.
    drop_order: Vec<usize>,
}

/// The columns and rows a grid shows at some width.
struct Fit {
    cols: Vec<usize>,
    rows: Vec<usize>,
    /// The title (`eval/gsm8k-eval`, with `(last eval)` when held).
    title: String,
    /// What the columns hide (` (+2 cols)`), shown when there is room for it.
    hint: String,
}

/// How long a column is kept when room is short (lower is kept longer): `mean@N` and the
/// key's own value, then the largest `best@k` / `worst@k`, `std@N`, the plain statistics in
/// their own order, then the smaller `best@k` and `worst@k` (larger k kept longer, `best@k`
/// before `worst@k`).
fn keep_rank(c: Column, all: &[Column]) -> (u8, u64, u8) {
    let max_best = all.iter().filter_map(|c| match c {
        Column::BestAt(k) => Some(*k),
        _ => None,
    });
    let max_worst = all.iter().filter_map(|c| match c {
        Column::WorstAt(k) => Some(*k),
        _ => None,
    });
    let (max_best, max_worst) = (max_best.max(), max_worst.max());
    match c {
        Column::Value => (0, 0, 0),
        Column::MeanAt(_) => (0, 1, 0),
        Column::BestAt(k) if Some(k) == max_best => (1, 0, 0),
        Column::WorstAt(k) if Some(k) == max_worst => (1, 0, 1),
        Column::StdAt(_) => (2, 0, 0),
        Column::Plain(i) => (3, u64::from(i), 0),
        Column::BestAt(k) => (4, u64::MAX - k, 0),
        Column::WorstAt(k) => (4, u64::MAX - k, 1),
    }
}

fn cell_text(g: &RftGroup, label: &str, c: Column, v: f64) -> String {
    match g.unit {
        // time/ metrics are in seconds, timing_per_token_ms/ in milliseconds
        // (docs/contract/rft.md).
        Unit::S => format!("{}s", format::number(v)),
        Unit::Ms => format!("{}ms", format::number(v)),
        _ if c.is_count() || (c == Column::Value && label.ends_with("count")) => format::count(v),
        _ => format::number(v),
    }
}

fn cell_style(c: Column, pal: Pal) -> Style {
    match c {
        Column::MeanAt(_) => pal.bold(Color::Reset),
        Column::BestAt(_) => pal.fg(Color::Green),
        Column::WorstAt(_) => pal.fg(Color::Yellow),
        Column::StdAt(_) => pal.dim(),
        _ => pal.plain(),
    }
}

fn title_style(g: &RftGroup, pal: Pal) -> Style {
    if g.held {
        return pal.dim();
    }
    pal.bold(match g.category {
        "rollout" => Color::Green,
        "eval" | "bench" => Color::Magenta,
        "time" | "timing_per_token_ms" => Color::Blue,
        _ => Color::Cyan,
    })
}

impl<'a> Grid<'a> {
    fn new(group: &'a RftGroup) -> Grid<'a> {
        let headers: Vec<String> = group.columns.iter().map(|c| c.header()).collect();
        let cells: Vec<Vec<String>> = group
            .rows
            .iter()
            .map(|r| {
                r.cells
                    .iter()
                    .zip(&group.columns)
                    .map(|(v, c)| v.map_or_else(String::new, |v| cell_text(group, &r.label, *c, v)))
                    .collect()
            })
            .collect();
        let widths = headers
            .iter()
            .enumerate()
            .map(|(j, h)| {
                cells
                    .iter()
                    .map(|r| r[j].width())
                    .chain([h.width()])
                    .max()
                    .unwrap_or(0) as u16
            })
            .collect();
        let mut drop_order: Vec<usize> = (0..group.columns.len()).collect();
        drop_order
            .sort_by_key(|&j| std::cmp::Reverse((keep_rank(group.columns[j], &group.columns), j)));
        Grid {
            group,
            headers,
            cells,
            widths,
            drop_order,
        }
    }

    fn block_width(&self, cols: &[usize]) -> u16 {
        let w: u16 = cols.iter().map(|&j| self.widths[j]).sum();
        w + PAD * (cols.len() as u16).saturating_sub(1)
    }

    fn fit_cols(&self, cols: Vec<usize>) -> Fit {
        let rows: Vec<usize> = (0..self.cells.len())
            .filter(|&i| cols.iter().any(|&j| !self.cells[i][j].is_empty()))
            .collect();
        let mut title = self.group.title();
        if self.group.held {
            title.push_str(&format!(" (last {})", self.group.category));
        }
        let hint = match self.headers.len() - cols.len() {
            0 => String::new(),
            1 => " (+1 col)".to_owned(),
            n => format!(" (+{n} cols)"),
        };
        Fit {
            cols,
            rows,
            title,
            hint,
        }
    }

    fn natural(&self, fit: &Fit) -> u16 {
        let labels = fit
            .rows
            .iter()
            .map(|&i| self.group.rows[i].label.width() as u16)
            .max()
            .unwrap_or(0);
        labels.max(fit.title.width() as u16) + PAD + self.block_width(&fit.cols)
    }

    /// The columns shown in `width` columns: all of them if they fit, else the most
    /// important ones (at least one).
    fn fit(&self, width: u16) -> Fit {
        let mut cols: Vec<usize> = (0..self.headers.len()).collect();
        let mut fit = self.fit_cols(cols.clone());
        for &j in &self.drop_order {
            if self.natural(&fit) <= width || cols.len() <= 1 {
                break;
            }
            cols.retain(|&c| c != j);
            fit = self.fit_cols(cols.clone());
        }
        fit
    }

    fn height(&self, fit: &Fit, spaced: bool) -> u16 {
        1 + u16::from(spaced) + fit.rows.len() as u16
    }

    fn render(&self, area: Rect, fit: &Fit, spaced: bool, buf: &mut Buffer, g: &Glyphs, pal: Pal) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let right = area.x + area.width;
        let block = self.block_width(&fit.cols).min(area.width);
        let bx = right - block;
        // Right edge of each visible column.
        let mut edges = Vec::with_capacity(fit.cols.len());
        let mut e = right;
        for &j in fit.cols.iter().rev() {
            edges.push(e);
            e = e.saturating_sub(self.widths[j] + PAD);
        }
        edges.reverse();
        let bottom = area.y + area.height;
        let mut y = area.y;
        let ts = title_style(self.group, pal);
        let room = bx.saturating_sub(area.x).saturating_sub(1);
        let full = format!("{}{}", fit.title, fit.hint);
        let title = if full.width() as u16 <= room {
            full
        } else {
            fit.title.clone()
        };
        put_fit(buf, area.x, y, room, &vec![(title, ts)], g);
        for (k, &j) in fit.cols.iter().enumerate() {
            let h = &self.headers[j];
            let x = edges[k].saturating_sub(h.width() as u16).max(area.x);
            put(
                buf,
                x,
                y,
                edges[k].saturating_sub(x),
                &vec![(h.clone(), ts)],
            );
        }
        y += 1;
        if spaced && y < bottom {
            fill(buf, area.x, y, area.width, g.rule, pal.dim());
            y += 1;
        }
        for &i in &fit.rows {
            if y >= bottom {
                break;
            }
            let label = vec![(self.group.rows[i].label.clone(), pal.plain())];
            put_fit(buf, area.x, y, room, &label, g);
            for (k, &j) in fit.cols.iter().enumerate() {
                let text = &self.cells[i][j];
                if text.is_empty() {
                    continue;
                }
                let x = edges[k].saturating_sub(text.width() as u16).max(bx);
                let style = cell_style(self.group.columns[j], pal);
                put(
                    buf,
                    x,
                    y,
                    edges[k].saturating_sub(x),
                    &vec![(text.clone(), style)],
                );
            }
            y += 1;
        }
    }
}

/// One group placed in the inner area.
struct Placed {
    grid: usize,
    area: Rect,
    fit: Fit,
}

struct Plan {
    /// Text rows: (row, spans, centred).
    lines: Vec<(u16, Spans, bool)>,
    tables: Vec<Placed>,
    height: u16,
}

struct Layout<'a> {
    state: &'a PanelState,
    grids: Vec<Grid<'a>>,
    pal: Pal,
    tier: Tier,
}

/// Split heights into at most `k` contiguous runs with the smallest tallest run (each run's
/// height counts `gap` between its members); the start index of each run.
fn partition(heights: &[u16], k: usize, gap: u16) -> Vec<usize> {
    let run = |a: usize, b: usize| -> u16 {
        if a >= b {
            0
        } else {
            heights[a..b].iter().sum::<u16>() + gap * (b - a - 1) as u16
        }
    };
    let n = heights.len();
    match k {
        0 | 1 => vec![0],
        2 => {
            let a = (0..=n)
                .min_by_key(|&a| (run(0, a).max(run(a, n)), a))
                .unwrap_or(0);
            vec![0, a]
        }
        _ => {
            let mut best = (u16::MAX, 0, 0);
            for a in 0..=n {
                for b in a..=n {
                    let h = run(0, a).max(run(a, b)).max(run(b, n));
                    if h < best.0 {
                        best = (h, a, b);
                    }
                }
            }
            vec![0, best.1, best.2]
        }
    }
}

impl<'a> Layout<'a> {
    fn new(state: &'a PanelState, rft: &'a RftModel, width: u16) -> Layout<'a> {
        Layout {
            state,
            grids: rft.groups.iter().map(Grid::new).collect(),
            pal: Pal { color: state.color },
            tier: Tier::for_width(width),
        }
    }

    fn columns(&self) -> u16 {
        match self.tier {
            Tier::Stacked => 1,
            Tier::SideBySide => 2,
            Tier::Full => 3,
        }
    }

    /// Place the header and the first `shown` groups in `width` columns.
    fn plan(&self, width: u16, spaced: bool, shown: usize) -> Plan {
        let m = &self.state.model;
        let g = &self.state.glyphs;
        let gap = u16::from(spaced);
        let mut lines = Vec::new();
        let mut y = 0u16;
        for l in header_lines(m, g, self.pal, width) {
            lines.push((y, l, true));
            y += 1;
        }
        y += gap;
        let mut tables = Vec::new();
        if self.grids.is_empty() {
            let waiting = vec![("Waiting for data...".to_owned(), self.pal.dim())];
            lines.push((y, waiting, false));
            return Plan {
                lines,
                tables,
                height: y + 1,
            };
        }
        let k = self.columns();
        let cw = width.saturating_sub((k - 1) * GAP) / k;
        let span_width = |s: u16| {
            if s >= k {
                width
            } else {
                s * cw + (s - 1) * GAP
            }
        };
        let grids = &self.grids[..shown];
        let naturals: Vec<u16> = grids
            .iter()
            .map(|gr| gr.natural(&gr.fit_cols((0..gr.headers.len()).collect())))
            .collect();
        let spans: Vec<u16> = naturals
            .iter()
            .map(|&nat| (1..=k).find(|&s| span_width(s) >= nat).unwrap_or(k))
            .collect();
        let mut i = 0;
        let mut first_band = true;
        while i < grids.len() {
            if !first_band {
                y += gap;
            }
            first_band = false;
            if spans[i] == 1 {
                // A flow band: consecutive one-column groups, top to bottom, then across.
                let end = (i..grids.len())
                    .find(|&j| spans[j] != 1)
                    .unwrap_or(grids.len());
                let col_x = |c: u16| c * (cw + GAP);
                let col_w = |c: u16| if c + 1 == k { width - col_x(c) } else { cw };
                // One-column groups fit `cw` whole (a wider last column changes nothing).
                let mut fits: Vec<Option<Fit>> = (i..end).map(|j| Some(grids[j].fit(cw))).collect();
                let heights: Vec<u16> = fits
                    .iter()
                    .flatten()
                    .zip(i..end)
                    .map(|(f, j)| grids[j].height(f, spaced))
                    .collect();
                let mut starts = partition(&heights, usize::from(k), gap);
                starts.push(heights.len());
                let mut band = 0;
                for c in 0..starts.len() - 1 {
                    let mut cy = y;
                    for n in starts[c]..starts[c + 1] {
                        if n > starts[c] {
                            cy += gap;
                        }
                        let (x, w) = (col_x(c as u16), col_w(c as u16));
                        let fit = fits[n].take().unwrap_or_else(|| grids[i + n].fit(w));
                        let h = grids[i + n].height(&fit, spaced);
                        tables.push(Placed {
                            grid: i + n,
                            area: Rect::new(x, cy, w, h),
                            fit,
                        });
                        cy += h;
                    }
                    band = band.max(cy - y);
                }
                y += band;
                i = end;
            } else {
                // A wide band: groups wider than a column, side by side while their natural
                // widths fit (sharing what is left); a lone one spans the columns it needs.
                let mut row = vec![i];
                let mut used = naturals[i];
                i += 1;
                while i < grids.len() && spans[i] > 1 && used + GAP + naturals[i] <= width {
                    used += GAP + naturals[i];
                    row.push(i);
                    i += 1;
                }
                let widths = if row.len() == 1 {
                    vec![span_width(spans[row[0]])]
                } else {
                    let nat: Vec<u16> = row.iter().map(|&j| naturals[j]).collect();
                    split(width - GAP * (row.len() as u16 - 1), &nat)
                };
                let mut x = 0u16;
                let mut band = 0;
                for (&j, w) in row.iter().zip(widths) {
                    let fit = grids[j].fit(w);
                    let h = grids[j].height(&fit, spaced);
                    tables.push(Placed {
                        grid: j,
                        area: Rect::new(x, y, w, h),
                        fit,
                    });
                    band = band.max(h);
                    x += w + GAP;
                }
                y += band;
            }
        }
        if shown < self.grids.len() {
            // "+N more: a, b, …", wrapped between names so none is cut.
            let names: Vec<String> = self.grids[shown..]
                .iter()
                .map(|g| g.group.title())
                .collect();
            let mut line = format!("+{} more:", names.len());
            for (j, name) in names.iter().enumerate() {
                let sep = if j + 1 < names.len() { "," } else { "" };
                let word = format!("{name}{sep}");
                if line.width() + 1 + word.width() > usize::from(width) {
                    lines.push((y, vec![(std::mem::take(&mut line), self.pal.dim())], false));
                    y += 1;
                } else {
                    line.push(' ');
                }
                line.push_str(&word);
            }
            lines.push((y, vec![(line, self.pal.dim())], false));
            y += 1;
        }
        Plan {
            lines,
            tables,
            height: y,
        }
    }

    /// The fullest plan that fits `height` rows: everything; then without spacers and
    /// rules; then without the last groups in category order (at least the first one shows).
    fn fit(&self, width: u16, height: u16) -> (bool, Plan) {
        let n = self.grids.len();
        let full = self.plan(width, true, n);
        if full.height <= height {
            return (true, full);
        }
        for shown in (1..=n).rev() {
            let p = self.plan(width, false, shown);
            if p.height <= height || shown == 1 {
                return (false, p);
            }
        }
        (false, self.plan(width, false, n))
    }
}

/// The full height of an rft panel `width` columns wide (borders included).
pub(super) fn height(state: &PanelState, rft: &RftModel, width: u16) -> u16 {
    let inner = width.saturating_sub(4);
    let layout = Layout::new(state, rft, width);
    layout.plan(inner, true, rft.groups.len()).height + 2
}

/// Draw an rft panel into `area`.
pub(super) fn render(state: &PanelState, rft: &RftModel, area: Rect, buf: &mut Buffer) {
    let layout = Layout::new(state, rft, area.width);
    let g = &state.glyphs;
    let pal = layout.pal;
    let inner_w = area.width.saturating_sub(4);
    let (spaced, plan) = layout.fit(inner_w, area.height.saturating_sub(2));
    let title_max = area.width.saturating_sub(4);
    let inner = draw_frame(&state.model, g, pal, area, plan.height, title_max, buf);
    let bottom = inner.y + inner.height;
    for (y, spans, centre) in &plan.lines {
        if *centre {
            centered(buf, inner, *y, spans, g);
        } else if inner.y + y < bottom {
            put_fit(buf, inner.x, inner.y + y, inner.width, spans, g);
        }
    }
    for p in &plan.tables {
        let y = inner.y + p.area.y;
        if y >= bottom {
            continue;
        }
        let r = Rect::new(
            inner.x + p.area.x,
            y,
            p.area.width,
            p.area.height.min(bottom - y),
        );
        layout.grids[p.grid].render(r, &p.fit, spaced, buf, g, pal);
    }
}
