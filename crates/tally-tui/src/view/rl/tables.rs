//! The contents of the RL panel's tables, built from the [`Model`]: metrics, rewards, the
//! learner and collector timelines, and the system facts.

use super::table::{Row, Table, CORE, DETAIL, GAUGE};
use crate::format;
use crate::glyphs::Glyphs;
use crate::state::{shows_other, wall_label, MetricGroup, Model, Trend};
use crate::view::draw::Pal;
use crate::view::layout::Tier;
use ratatui::style::{Color, Modifier};
use tally::timeline::{phase_label, CYCLE_TAG};
use tally_schema::lookup::metric;
use tally_schema::{Profile, Role, Unit};

pub(super) struct Tables {
    pub(super) metrics: Table,
    pub(super) rewards: Table,
    pub(super) learner: Table,
    pub(super) collector: Table,
    pub(super) system: Table,
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
            // Loss values are red above 10, else yellow (docs/contract/panel.md).
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
    user_rows(m, tier, pal, &mut rows);
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

/// The user's own metrics under their own heading: as many as the tier allows, the most
/// recently logged first, then a "+N more" line; they give way to the schema's rows when the
/// terminal is short (docs/contract/panel.md "Metrics table").
fn user_rows(m: &Model, tier: Tier, pal: Pal, rows: &mut Vec<Row>) {
    if m.user.is_empty() {
        return;
    }
    let shown = match tier {
        Tier::Full => 8,
        Tier::SideBySide => 6,
        Tier::Stacked => 4,
    };
    rows.push(Row::heading("Your metrics", pal.dim(), GAUGE));
    for (tag, v) in m.user.iter().take(shown) {
        rows.push(Row::new(
            format!("  {tag}"),
            pal.plain(),
            format::number(*v),
            pal.plain(),
            GAUGE,
        ));
    }
    if m.user.len() > shown {
        let more = format!("  +{} more", m.user.len() - shown);
        rows.push(Row::heading(&more, pal.dim(), GAUGE));
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
            // Below 96 columns the peak loses precision instead of a label being cut
            // (docs/contract/panel.md, "Width tiers").
            let peak = format::reward(r.peak, if tier == Tier::Stacked { 2 } else { 3 });
            rows.push(Row {
                label: vec![
                    ("Reward".into(), pal.bold(Color::Reset)),
                    (" ".into(), pal.plain()),
                    (mark.into(), ms),
                ],
                value: vec![
                    ("Mean ".into(), pal.plain()),
                    (format::reward(r.mean, 3), pal.bold(Color::Green)),
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
                // Collector Wait is red above 1 ms, else yellow; Learning is green
                // (docs/contract/panel.md).
                "Perf/learner_collector_wait_ms" if r.ms > 1.0 => pal.fg(Color::Red),
                "Perf/learner_collector_wait_ms" => pal.fg(Color::Yellow),
                "Perf/learning_time" => pal.fg(Color::Green),
                _ => pal.plain(),
            };
            let label = phase_label(m.profile, r.spec);
            Row::new(label, pal.plain(), ms_pct(r.ms, r.pct), vs, CORE)
        })
        .collect();
    if shows_other(m.profile) {
        rows.push(Row::new(
            "Other",
            pal.plain(),
            ms_pct(t.other_ms, t.other_pct),
            pal.plain(),
            CORE,
        ));
    }
    let wall_style = if t.over_accounted() {
        pal.bold(Color::Red)
    } else {
        pal.bold(Color::Reset)
    };
    rows.push(Row::new(
        wall_label(m.profile),
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
    let sac = m.profile == Profile::SacFamily;
    let mut rows: Vec<Row> = visible
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let core = tally::timeline::CORE_COLLECTOR.contains(&r.key) || !sac;
            let prio = if core { CORE } else { DETAIL };
            let label = phase_label(m.profile, r.spec);
            let Some(ms) = r.ms else {
                return Row::new(label, pal.plain(), "      -", pal.dim(), prio);
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
                // On-policy the rollout is Collect, a share of Iter Time.
                (Some(p), Role::RolloutTotal) if m.profile == Profile::OnPolicy => ms_pct(ms, p),
                // APPO per-step EMAs and the rollout wall are not a share of anything: ms only.
                _ => format!("{ms:>7.1}ms"),
            };
            Row::new(label, pal.plain(), value, pal.plain(), prio)
        })
        .collect();
    // The cycle total closes the table as Iter Wall closes the learner's: the 100 % every
    // collector share is of, shown only when every phase was reported
    // (docs/contract/timelines.md "Collector timeline (sac_family)").
    if let (Some(cycle), Some(spec)) = (c.cycle_ms, metric(CYCLE_TAG)) {
        rows.push(Row::new(
            spec.label,
            pal.bold(Color::Reset),
            format!("{cycle:>7.1}ms  100%"),
            pal.bold(Color::Reset),
            CORE,
        ));
    }
    rows
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

pub(super) fn tables(m: &Model, tier: Tier, g: &Glyphs, pal: Pal) -> Tables {
    // The full titles name each column's denominator; on-policy both columns are shares of
    // one Iter Time (docs/contract/panel.md "Width tiers").
    let (lt, ct) = match (tier, m.profile) {
        (Tier::Full, Profile::OnPolicy) => ("Learner (Iter Time)", "Collector (Iter Time)"),
        (Tier::Full, _) => ("Learner (Iter Wall)", "Collector (own clock)"),
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
pub(super) fn stacked_timing(t: &Tables, pal: Pal) -> Table {
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
