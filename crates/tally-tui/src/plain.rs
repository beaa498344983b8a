//! The plain-text view: one compact ASCII line per summary, for log files, CI and `--panel off`.
//!
//! Issue 4: off a terminal there are no escape codes at all; a one-line summary every N
//! seconds carries the iteration, Steps/s, the mean reward and the top learner phases.

use crate::format;
use crate::state::Model;
use crate::view::strip_markup;

/// How many learner phases the summary names (largest share first).
pub const TOP_PHASES: usize = 3;

/// The one-line summary of `model`: `iter 120/2000 | Steps/s 12,345 | Reward 12.345 | ...`.
///
/// Only printable ASCII (non-ASCII characters of a task name or status become `?`).
pub fn summary_line(model: &Model) -> String {
    let t = &model.title;
    let mut parts = vec![format!("iter {}/{}", t.iteration, t.max_iterations)];
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
        parts.push(format!("Reward {:.3}", r.mean));
    }
    let l = &model.learner;
    if model.has_learner {
        parts.push(format!("Iter Wall {:.1}ms", l.iter_wall_ms));
        let mut phases: Vec<(&str, f64)> = l.rows.iter().map(|r| (r.spec.label, r.pct)).collect();
        phases.push(("Other", l.other_pct));
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

/// Replace anything that is not printable ASCII (an ESC byte above all) by `?`.
pub fn ascii(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == ' ' || c.is_ascii_graphic() {
                c
            } else {
                '?'
            }
        })
        .collect()
}
