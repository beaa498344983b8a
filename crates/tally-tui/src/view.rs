//! Pure rendering of a [`PanelState`] into a ratatui [`Buffer`]: width tiers, tables, title.
//!
//! Seed 000 ("Off-policy 终端视图"): below 96 columns metrics, rewards and timing stack
//! vertically with a single `Timing` column and short titles, and the reward peak loses
//! precision rather than a core label being cut; from 96 to 119 columns metrics and rewards
//! sit side by side and timing uses the short `Learner` / `Collector` titles; from 120 columns
//! timing uses the full three columns `Learner (Iter Wall)`, `Collector (own clock)` and
//! `System`. The two timing clocks are drawn as separate columns divided by a rule and are
//! never summed.
//!
//! When the area is shorter than the panel, rows are dropped by priority (spacers and rules,
//! then gauges and terminations, then metric diagnostics, quiet collector rows and reward
//! terms), as few as needed, and each table title counts what it hides; core rows, titles and
//! labels are never cut.
//!
//! An `rft` run (seed 002) has none of these tables: the same title, header and width tiers
//! frame its category groups instead (`view_rft`).

use crate::format;
use crate::glyphs::Glyphs;
use crate::state::{MetricGroup, Model, PanelState, Trend};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::border;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};
use tally::terminal::Level;
use tally_schema::{Role, Unit};
use unicode_width::UnicodeWidthStr;

/// A width tier of the panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Fewer than 96 columns: everything stacked, one `Timing` column, short titles.
    Stacked,
    /// 96–119 columns: metrics and rewards side by side; `Learner` / `Collector` timing.
    SideBySide,
    /// 120 columns and more: `Learner (Iter Wall)`, `Collector (own clock)`, `System`.
    Full,
}

impl Tier {
    /// First width of [`Tier::SideBySide`].
    pub const SIDE_BY_SIDE_MIN: u16 = 96;
    /// First width of [`Tier::Full`].
    pub const FULL_MIN: u16 = 120;

    /// The tier of a panel `width` columns wide.
    pub fn for_width(width: u16) -> Tier {
        if width >= Self::FULL_MIN {
            Tier::Full
        } else if width >= Self::SIDE_BY_SIDE_MIN {
            Tier::SideBySide
        } else {
            Tier::Stacked
        }
    }
}

/// Row priorities (lower is more important).
const CORE: u8 = 0;
const DETAIL: u8 = 1;
const GAUGE: u8 = 2;
const SPACE: u8 = 3;
/// A row's rank is `prio * PRIO_RANK + table weight * TABLE_RANK + index`; a cutoff shows
/// the rows whose rank is below it. Spacers and rules rank exactly [`SPACE_RANK`].
const PRIO_RANK: u32 = 100_000;
const TABLE_RANK: u32 = 10_000;
const SPACE_RANK: u32 = SPACE as u32 * PRIO_RANK;
/// Shows every row.
const ALL: u32 = u32::MAX;
/// Shows the core rows only.
const CORE_ONLY: u32 = PRIO_RANK;
/// Columns between side-by-side tables.
pub(crate) const GAP: u16 = 2;
/// Columns between a label and its value.
pub(crate) const PAD: u16 = 2;

pub(crate) type Spans = Vec<(String, Style)>;

fn width_of(spans: &Spans) -> u16 {
    spans.iter().map(|(s, _)| s.width() as u16).sum()
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Pal {
    pub(crate) color: bool,
}

impl Pal {
    pub(crate) fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }
    pub(crate) fn bold(self, c: Color) -> Style {
        self.fg(c).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }
    pub(crate) fn plain(self) -> Style {
        Style::new()
    }
}

#[derive(Debug, Clone)]
struct Row {
    label: Spans,
    value: Spans,
    prio: u8,
    rank: u32,
}

impl Row {
    fn new(
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
    fn heading(label: &str, style: Style, prio: u8) -> Row {
        Row {
            label: vec![(label.to_owned(), style)],
            value: Vec::new(),
            prio,
            rank: 0,
        }
    }
    fn spacer() -> Row {
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
struct Table {
    title: String,
    title_style: Style,
    value_title: &'static str,
    rows: Vec<Row>,
    /// Values right-aligned (numbers of varying length) or left-aligned in their column
    /// (pre-padded timing values, so their `ms` and `%` line up).
    align_right: bool,
}

impl Table {
    /// Give each row its rank; `weight` orders tables within a priority (lower first).
    fn rank(&mut self, weight: u32) {
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
    fn height(&self, cutoff: u32) -> u16 {
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
    fn natural_width(&self, cutoff: u32) -> u16 {
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

    fn render(&self, area: Rect, cutoff: u32, buf: &mut Buffer, g: &Glyphs, pal: Pal) {
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

/// Write spans left to right, at most `max` columns.
///
/// Runs of spaces are skipped rather than written: every frame starts from a blank buffer
/// (ratatui resets it) and no style here has a background, so they would draw nothing.
/// That halves the per-frame cost of grapheme segmentation.
pub(crate) fn put(buf: &mut Buffer, x: u16, y: u16, max: u16, spans: &Spans) -> u16 {
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
pub(crate) fn fill(buf: &mut Buffer, x: u16, y: u16, n: u16, symbol: &str, style: Style) {
    for dx in 0..n {
        if let Some(cell) = buf.cell_mut((x + dx, y)) {
            cell.set_symbol(symbol).set_style(style);
        }
    }
}

/// Write spans, shortening the last one with an ellipsis when they do not fit.
pub(crate) fn put_fit(buf: &mut Buffer, x: u16, y: u16, max: u16, spans: &Spans, g: &Glyphs) {
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

/// Remove Rich-style markup (`[red]`, `[bold yellow]`, `[/]`) from a status text.
pub fn strip_markup(text: &str) -> String {
    const WORDS: [&str; 12] = [
        "red",
        "yellow",
        "green",
        "cyan",
        "blue",
        "magenta",
        "white",
        "bold",
        "dim",
        "italic",
        "bright_blue",
        "on",
    ];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find(']') {
            Some(close) => {
                let inner = after[..close].trim_start_matches('/');
                let is_tag =
                    inner.is_empty() || inner.split_whitespace().all(|w| WORDS.contains(&w));
                if !is_tag {
                    out.push('[');
                    out.push_str(&after[..=close]);
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

struct Tables {
    metrics: Table,
    rewards: Table,
    learner: Table,
    collector: Table,
    system: Table,
}

fn metric_value(row: &crate::state::MetricRow) -> String {
    match row.unit {
        Unit::Ms => format!("{} ms", format::number(row.value)),
        Unit::Count | Unit::Slots | Unit::Requests | Unit::Ticks | Unit::Iterations => {
            format::count(row.value)
        }
        _ => format::number(row.value),
    }
}

fn metrics_table(m: &Model, tier: Tier, pal: Pal) -> Table {
    let title = match tier {
        Tier::Stacked => "Metrics",
        _ => "Losses & Metrics",
    };
    let mut rows = Vec::new();
    let mut terminations = false;
    for r in &m.metrics {
        let (indent, prio, ls) = match r.group {
            MetricGroup::Loss | MetricGroup::Policy => ("", CORE, pal.plain()),
            MetricGroup::Diagnostic => ("  ", DETAIL, pal.plain()),
            MetricGroup::Gauge => ("", GAUGE, pal.plain()),
            MetricGroup::Termination => ("  ", GAUGE, pal.plain()),
        };
        if r.group == MetricGroup::Termination && !terminations {
            terminations = true;
            rows.push(Row::heading("Terminations", pal.dim(), GAUGE));
        }
        let vs = match r.group {
            // reference §1.3: loss values red above 10, else yellow.
            MetricGroup::Loss if r.value > 10.0 => pal.fg(Color::Red),
            MetricGroup::Loss => pal.fg(Color::Yellow),
            MetricGroup::Termination | MetricGroup::Diagnostic => pal.dim(),
            _ => pal.plain(),
        };
        rows.push(Row::new(
            format!("{indent}{}", r.label),
            ls,
            metric_value(r),
            vs,
            prio,
        ));
    }
    if rows.is_empty() {
        rows.push(Row::heading("Waiting for data...", pal.dim(), CORE));
    }
    Table {
        title: title.into(),
        title_style: pal.bold(Color::Cyan),
        value_title: "Value",
        rows,
        align_right: true,
    }
}

fn rewards_table(m: &Model, tier: Tier, g: &Glyphs, pal: Pal) -> Table {
    let mut rows = Vec::new();
    match m.reward {
        Some(r) => {
            let (mark, ms) = match r.trend {
                Trend::Up => (g.up, pal.fg(Color::Green)),
                Trend::Down => (g.down, pal.fg(Color::Red)),
                Trend::Flat => (g.flat, pal.fg(Color::Yellow)),
            };
            // seed 000: below 96 columns the peak loses precision instead of a label being cut.
            let peak = if tier == Tier::Stacked {
                format!("{:.2}", r.peak)
            } else {
                format!("{:.3}", r.peak)
            };
            rows.push(Row {
                label: vec![
                    ("Reward".into(), pal.bold(Color::Reset)),
                    (" ".into(), pal.plain()),
                    (mark.into(), ms),
                ],
                value: vec![
                    ("Mean ".into(), pal.plain()),
                    (format!("{:.3}", r.mean), pal.bold(Color::Green)),
                    (" / Peak ".into(), pal.plain()),
                    (peak, pal.dim()),
                ],
                prio: CORE,
                rank: 0,
            });
        }
        None => rows.push(Row::heading("Waiting for data...", pal.dim(), CORE)),
    }
    for (term, v) in &m.reward_terms {
        let vs = if *v > 0.0 {
            pal.fg(Color::Green)
        } else if *v < 0.0 {
            pal.fg(Color::Red)
        } else {
            pal.dim()
        };
        rows.push(Row::new(
            format!("  {}", term.replace('_', " ")),
            pal.plain(),
            format!("{v:+.4}"),
            vs,
            DETAIL,
        ));
    }
    Table {
        title: "Rewards".into(),
        title_style: pal.bold(Color::Green),
        value_title: "Value",
        rows,
        align_right: false,
    }
}

fn ms_pct(ms: f64, pct: f64) -> String {
    format!("{ms:>7.1}ms  {pct:>3.0}%")
}

fn learner_rows(m: &Model, pal: Pal) -> Vec<Row> {
    let t = &m.learner;
    if !m.has_learner {
        return vec![Row::heading("Waiting for data...", pal.dim(), CORE)];
    }
    let mut rows: Vec<Row> = t
        .rows
        .iter()
        .map(|r| {
            let vs = match r.spec.tag {
                // reference §1.3: Collector Wait red above 1 ms, else yellow; Learning green.
                "Perf/learner_collector_wait_ms" if r.ms > 1.0 => pal.fg(Color::Red),
                "Perf/learner_collector_wait_ms" => pal.fg(Color::Yellow),
                "Perf/learning_time" => pal.fg(Color::Green),
                _ => pal.plain(),
            };
            Row::new(r.spec.label, pal.plain(), ms_pct(r.ms, r.pct), vs, CORE)
        })
        .collect();
    rows.push(Row::new(
        "Other",
        pal.plain(),
        ms_pct(t.other_ms, t.other_pct),
        pal.plain(),
        CORE,
    ));
    let wall_style = if t.over_accounted() {
        pal.bold(Color::Red)
    } else {
        pal.bold(Color::Reset)
    };
    rows.push(Row::new(
        "Iter Wall",
        pal.bold(Color::Reset),
        format!("{:>7.1}ms  100%", t.iter_wall_ms),
        wall_style,
        CORE,
    ));
    rows
}

fn collector_rows(m: &Model, g: &Glyphs, pal: Pal) -> Vec<Row> {
    let c = &m.collector;
    let visible: Vec<_> = c.rows.iter().filter(|r| r.visible).collect();
    if visible.iter().all(|r| r.ms.is_none()) {
        return vec![Row::heading("Waiting for data...", pal.dim(), CORE)];
    }
    let last_detail = visible.iter().rposition(|r| r.detail);
    let sac = m.profile == tally_schema::Profile::SacFamily;
    visible
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let core = tally::timeline::CORE_COLLECTOR.contains(&r.key) || !sac;
            let prio = if core { CORE } else { DETAIL };
            let Some(ms) = r.ms else {
                return Row::new(r.spec.label, pal.plain(), "      -", pal.dim(), prio);
            };
            if r.detail {
                let conn = if Some(i) == last_detail {
                    g.corner
                } else {
                    g.tee
                };
                let value = match r.pct {
                    Some(p) => format!("{ms:>7.1}ms  {p:>3.0}%{conn}"),
                    None => format!("{ms:>7.1}ms {conn}"),
                };
                return Row::new(
                    format!("  {}", r.spec.label),
                    pal.dim(),
                    value,
                    pal.fg(Color::Cyan).add_modifier(Modifier::DIM),
                    prio,
                );
            }
            let value = match (r.pct, r.spec.role) {
                (Some(p), Role::CollectorCyclePhase) => ms_pct(ms, p),
                // APPO per-step EMAs and the rollout wall are not a share of anything: ms only.
                _ => format!("{ms:>7.1}ms"),
            };
            Row::new(r.spec.label, pal.plain(), value, pal.plain(), prio)
        })
        .collect()
}

fn system_rows(m: &Model, pal: Pal) -> Vec<Row> {
    m.system
        .iter()
        .map(|(l, v)| Row::new(*l, pal.plain(), v.clone(), pal.plain(), CORE))
        .collect()
}

fn timing_table(title: &str, rows: Vec<Row>, pal: Pal) -> Table {
    Table {
        title: title.into(),
        title_style: pal.bold(Color::Blue),
        value_title: "Value",
        rows,
        align_right: false,
    }
}

fn tables(m: &Model, tier: Tier, g: &Glyphs, pal: Pal) -> Tables {
    let (lt, ct) = match tier {
        Tier::Full => ("Learner (Iter Wall)", "Collector (own clock)"),
        _ => ("Learner", "Collector"),
    };
    // Within a priority, reward terms go last and metric diagnostics first.
    let ranked = |mut t: Table, weight: u32| {
        t.rank(weight);
        t
    };
    Tables {
        metrics: ranked(metrics_table(m, tier, pal), 3),
        rewards: ranked(rewards_table(m, tier, g, pal), 1),
        learner: ranked(timing_table(lt, learner_rows(m, pal), pal), 2),
        collector: ranked(timing_table(ct, collector_rows(m, g, pal), pal), 2),
        system: ranked(timing_table("System", system_rows(m, pal), pal), 2),
    }
}

/// The single `Timing` column of the stacked tier: the learner clock, then the collector
/// clock, then the system facts, each under its own heading.
fn stacked_timing(t: &Tables, pal: Pal) -> Table {
    let head = pal.bold(Color::Blue);
    let mut rows = vec![Row::heading("Learner", head, CORE)];
    rows.extend(t.learner.rows.iter().cloned());
    rows.push(Row::spacer());
    rows.push(Row::heading("Collector", head, CORE));
    rows.extend(t.collector.rows.iter().cloned());
    rows.push(Row::spacer());
    rows.push(Row::heading("System", head, CORE));
    rows.extend(t.system.rows.iter().cloned());
    let mut table = timing_table("Timing", rows, pal);
    table.rank(2);
    table
}

fn header_fields(m: &Model, g: &Glyphs, pal: Pal) -> Vec<Spans> {
    let mut f: Vec<Spans> = Vec::new();
    if let Some(e) = m.elapsed {
        f.push(vec![(
            format!("{} {}", g.clock, format::time(e)),
            pal.fg(Color::Green),
        )]);
    }
    if let Some(eta) = m.eta {
        f.push(vec![(
            format!("ETA {}", format::time(eta)),
            pal.bold(Color::Magenta),
        )]);
    }
    if let Some(l) = m.ep_len {
        f.push(vec![(format!("Ep Len {l:.1}"), pal.fg(Color::Yellow))]);
    }
    if let Some(s) = m.steps_per_sec {
        f.push(vec![(
            format!("Steps/s {}", format::grouped(s)),
            pal.bold(Color::Green),
        )]);
    }
    if let Some(r) = m.rows_per_sec {
        f.push(vec![(
            format!("Rows/s {}", format::grouped(r)),
            pal.bold(Color::Cyan),
        )]);
    }
    if let Some(n) = m.window_n {
        f.push(vec![(format!("Avg 2s (n={n})"), pal.dim())]);
    }
    if let Some(s) = &m.status {
        f.push(vec![(
            strip_markup(s),
            pal.dim().add_modifier(Modifier::ITALIC),
        )]);
    }
    f
}

/// The header lines (elapsed, ETA, throughput, window, status) packed into `width`
/// columns, then the latest error and the recent warning.
pub(crate) fn header_lines(m: &Model, g: &Glyphs, pal: Pal, width: u16) -> Vec<Spans> {
    let mut lines = wrap_fields(header_fields(m, g, pal), width, pal);
    for a in &m.alerts {
        let (mark, style) = match a.level {
            Level::Error => ("ERROR ", pal.bold(Color::Red)),
            _ => ("WARN ", pal.fg(Color::Yellow)),
        };
        lines.push(vec![(format!("{mark}{}", strip_markup(&a.text)), style)]);
    }
    lines
}

/// Pack fields joined by `" | "` into lines at most `width` wide (a field is never split).
fn wrap_fields(fields: Vec<Spans>, width: u16, pal: Pal) -> Vec<Spans> {
    let sep = (" | ".to_owned(), pal.dim());
    let mut lines: Vec<Spans> = Vec::new();
    let mut cur: Spans = Vec::new();
    for f in fields {
        let fw = width_of(&f);
        if !cur.is_empty() && width_of(&cur) + 3 + fw > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(sep.clone());
        }
        cur.extend(f);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

fn title_spans(m: &Model, max: u16, g: &Glyphs, pal: Pal) -> Spans {
    let t = &m.title;
    let bar = ("|".to_owned(), pal.dim());
    let brand = if m.profile == tally_schema::Profile::Rft {
        " UniLab RFT Training "
    } else if t.on_policy {
        " UniLab On-Policy Training "
    } else {
        " UniLab Off-Policy Training "
    };
    let tail = |task: String| -> Spans {
        vec![
            (format!(" {} ", t.algo), pal.bold(Color::Cyan)),
            bar.clone(),
            (format!(" {task} "), pal.bold(Color::White)),
            bar.clone(),
            (format!(" GPUs {} ", t.gpus), pal.bold(Color::Magenta)),
            bar.clone(),
            (
                format!(" iter {}/{} ", t.iteration, t.max_iterations),
                pal.fg(Color::Yellow),
            ),
        ]
    };
    // Reference §1.3: " 🚀 UniLab Off-Policy Training | SAC | G1WalkFlat | GPUs 1 | iter 5000/5000 ".
    let mut full: Spans = Vec::new();
    if !g.rocket.is_empty() {
        full.push((g.rocket.to_owned(), pal.plain()));
    }
    full.push((brand.to_owned(), pal.bold(Color::Reset)));
    full.push(bar.clone());
    full.extend(tail(t.task.clone()));
    if width_of(&full) <= max {
        return full;
    }
    // Narrower: drop the brand, then shorten the task (not a core label), then drop it.
    let short = tail(t.task.clone());
    if width_of(&short) <= max {
        return short;
    }
    let without_task = width_of(&tail(String::new()));
    let room = max.saturating_sub(without_task + g.ellipsis.width() as u16) as usize;
    if room >= 4 {
        let mut task = String::new();
        for ch in t.task.chars() {
            if task.width() + ch.to_string().width() > room {
                break;
            }
            task.push(ch);
        }
        task.push_str(g.ellipsis);
        return tail(task);
    }
    let mut s = tail(String::new());
    s.drain(1..3);
    s
}

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

/// Split `avail` columns between tables of natural widths `nat`: each gets its natural
/// width and an equal share of the rest; when there is not enough room, shares follow the
/// natural widths.
pub(crate) fn split(avail: u16, nat: &[u16]) -> Vec<u16> {
    let total: u32 = nat.iter().map(|&n| u32::from(n)).sum();
    if total == 0 {
        return vec![avail / nat.len().max(1) as u16; nat.len()];
    }
    let mut out: Vec<u16> = if total <= u32::from(avail) {
        let extra = (u32::from(avail) - total) / nat.len() as u32;
        nat.iter().map(|&n| n + extra as u16).collect()
    } else {
        nat.iter()
            .map(|&n| (u32::from(n) * u32::from(avail) / total) as u16)
            .collect()
    };
    let used: u16 = out.iter().sum();
    if let Some(last) = out.last_mut() {
        *last += avail.saturating_sub(used);
    }
    out
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

/// Draw the border and the title around `inner_height` rows (clipped to `area`); the inner
/// area (two columns of margin each side).
pub(crate) fn draw_frame(
    m: &Model,
    g: &Glyphs,
    pal: Pal,
    area: Rect,
    inner_height: u16,
    title_max: u16,
    buf: &mut Buffer,
) -> Rect {
    let inner_w = area.width.saturating_sub(4);
    let height = (inner_height + 2).min(area.height);
    let outer = Rect::new(area.x, area.y, area.width, height);
    let set = if g.unicode {
        border::ROUNDED
    } else {
        border::Set {
            top_left: "+",
            top_right: "+",
            bottom_left: "+",
            bottom_right: "+",
            vertical_left: "|",
            vertical_right: "|",
            horizontal_top: "-",
            horizontal_bottom: "-",
        }
    };
    let title = title_spans(m, title_max, g, pal);
    let title = Line::from(
        title
            .into_iter()
            .map(|(s, st)| Span::styled(s, st))
            .collect::<Vec<_>>(),
    );
    Block::default()
        .borders(Borders::ALL)
        .border_set(set)
        .border_style(pal.fg(Color::LightBlue))
        .title(title)
        .render(outer, buf);
    Rect::new(
        outer.x + 2,
        outer.y + 1,
        inner_w,
        outer.height.saturating_sub(2),
    )
}

/// Draw `spans` centred on row `y` of `inner` (nothing below its bottom).
pub(crate) fn centered(buf: &mut Buffer, inner: Rect, y: u16, spans: &Spans, g: &Glyphs) {
    let y = inner.y + y;
    if y >= inner.y + inner.height {
        return;
    }
    let w = width_of(spans).min(inner.width);
    let x = inner.x + (inner.width - w) / 2;
    put_fit(buf, x, y, inner.width, spans, g);
}

impl PanelState {
    /// The panel's full height at `width` columns (every row shown, borders included).
    pub fn height(&self, width: u16) -> u16 {
        if let Some(rft) = &self.model.rft {
            return crate::view_rft::height(self, rft, width);
        }
        let layout = Layout::new(self, width);
        layout.plan(width.saturating_sub(4), ALL).height + 2
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
        if let Some(rft) = &self.model.rft {
            return crate::view_rft::render(self, rft, area, buf);
        }
        let layout = Layout::new(self, area.width);
        layout.render(area, buf, area.width.saturating_sub(4));
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
