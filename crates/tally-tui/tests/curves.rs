//! The curves view (`docs/contract/panel.md` "Curves in the terminal"): every extreme of a
//! series reaches its dot column, NaN and infinities are marked, runs overlay in their own
//! colours, ASCII off a Unicode locale, and the layout at 80 and 160 columns.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::widgets::Widget;
use tally_tui::curves::view::{chart_width, run_color};
use tally_tui::curves::{
    dot_columns, plain_text, Chart, Column, CurvesModel, CurvesView, Nav, RunLabel, RunValue, Trace,
};
use tally_tui::{buffer_text, Glyphs};

/// `values` (x = their index) reduced to `dots` columns of equal x span, each its min/max and
/// ends: what `tally watch` gets from the reader's M4 buckets.
fn columns(values: &[f64], dots: usize) -> Vec<Option<Column>> {
    let mut out: Vec<Vec<f64>> = vec![Vec::new(); dots];
    let n = values.len();
    for (i, &v) in values.iter().enumerate() {
        let slot = (i as f64 * dots as f64 / (n - 1).max(1) as f64) as usize;
        out[slot.min(dots - 1)].push(v);
    }
    out.into_iter().map(Column::of).collect()
}

fn chart(tag: &str, runs: &[(usize, &[f64])], dots: usize) -> Chart {
    Chart {
        tag: tag.to_owned(),
        steps: (
            0,
            runs.iter()
                .map(|(_, v)| v.len() as i64 - 1)
                .max()
                .unwrap_or(0),
        ),
        traces: runs
            .iter()
            .map(|&(run, v)| Trace {
                run,
                columns: columns(v, dots),
            })
            .collect(),
        values: runs
            .iter()
            .map(|&(run, v)| RunValue {
                run,
                last: *v.last().unwrap(),
                mean_2s: Some(v[v.len().saturating_sub(4)..].iter().sum::<f64>() / 4.0),
                step: v.len() as i64 - 1,
            })
            .collect(),
    }
}

fn model(runs: &[&str], charts: Vec<Chart>) -> CurvesModel {
    CurvesModel {
        title: "logs".into(),
        runs: runs
            .iter()
            .map(|r| RunLabel {
                name: (*r).to_owned(),
                error: None,
                health: None,
            })
            .collect(),
        tags: charts.len(),
        first: 0,
        charts,
        notice: None,
    }
}

fn render(m: &CurvesModel, nav: &Nav, glyphs: Glyphs, width: u16, height: u16) -> Buffer {
    let view = CurvesView {
        model: m,
        nav,
        glyphs,
        color: true,
        live: true,
    };
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    (&view).render(buf.area, &mut buf);
    buf
}

/// The cells of the plot row whose y label is `label` (`1.000┤`): (x, symbol, colour).
fn plot_row(buf: &Buffer, label: &str) -> Vec<(u16, String, Color)> {
    let text = buffer_text(buf);
    let y = text
        .lines()
        .position(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no row labelled {label}:\n{text}")) as u16;
    let axis = (0..buf.area.width)
        .find(|&x| ["┤", "+"].contains(&buf[(x, y)].symbol()))
        .unwrap();
    (axis + 1..buf.area.width)
        .filter(|&x| buf[(x, y)].symbol() != " ")
        .map(|x| {
            (
                x - axis - 1,
                buf[(x, y)].symbol().to_owned(),
                buf[(x, y)].fg,
            )
        })
        .collect()
}

fn braille_bits(s: &str) -> u32 {
    let c = s.chars().next().unwrap() as u32;
    assert!((0x2800..=0x28ff).contains(&c), "{s:?} is not braille");
    c - 0x2800
}

#[test]
fn a_one_point_spike_in_a_million_points_sets_the_top_dot_of_its_column() {
    let mut values = vec![0.0; 1_000_000];
    values[654_321] = 1.0;
    let dots = dot_columns(80, Glyphs::UNICODE);
    let m = model(&["run"], vec![chart("loss", &[(0, &values)], dots)]);
    let buf = render(&m, &Nav::new(1), Glyphs::UNICODE, 80, 24);
    let top = plot_row(&buf, "1.000┤");
    // One cell on the top row: the spike's, its top dot set (left or right column of dots).
    assert_eq!(top.len(), 1, "{top:?}\n{}", buffer_text(&buf));
    let (x, sym, _) = &top[0];
    let dot = 654_321 * dots / 999_999;
    assert_eq!(*x as usize, dot / 2);
    assert_ne!(braille_bits(sym) & (0x01 | 0x08), 0, "{sym}");
    // The rest of the series lies along the bottom row.
    let bottom = plot_row(&buf, "0┤");
    assert!(bottom.len() as u16 >= chart_width(80) - 12, "{bottom:?}");
}

#[test]
fn nan_and_infinities_are_marked_in_red_never_dropped() {
    let mut values: Vec<f64> = (0..400).map(|i| f64::from(i) / 400.0).collect();
    values[100] = f64::NAN;
    values[300] = f64::NEG_INFINITY;
    let dots = dot_columns(80, Glyphs::UNICODE);
    let m = model(&["run"], vec![chart("loss", &[(0, &values)], dots)]);
    let buf = render(&m, &Nav::new(1), Glyphs::UNICODE, 80, 24);
    let text = buffer_text(&buf);
    assert!(text.contains("× NaN") && text.contains("▼ -inf"), "{text}");
    assert!(!text.contains("+inf"), "{text}");
    let top = plot_row(&buf, "0.9975┤");
    let nan = top.iter().find(|(_, s, _)| s == "×").expect("NaN mark");
    assert_eq!(nan.2, Color::Red);
    assert_eq!(nan.0 as usize, 100 * dots / 399 / 2);
    let bottom = plot_row(&buf, "0┤");
    assert!(
        bottom.iter().any(|(_, s, c)| s == "▼" && *c == Color::Red),
        "{text}"
    );

    // ASCII: the same marks as letters.
    let buf = render(&m, &Nav::new(1), Glyphs::ASCII, 80, 24);
    let top = plot_row(&buf, "0.9975+");
    assert!(
        top.iter().any(|(_, s, _)| s == "x"),
        "{}",
        buffer_text(&buf)
    );
}

#[test]
fn two_runs_overlay_in_their_own_colours_and_an_unpicked_run_leaves_the_chart() {
    let high = vec![1.0; 200];
    let low = vec![0.0; 200];
    let dots = dot_columns(80, Glyphs::UNICODE);
    let m = model(
        &["seed_0", "seed_1"],
        vec![chart("return", &[(0, &high), (1, &low)], dots)],
    );
    let buf = render(&m, &Nav::new(2), Glyphs::UNICODE, 80, 24);
    let top = plot_row(&buf, "1.000┤");
    let bottom = plot_row(&buf, "0┤");
    assert!(!top.is_empty() && !bottom.is_empty());
    assert!(top.iter().all(|(_, _, c)| *c == run_color(0)), "{top:?}");
    assert!(
        bottom.iter().all(|(_, _, c)| *c == run_color(1)),
        "{bottom:?}"
    );
    assert_ne!(run_color(0), run_color(1));
    let text = buffer_text(&buf);
    assert!(
        text.contains("[x] seed_0") && text.contains("[x] seed_1"),
        "{text}"
    );
    assert!(text.contains("■ seed_1  last 0"), "{text}");

    // seed_1 unpicked: the caller leaves its trace and values out; the list shows it off.
    let mut nav = Nav::new(2);
    nav.picked[1] = false;
    let m = model(
        &["seed_0", "seed_1"],
        vec![chart("return", &[(0, &high)], dots)],
    );
    let buf = render(&m, &nav, Glyphs::UNICODE, 80, 24);
    let text = buffer_text(&buf);
    assert!(
        text.contains("[ ] seed_1") && !text.contains("■ seed_1"),
        "{text}"
    );
    let colours: Vec<Color> = (0..80)
        .flat_map(|x| (0..24).map(move |y| (x, y)))
        .map(|p| buf[p].fg)
        .collect();
    assert!(!colours.contains(&run_color(1)));
}

fn cleanrl_like(width: u16, glyphs: Glyphs) -> CurvesModel {
    let dots = dot_columns(width, glyphs);
    let ret_a: Vec<f64> = (0..500).map(|i| f64::from(i) * 0.8).collect();
    let ret_b: Vec<f64> = (0..400).map(|i| f64::from(i) * 0.5 + 20.0).collect();
    let loss_a: Vec<f64> = (0..500)
        .map(|i| 1.0 / (1.0 + f64::from(i) / 50.0))
        .collect();
    let loss_b: Vec<f64> = (0..400)
        .map(|i| 2.0 / (1.0 + f64::from(i) / 20.0))
        .collect();
    let mut fps = vec![1000.0; 500];
    fps[250] = f64::NAN;
    model(
        &["ppo/seed_0", "ppo/seed_1"],
        vec![
            chart("charts/episodic_return", &[(0, &ret_a), (1, &ret_b)], dots),
            chart("losses/value_loss", &[(0, &loss_a), (1, &loss_b)], dots),
            chart("time/fps", &[(0, &fps)], dots),
        ],
    )
}

#[test]
fn layout_at_80_and_160_columns() {
    for width in [80u16, 160] {
        let m = cleanrl_like(width, Glyphs::UNICODE);
        let text = plain_text(&m, &Nav::new(2), Glyphs::UNICODE, width);
        assert!(text.lines().all(|l| l.chars().count() <= width as usize));
        insta::assert_snapshot!(format!("curves_{width}"), text);
    }
    // 160 columns: two charts side by side.
    let text = plain_text(
        &cleanrl_like(160, Glyphs::UNICODE),
        &Nav::new(2),
        Glyphs::UNICODE,
        160,
    );
    let titles = text
        .lines()
        .find(|l| l.contains("charts/episodic_return"))
        .unwrap();
    assert!(titles.contains("losses/value_loss"), "{text}");
}

#[test]
fn the_ascii_fallback_draws_only_ascii() {
    let m = cleanrl_like(80, Glyphs::ASCII);
    let text = plain_text(&m, &Nav::new(2), Glyphs::ASCII, 80);
    assert!(text.is_ascii(), "{text}");
    assert!(
        text.contains("# ppo/seed_1") && text.contains("x NaN"),
        "{text}"
    );
    // The line is drawn: the value loss's plot holds dot characters.
    assert!(text.contains('\'') && text.contains('.'), "{text}");
    insta::assert_snapshot!("curves_ascii_80", text);
}

#[test]
fn the_live_view_fits_whole_charts_and_shows_the_keys() {
    let m = cleanrl_like(80, Glyphs::UNICODE);
    let nav = Nav::new(2);
    let view = CurvesView {
        model: &m,
        nav: &nav,
        glyphs: Glyphs::UNICODE,
        color: true,
        live: true,
    };
    // Title, run list, keys: 3 rows; charts of 10 rows (title, 6 plot rows, axis, 2 runs).
    assert_eq!(view.chart_height(), 10);
    assert_eq!(view.charts_fitting(80, 24), 2);
    assert_eq!(view.charts_fitting(160, 24), 4);
    let text = buffer_text(&render(&m, &nav, Glyphs::UNICODE, 80, 24));
    assert!(
        text.contains("losses/value_loss") && !text.contains("time/fps"),
        "{text}"
    );
    assert!(
        text.contains("q quit") && text.contains("space pick"),
        "{text}"
    );
    assert!(text.contains(">■ [x] ppo/seed_0"), "{text}");
}

#[test]
fn runs_that_cannot_be_read_are_marked_and_named_a_few_at_most() {
    let dots = dot_columns(80, Glyphs::UNICODE);
    let mut m = model(
        &["a", "b", "c", "d", "e"],
        vec![chart("loss", &[(0, &[1.0, 2.0])], dots)],
    );
    for run in &mut m.runs[1..] {
        run.error = Some(format!("{}/events: corrupt record at byte 0", run.name));
    }
    let text = plain_text(&m, &Nav::new(5), Glyphs::UNICODE, 80);
    assert!(
        text.contains("[x] b !") && !text.contains("[x] a !"),
        "{text}"
    );
    assert!(
        text.contains("b: b/events: corrupt record at byte 0"),
        "{text}"
    );
    assert!(
        !text.contains("e: e/events") && text.contains("+1 more runs cannot be read"),
        "{text}"
    );
    assert!(text.contains("■ a  last 2.000"), "{text}");
}
