//! The generic dashboard (`docs/contract/panel.md` "The generic dashboard"): the border and
//! header every panel has, then one group per tag prefix, flowing into one column below 96
//! columns, two from 96 and three from 120. When the area is shorter than the groups, the most
//! recently updated tags stay and a `+N more` line counts the others.

use super::draw::{put, put_fit, width_of, Pal, Spans};
use super::frame::{centered, draw_border, header_lines};
use super::layout::{Tier, GAP};
use crate::format;
use crate::generic::GenericModel;
use crate::glyphs::Glyphs;
use crate::state::PanelState;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;
use unicode_width::UnicodeWidthStr;

/// Width of each value column (`last`, `avg 2s`).
const VALUE_W: u16 = 10;

/// Columns of groups at a tier.
fn columns(tier: Tier) -> u16 {
    match tier {
        Tier::Stacked => 1,
        Tier::SideBySide => 2,
        Tier::Full => 3,
    }
}

/// A group placed in a column.
struct Placed {
    col: u16,
    y: u16,
    title: String,
    rows: Vec<usize>,
}

/// The groups of the kept rows, placed; their height, with the `+N more` line.
struct Body {
    groups: Vec<Placed>,
    height: u16,
    hidden: usize,
}

fn body(g: &GenericModel, keep: &[bool], cols: u16) -> Body {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, r) in g.rows.iter().enumerate().filter(|(i, _)| keep[*i]) {
        match groups.last_mut() {
            Some((name, rows)) if *name == r.group => rows.push(i),
            _ => groups.push((r.group.clone(), vec![i])),
        }
    }
    // Each group goes to the shortest column so far, a blank row between groups.
    let mut heights = vec![0u16; usize::from(cols.max(1))];
    let mut placed = Vec::new();
    for (name, rows) in groups {
        let col = (0..heights.len()).min_by_key(|c| heights[*c]).unwrap_or(0);
        let y = heights[col] + u16::from(heights[col] > 0);
        heights[col] = y + 1 + rows.len() as u16;
        let title = if name.is_empty() {
            "(no prefix)".to_owned()
        } else {
            name
        };
        placed.push(Placed {
            col: col as u16,
            y,
            title,
            rows,
        });
    }
    let hidden = keep.iter().filter(|k| !**k).count();
    Body {
        groups: placed,
        height: heights.iter().copied().max().unwrap_or(0) + u16::from(hidden > 0),
        hidden,
    }
}

/// The body that fits `avail` rows: every tag if they fit, else the most recently updated
/// that do (the `+N more` line included).
fn fitted(g: &GenericModel, cols: u16, avail: u16) -> Body {
    let all = body(g, &vec![true; g.rows.len()], cols);
    if all.height <= avail {
        return all;
    }
    // Heights grow with the number of tags kept: the largest count that fits.
    let (mut lo, mut hi) = (0usize, g.rows.len());
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if body(g, &g.recent(mid), cols).height <= avail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    body(g, &g.recent(lo), cols)
}

fn title(g: &GenericModel, max: u16, glyphs: &Glyphs, pal: Pal) -> Spans {
    let bar = ("|".to_owned(), pal.dim());
    let mut tail: Spans = Vec::new();
    if let Some(s) = g.step {
        tail.push(bar.clone());
        tail.push((
            format!(" step {} ", format::grouped(s as f64)),
            pal.fg(Color::Yellow),
        ));
    }
    tail.push(bar);
    tail.push((format!(" {} tags ", g.rows.len()), pal.fg(Color::Magenta)));
    let mut head: Spans = Vec::new();
    if !glyphs.rocket.is_empty() {
        head.push((glyphs.rocket.to_owned(), pal.plain()));
    }
    // The name gives way first: shortened with an ellipsis, then dropped.
    let room = max.saturating_sub(width_of(&head) + width_of(&tail) + 2) as usize;
    let name = if g.name.width() <= room {
        g.name.clone()
    } else if room > 4 {
        let mut n = String::new();
        for ch in g.name.chars() {
            if n.width() + ch.to_string().width() + glyphs.ellipsis.width() > room {
                break;
            }
            n.push(ch);
        }
        n + glyphs.ellipsis
    } else {
        String::new()
    };
    head.push((format!(" {name} "), pal.bold(Color::White)));
    head.extend(tail);
    head
}

fn right(buf: &mut Buffer, x: u16, y: u16, text: String, style: ratatui::style::Style) {
    let w = (text.width() as u16).min(VALUE_W);
    put(buf, x + VALUE_W - w, y, w, &vec![(text, style)]);
}

/// The full height of a generic dashboard `width` columns wide (borders included).
pub(super) fn height(state: &PanelState, g: &GenericModel, width: u16) -> u16 {
    let inner_w = width.saturating_sub(4);
    let pal = Pal { color: state.color };
    let header = header_lines(&state.model, &state.glyphs, pal, inner_w).len() as u16;
    let cols = columns(Tier::for_width(width));
    let rows = body(g, &vec![true; g.rows.len()], cols).height.max(1);
    header + 1 + rows + 2
}

/// Draw a generic dashboard into `area`.
pub(super) fn render(state: &PanelState, g: &GenericModel, area: Rect, buf: &mut Buffer) {
    let glyphs = &state.glyphs;
    let pal = Pal { color: state.color };
    let inner_w = area.width.saturating_sub(4);
    let header = header_lines(&state.model, glyphs, pal, inner_w);
    let cols = columns(Tier::for_width(area.width));
    let avail = area
        .height
        .saturating_sub(2 + header.len() as u16 + 1)
        .max(1);
    let b = fitted(g, cols, avail);
    let inner_h = header.len() as u16 + 1 + b.height.max(1);
    let t = title(g, inner_w, glyphs, pal);
    let inner = draw_border(t, glyphs, pal, area, inner_h, buf);
    for (y, line) in header.iter().enumerate() {
        centered(buf, inner, y as u16, line, glyphs);
    }
    let top = header.len() as u16 + 1;
    if g.rows.is_empty() {
        let waiting = vec![("Waiting for data...".to_owned(), pal.dim())];
        centered(buf, inner, top, &waiting, glyphs);
        return;
    }
    let bottom = inner.y + inner.height;
    // Groups fill the leftmost columns first: fewer groups than columns share the whole width,
    // so labels are not cut beside empty columns.
    let used = b.groups.iter().map(|p| p.col + 1).max().unwrap_or(1);
    let col_w = inner.width.saturating_sub(GAP * (used - 1)) / used;
    let label_w = col_w.saturating_sub(2 * VALUE_W + 1);
    for p in &b.groups {
        let x = inner.x + p.col * (col_w + GAP);
        let vx = x + col_w.saturating_sub(2 * VALUE_W);
        let mut y = inner.y + top + p.y;
        if y >= bottom {
            continue;
        }
        let heading = vec![(p.title.clone(), pal.bold(Color::Cyan))];
        put_fit(buf, x, y, label_w, &heading, glyphs);
        right(buf, vx, y, "last".into(), pal.dim());
        right(buf, vx + VALUE_W, y, "avg 2s".into(), pal.dim());
        for &i in &p.rows {
            y += 1;
            if y >= bottom {
                break;
            }
            let r = &g.rows[i];
            let label = vec![(format!("  {}", r.label), pal.plain())];
            put_fit(buf, x, y, label_w, &label, glyphs);
            right(buf, vx, y, format::number(r.last), pal.plain());
            let mean = r.mean.map_or_else(|| "-".to_owned(), format::number);
            right(buf, vx + VALUE_W, y, mean, pal.dim());
        }
    }
    if b.hidden > 0 {
        let y = inner.y + top + b.height - 1;
        if y < bottom {
            let more = vec![(
                format!("+{} more (least recently updated)", b.hidden),
                pal.dim(),
            )];
            put_fit(buf, inner.x, y, inner.width, &more, glyphs);
        }
    }
}
