//! The curves view drawn into a ratatui buffer (pure): a title, the run list with the cursor
//! and what is picked, a grid of charts (one per tag: a plot with its y range, the step range,
//! each picked run's newest value and 2 s mean) and, live, the keys
//! (`docs/contract/panel.md` "Curves in the terminal").

use super::canvas::{Canvas, Mark};
use super::model::{Chart, CurvesModel};
use super::nav::Nav;
use crate::format::{grouped, number};
use crate::glyphs::Glyphs;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

/// Plot rows per chart (each 4 braille dots high).
pub const PLOT_ROWS: u16 = 6;
/// Value lines under a chart at most (one per picked run).
pub const LEGEND_MAX: usize = 6;
/// The y labels' width, then the axis.
const LABEL_W: u16 = 9;
/// Runs that cannot be read named with their message at most (the others counted).
const ERRORS_SHOWN: usize = 3;
/// Columns between charts side by side.
const GUTTER: u16 = 2;

/// One colour per run, by run index, cycling; red is kept for NaN and infinities.
const PALETTE: [Color; 10] = [
    Color::Cyan,
    Color::Yellow,
    Color::Magenta,
    Color::Green,
    Color::Blue,
    Color::LightCyan,
    Color::LightYellow,
    Color::LightMagenta,
    Color::LightGreen,
    Color::LightBlue,
];

/// Run `i`'s colour.
pub fn run_color(i: usize) -> Color {
    PALETTE[i % PALETTE.len()]
}

/// Charts side by side at `width` columns: one below 120, two from 120, three from 200.
pub fn grid(width: u16) -> usize {
    match width {
        0..120 => 1,
        120..200 => 2,
        _ => 3,
    }
}

/// One chart's width at `width` columns.
pub fn chart_width(width: u16) -> u16 {
    let n = grid(width) as u16;
    (width.saturating_sub(GUTTER * (n - 1)) / n).max(LABEL_W + 4)
}

/// The plot's width in cells at `width` columns: the chart less its labels and axis.
fn plot_width(width: u16) -> u16 {
    chart_width(width) - LABEL_W - 1
}

/// How many dot columns a chart has at `width` columns: what each trace is reduced to.
pub fn dot_columns(width: u16, glyphs: Glyphs) -> usize {
    Canvas::new(plot_width(width) as usize, 1, glyphs.unicode).dot_columns()
}

/// The curves view of a model: what is drawn, where the user is, how.
#[derive(Debug, Clone, Copy)]
pub struct CurvesView<'a> {
    /// What to draw.
    pub model: &'a CurvesModel,
    /// The run cursor, the runs picked, the filter.
    pub nav: &'a Nav,
    /// Braille and box lines, or ASCII.
    pub glyphs: Glyphs,
    /// Colour (`NO_COLOR` off).
    pub color: bool,
    /// The live view: the run cursor and the keys line are drawn.
    pub live: bool,
}

type Line = Vec<(String, Style)>;

impl CurvesView<'_> {
    fn style(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    fn picked(&self) -> usize {
        (0..self.model.runs.len())
            .filter(|&i| self.nav.is_picked(i))
            .count()
    }

    /// One chart's height: title, plot, step axis, a value line per picked run.
    pub fn chart_height(&self) -> u16 {
        2 + PLOT_ROWS + self.picked().clamp(1, LEGEND_MAX) as u16
    }

    /// The lines above the charts at `width` columns: the title, the runs (wrapped), errors.
    fn header(&self, width: u16) -> Vec<Line> {
        let m = self.model;
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let shown = m.charts.len();
        let mut title = format!(
            "{}  {} of {} runs  {} tags",
            m.title,
            self.picked(),
            m.runs.len(),
            m.tags
        );
        if shown > 0 && shown < m.tags {
            title += &format!("  charts {}-{}", m.first + 1, m.first + shown);
        }
        if !self.nav.filter.is_empty() {
            title += &format!("  filter: {}", self.nav.filter);
        }
        let mut lines = vec![vec![(title, bold)]];
        let mut line: Line = Vec::new();
        let mut used = 0usize;
        let swatch = if self.glyphs.unicode { "■" } else { "#" };
        for (i, run) in m.runs.iter().enumerate() {
            let on = self.nav.is_picked(i);
            let cursor = self.live && i == self.nav.cursor.min(m.runs.len() - 1);
            let mark = if on { "[x]" } else { "[ ]" };
            let err = if run.error.is_some() { " !" } else { "" };
            let text = format!("{mark} {}{err}", run.name);
            let w = text.width() + 4;
            if used > 0 && used + w > width as usize {
                lines.push(std::mem::take(&mut line));
                used = 0;
            }
            let mut name_style = if on {
                self.style(run_color(i))
            } else {
                Style::new().add_modifier(Modifier::DIM)
            };
            if cursor {
                name_style = name_style.add_modifier(Modifier::REVERSED);
            }
            let sw = if on {
                (swatch.to_owned(), self.style(run_color(i)))
            } else {
                (" ".to_owned(), Style::new())
            };
            line.push((if cursor { ">" } else { " " }.to_owned(), Style::new()));
            line.push(sw);
            line.push((" ".to_owned(), Style::new()));
            line.push((text, name_style));
            line.push(("  ".to_owned(), Style::new()));
            used += w;
        }
        if !line.is_empty() {
            lines.push(line);
        }
        // The first few runs that cannot be read, with the reader's message.
        let failed: Vec<_> = m.runs.iter().filter(|r| r.error.is_some()).collect();
        for run in failed.iter().take(ERRORS_SHOWN) {
            let e = run.error.as_deref().unwrap_or_default();
            lines.push(vec![(format!("{}: {e}", run.name), self.style(Color::Red))]);
        }
        if failed.len() > ERRORS_SHOWN {
            let more = failed.len() - ERRORS_SHOWN;
            lines.push(vec![(
                format!("+{more} more runs cannot be read"),
                self.style(Color::Red),
            )]);
        }
        // The runs a health rule fired on, each with its newest finding, as the panel's Health
        // line says it (docs/contract/health.md "In tally watch").
        let unhealthy: Vec<_> = m.runs.iter().filter(|r| r.health.is_some()).collect();
        for run in unhealthy.iter().take(ERRORS_SHOWN) {
            let h = run.health.as_deref().unwrap_or_default();
            lines.push(vec![(
                format!("{}: Health {h}", run.name),
                self.style(Color::Red),
            )]);
        }
        if unhealthy.len() > ERRORS_SHOWN {
            let more = unhealthy.len() - ERRORS_SHOWN;
            lines.push(vec![(
                format!("+{more} more runs with health findings (tally health lists them)"),
                self.style(Color::Red),
            )]);
        }
        if let Some(n) = &m.notice {
            lines.push(vec![(n.clone(), Style::new())]);
        }
        lines
    }

    /// The keys line of the live view.
    fn footer(&self) -> Line {
        if self.nav.editing {
            return vec![(
                format!(
                    "filter: {}_   Enter keeps it, Esc clears it",
                    self.nav.filter
                ),
                Style::new().add_modifier(Modifier::BOLD),
            )];
        }
        let (ud, lr) = if self.glyphs.unicode {
            ("↑↓", "←→")
        } else {
            ("up/down", "left/right")
        };
        let mut text = format!("q quit  {ud} j k tags  / filter");
        if self.model.runs.len() > 1 {
            text += &format!("  {lr} h l run  space pick");
        }
        vec![(text, Style::new().add_modifier(Modifier::DIM))]
    }

    /// How many charts fit below the header in `width` × `height` (at least one).
    pub fn charts_fitting(&self, width: u16, height: u16) -> usize {
        let used = self.header(width).len() as u16 + u16::from(self.live);
        let rows = (height.saturating_sub(used) / self.chart_height()).max(1);
        rows as usize * grid(width)
    }

    /// The whole view's height at `width` when every chart of the model is drawn (plain text).
    pub fn full_height(&self, width: u16) -> u16 {
        let rows = self.model.charts.len().div_ceil(grid(width)) as u16;
        self.header(width).len() as u16 + u16::from(self.live) + rows * self.chart_height()
    }

    fn chart(&self, chart: &Chart, area: Rect, buf: &mut Buffer) {
        let g = self.glyphs;
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let plot_w = area.width.saturating_sub(LABEL_W + 1);
        let mut canvas = Canvas::new(plot_w as usize, PLOT_ROWS as usize, g.unicode);
        // The y range: every picked trace's finite values.
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for t in &chart.traces {
            for c in t.columns.iter().flatten().filter(|c| c.has_finite()) {
                lo = lo.min(c.min);
                hi = hi.max(c.max);
            }
        }
        if lo > hi {
            (lo, hi) = (0.0, 1.0);
        } else if lo == hi {
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
            (lo, hi) = (lo - pad, hi + pad);
        }
        for t in &chart.traces {
            canvas.draw(t, lo, hi);
        }
        // Title: the tag, and the meaning of the marks the chart has.
        let mut title: Line = vec![(chart.tag.clone(), bold)];
        let cols = || chart.traces.iter().flat_map(|t| t.columns.iter().flatten());
        let (nan, up, down) = marks(g);
        for (has, text) in [
            (cols().any(|c| c.nan), format!("  {nan} NaN")),
            (cols().any(|c| c.pos_inf), format!("  {up} +inf")),
            (cols().any(|c| c.neg_inf), format!("  {down} -inf")),
        ] {
            if has {
                title.push((text, self.style(Color::Red)));
            }
        }
        put(buf, area.x, area.y, area.width, &title);
        let top = area.y + 1;
        let (tee, bar, corner, rule) = if g.unicode {
            ("┤", "│", "└", "─")
        } else {
            ("+", "|", "+", "-")
        };
        let axis_x = area.x + LABEL_W;
        for r in 0..PLOT_ROWS {
            let label = match r {
                0 => number(hi),
                r if r == PLOT_ROWS - 1 => number(lo),
                _ => String::new(),
            };
            let y = top + r;
            let axis = if label.is_empty() { bar } else { tee };
            put(
                buf,
                area.x,
                y,
                LABEL_W + 1,
                &vec![(format!("{label:>w$}{axis}", w = LABEL_W as usize), dim())],
            );
            for cx in 0..plot_w {
                let Some((ch, run)) = canvas.cell(cx as usize, r as usize) else {
                    continue;
                };
                if let Some(cell) = buf.cell_mut((axis_x + 1 + cx, y)) {
                    cell.set_char(ch).set_style(self.style(run_color(run)));
                }
            }
        }
        // NaN and infinities over the line, at the plot's top or bottom.
        for cx in 0..plot_w {
            for (is_top, y) in [(true, top), (false, top + PLOT_ROWS - 1)] {
                if let Some((mark, _)) = canvas.mark_at(cx as usize, is_top) {
                    let (nan, up, down) = marks(g);
                    let ch = match mark {
                        Mark::Nan => nan,
                        Mark::PosInf => up,
                        Mark::NegInf => down,
                    };
                    if let Some(cell) = buf.cell_mut((axis_x + 1 + cx, y)) {
                        cell.set_symbol(ch)
                            .set_style(self.style(Color::Red).add_modifier(Modifier::BOLD));
                    }
                }
            }
        }
        // The step axis: the first and the last step of the range.
        let y = top + PLOT_ROWS;
        let (a, b) = (grouped(chart.steps.0 as f64), grouped(chart.steps.1 as f64));
        let fill = (plot_w as usize).saturating_sub(a.width() + b.width());
        let axis = format!("{corner}{a}{}{b}", rule.repeat(fill));
        put(
            buf,
            area.x,
            y,
            area.width,
            &vec![(format!("{:>w$}{axis}", "", w = LABEL_W as usize), dim())],
        );
        // A value line per picked run: its newest value and its 2 s mean.
        let swatch = if g.unicode { "■" } else { "#" };
        let legend = self.picked().clamp(1, LEGEND_MAX);
        for (k, v) in chart.values.iter().enumerate() {
            let y = top + PLOT_ROWS + 1 + k as u16;
            let name = self.model.runs.get(v.run).map_or("", |r| r.name.as_str());
            if k + 1 == legend && chart.values.len() > legend {
                let more = chart.values.len() - k;
                put(
                    buf,
                    area.x,
                    y,
                    area.width,
                    &vec![(format!(" +{more} more runs"), dim())],
                );
                break;
            }
            let mean = v.mean_2s.map_or_else(|| "-".to_owned(), number);
            let line = vec![
                (format!(" {swatch} "), self.style(run_color(v.run))),
                (name.to_owned(), self.style(run_color(v.run))),
                (format!("  last {}", number(v.last)), Style::new()),
                (format!("  avg 2s {mean}"), Style::new()),
                (format!("  step {}", grouped(v.step as f64)), dim()),
            ];
            put(buf, area.x, y, area.width, &line);
        }
        if chart.values.is_empty() {
            let y = top + PLOT_ROWS + 1;
            put(
                buf,
                area.x,
                y,
                area.width,
                &vec![(" no picked run has this tag".to_owned(), dim())],
            );
        }
    }
}

/// The NaN, +inf and -inf marks.
fn marks(g: Glyphs) -> (&'static str, &'static str, &'static str) {
    if g.unicode {
        ("×", "▲", "▼")
    } else {
        ("x", "^", "v")
    }
}

fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

/// Write `line` from (`x`, `y`), at most `max` columns.
fn put(buf: &mut Buffer, x: u16, y: u16, max: u16, line: &Line) {
    let end = x.saturating_add(max).min(buf.area.right());
    let mut x = x;
    for (s, st) in line {
        if x >= end || y >= buf.area.bottom() {
            return;
        }
        let (nx, _) = buf.set_stringn(x, y, s, (end - x) as usize, *st);
        x = nx;
    }
}

impl Widget for &CurvesView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width < LABEL_W + 4 || area.height < 2 {
            return;
        }
        let header = self.header(area.width);
        let mut y = area.y;
        for line in &header {
            if y >= area.bottom() {
                return;
            }
            put(buf, area.x, y, area.width, line);
            y += 1;
        }
        let bottom = if self.live {
            area.bottom().saturating_sub(1)
        } else {
            area.bottom()
        };
        let n = grid(area.width);
        let cw = chart_width(area.width);
        let ch = self.chart_height();
        for (i, chart) in self.model.charts.iter().enumerate() {
            let (row, col) = ((i / n) as u16, (i % n) as u16);
            let cy = y + row * ch;
            if cy + ch > bottom {
                break;
            }
            let cx = area.x + col * (cw + GUTTER);
            self.chart(chart, Rect::new(cx, cy, cw, ch), buf);
        }
        if self.live {
            put(buf, area.x, area.bottom() - 1, area.width, &self.footer());
        }
    }
}

/// The view as plain text (no colour), every chart of the model, `width` columns wide: the
/// frame `tally watch --curves` prints off a terminal.
pub fn plain_text(model: &CurvesModel, nav: &Nav, glyphs: Glyphs, width: u16) -> String {
    let view = CurvesView {
        model,
        nav,
        glyphs,
        color: false,
        live: false,
    };
    let height = view.full_height(width);
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    (&view).render(buf.area, &mut buf);
    crate::view::buffer_text(&buf)
}
