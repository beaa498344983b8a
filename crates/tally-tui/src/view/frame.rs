//! What every panel has around its tables: the border with the title, and the header lines
//! (elapsed, ETA, throughput, window, status, the latest error and warning).

use super::draw::{put_fit, width_of, Pal, Spans};
use crate::format;
use crate::glyphs::Glyphs;
use crate::state::Model;
use crate::text::strip_markup;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use ratatui::symbols::border;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};
use tally::terminal::Level;
use unicode_width::UnicodeWidthStr;

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
/// columns, then the latest error, the recent warning and the Health line.
pub(super) fn header_lines(m: &Model, g: &Glyphs, pal: Pal, width: u16) -> Vec<Spans> {
    let mut lines = wrap_fields(header_fields(m, g, pal), width, pal);
    for a in &m.alerts {
        let (mark, style) = match a.level {
            Level::Error => ("ERROR ", pal.bold(Color::Red)),
            _ => ("WARN ", pal.fg(Color::Yellow)),
        };
        lines.push(vec![(format!("{mark}{}", strip_markup(&a.text)), style)]);
    }
    if let Some(h) = &m.health {
        lines.push(vec![
            ("Health ".to_owned(), pal.bold(Color::Red)),
            (h.clone(), pal.fg(Color::Red)),
        ]);
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
    let run_name = t.run.join(if g.unicode { " · " } else { " - " });
    let tail = |run: String| -> Spans {
        let mut s: Spans = Vec::new();
        if !run.is_empty() {
            s.push((format!(" {run} "), pal.bold(Color::Cyan)));
            s.push(bar.clone());
        }
        s.push((format!(" GPUs {} ", t.gpus), pal.bold(Color::Magenta)));
        s.push(bar.clone());
        s.push((format!(" {} ", t.progress()), pal.fg(Color::Yellow)));
        s
    };
    // The full title names the run, e.g. " 🚀 SAC · G1WalkFlat · mjlab | GPUs 1 |
    // iter 5000/5000 " (docs/contract/panel.md "Title and header").
    let mut full: Spans = Vec::new();
    if !g.rocket.is_empty() {
        full.push((g.rocket.to_owned(), pal.plain()));
    }
    full.extend(tail(run_name.clone()));
    if width_of(&full) <= max {
        return full;
    }
    // Narrower: drop the rocket, then shorten the run's name, then drop it.
    let short = tail(run_name.clone());
    if width_of(&short) <= max {
        return short;
    }
    let without_run = width_of(&tail(String::new())) + 1;
    let room = max.saturating_sub(without_run + 2 + g.ellipsis.width() as u16) as usize;
    if room >= 4 {
        let mut run = String::new();
        for ch in run_name.chars() {
            if run.width() + ch.to_string().width() > room {
                break;
            }
            run.push(ch);
        }
        run.push_str(g.ellipsis);
        return tail(run);
    }
    tail(String::new())
}

/// Draw the border and the title around `inner_height` rows (clipped to `area`); the inner
/// area (two columns of margin each side).
pub(super) fn draw_frame(
    m: &Model,
    g: &Glyphs,
    pal: Pal,
    area: Rect,
    inner_height: u16,
    title_max: u16,
    buf: &mut Buffer,
) -> Rect {
    let title = title_spans(m, title_max, g, pal);
    draw_border(title, g, pal, area, inner_height, buf)
}

/// [`draw_frame`] with a title of the caller's (a view whose title is not the RL one).
pub(super) fn draw_border(
    title: Spans,
    g: &Glyphs,
    pal: Pal,
    area: Rect,
    inner_height: u16,
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
pub(super) fn centered(buf: &mut Buffer, inner: Rect, y: u16, spans: &Spans, g: &Glyphs) {
    let y = inner.y + y;
    if y >= inner.y + inner.height {
        return;
    }
    let w = width_of(spans).min(inner.width);
    let x = inner.x + (inner.width - w) / 2;
    put_fit(buf, x, y, inner.width, spans, g);
}
