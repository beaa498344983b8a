//! The plain-text view: one compact ASCII line per summary, for log files, CI and `--panel off`.
//!
//! Off a terminal there are no escape codes at all; a one-line summary every N
//! seconds carries the iteration, Steps/s, the mean reward and the top shares of the
//! iteration (on-policy: Collect and Train of Iter Time). An
//! `rft` run carries the rollout accuracy, the latest eval `mean@N` and the two
//! longest `time/` operations instead, and a run without a schema its step and most recently
//! updated tags. See `docs/contract/panel.md` ("Plain output", "The generic dashboard").

use crate::format;
use crate::generic::{GenericModel, TagRow};
use crate::rft::{Column, RftModel};
use crate::state::{wall_label, Model};
use crate::text::{ascii, strip_markup};

/// How many learner phases the summary names (largest share first).
pub const TOP_PHASES: usize = 3;
/// How many `time/` operations an rft summary names (longest first).
pub const TOP_TIMES: usize = 2;
/// How many tags the summary of a run without a schema names (the most recently updated).
pub const PLAIN_TAGS: usize = 6;

/// The one-line summary of `model`: `iter 120/2000 | Steps/s 12,345 | Reward 12.345 | ...`.
///
/// Only printable ASCII (non-ASCII characters of a task name or status become `?`).
pub fn summary_line(model: &Model) -> String {
    if let Some(g) = &model.generic {
        return generic_line(model, g);
    }
    let t = &model.title;
    let mut parts = vec![t.progress()];
    if let Some(e) = model.elapsed {
        parts.push(format!("time {}", format::time(e)));
    }
    if let Some(eta) = model.eta {
        parts.push(format!("ETA {}", format::time(eta)));
    }
    if let Some(s) = model.steps_per_sec {
        parts.push(format!("Steps/s {}", format::grouped(s)));
    }
    if let Some(r) = model.rows_per_sec {
        parts.push(format!("Rows/s {}", format::grouped(r)));
    }
    if let Some(r) = model.reward {
        parts.push(format!("Reward {}", format::reward(r.mean, 3)));
    }
    if let Some(rft) = &model.rft {
        parts.extend(rft_parts(rft));
    }
    if model.has_learner {
        let wall = wall_label(model.profile);
        parts.push(format!("{wall} {:.1}ms", model.learner.iter_wall_ms));
        let mut phases = model.iteration_shares();
        phases.sort_by(|a, b| b.1.total_cmp(&a.1));
        let top: Vec<String> = phases
            .iter()
            .take(TOP_PHASES)
            .map(|(label, pct)| format!("{label} {pct:.0}%"))
            .collect();
        parts.push(top.join(", "));
    }
    if let Some(n) = model.window_n {
        parts.push(format!("Avg 2s (n={n})"));
    }
    if let Some(s) = &model.status {
        parts.push(strip_markup(s));
    }
    ascii(&parts.join(" | "))
}

/// The rft fields: `rollout/accuracy/mean` (else the first rollout mean), the `mean@N` of
/// the first eval taskset (accuracy, else its first metric; the largest N), and the
/// longest `time/` operations (in seconds, `docs/contract/rft.md`).
fn rft_parts(rft: &RftModel) -> Vec<String> {
    let mut parts = Vec::new();
    let mean = Column::Plain(0);
    if let Some(r) = rft.group("rollout", None) {
        let acc = r.get("accuracy", mean).map(|v| ("accuracy", v));
        let first = || {
            r.rows
                .iter()
                .find_map(|row| r.get(&row.label, mean).map(|v| (row.label.as_str(), v)))
        };
        if let Some((label, v)) = acc.or_else(first) {
            parts.push(format!("rollout/{label}/mean {}", format::number(v)));
        }
    }
    if let Some(e) = rft.groups.iter().find(|g| g.is_eval()) {
        let n = e.columns.iter().rev().find_map(|c| match c {
            Column::MeanAt(n) => Some(*n),
            _ => None,
        });
        if let Some(n) = n {
            let at = Column::MeanAt(n);
            let row = e
                .rows
                .iter()
                .find(|r| r.label == "accuracy" && e.get(&r.label, at).is_some())
                .or_else(|| e.rows.iter().find(|r| e.get(&r.label, at).is_some()));
            if let Some(v) = row.and_then(|r| e.get(&r.label, at).map(|v| (r, v))) {
                parts.push(format!(
                    "{}/{}/mean@{n} {}",
                    e.title(),
                    v.0.label,
                    format::number(v.1)
                ));
            }
        }
    }
    if let Some(t) = rft.group("time", None) {
        let mut times: Vec<(&str, f64)> = t
            .rows
            .iter()
            .filter_map(|r| {
                r.cells
                    .iter()
                    .flatten()
                    .next()
                    .map(|v| (r.label.as_str(), *v))
            })
            .collect();
        times.sort_by(|a, b| b.1.total_cmp(&a.1));
        let top: Vec<String> = times
            .iter()
            .take(TOP_TIMES)
            .map(|(l, v)| format!("time/{l} {}s", format::number(*v)))
            .collect();
        if !top.is_empty() {
            parts.push(top.join(", "));
        }
    }
    parts
}

/// The plain summary line of a generic run: `step 12,288 | time 1m02s | Steps/s 2,048 |
/// charts/episodic_return 12.345 | ... | +N more | Avg 2s (n=4) | status` (ASCII only).
fn generic_line(model: &Model, g: &GenericModel) -> String {
    let mut parts = Vec::new();
    if let Some(s) = g.step {
        parts.push(format!("step {}", format::grouped(s as f64)));
    }
    if let Some(e) = model.elapsed {
        parts.push(format!("time {}", format::time(e)));
    }
    if let Some(s) = g.steps_per_sec {
        parts.push(format!("Steps/s {}", format::grouped(s)));
    }
    let keep = g.recent(PLAIN_TAGS);
    let mut shown: Vec<&TagRow> = g
        .rows
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(r, _)| r)
        .collect();
    shown.sort_by(|a, b| {
        b.updated
            .total_cmp(&a.updated)
            .then_with(|| a.tag.cmp(&b.tag))
    });
    for r in shown {
        parts.push(format!(
            "{} {}",
            r.tag,
            format::number(r.mean.unwrap_or(r.last))
        ));
    }
    if g.rows.len() > PLAIN_TAGS {
        parts.push(format!("+{} more", g.rows.len() - PLAIN_TAGS));
    }
    if let Some(n) = model.window_n {
        parts.push(format!("Avg 2s (n={n})"));
    }
    if let Some(s) = &model.status {
        parts.push(strip_markup(s));
    }
    ascii(&parts.join(" | "))
}
