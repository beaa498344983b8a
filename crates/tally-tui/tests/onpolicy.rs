//! The on-policy (PPO) panel against `docs/contract/panel.md` "On-policy runs" and
//! `docs/contract/timelines.md` "On-policy: collect, then train": an iteration is Collect then
//! Train, Iter Time is their sum, and the off-policy rows (Rows/s, Buffer, Batch/Rank, Other,
//! a measured Iter Wall) do not show.

#[allow(dead_code)]
#[path = "support/fixtures.rs"]
mod fixtures;

use fixtures::{onpolicy_state, snapshot_at_end};
use tally::terminal::TerminalState;
use tally_tui::{buffer_text, render_to_buffer, summary_line, Glyphs, PanelState};

const WIDTHS: [u16; 3] = [80, 100, 140];

/// The rows of the on-policy timing tables and the system facts that mean something there.
const ONPOLICY_ROWS: [&str; 6] = [
    "Train",
    "Iter Time",
    "Collect",
    "Timeout Rate",
    "Envs",
    "CUDA MPS",
];

/// Off-policy rows and labels that mean nothing on-policy.
const OFF_POLICY_ONLY: [&str; 6] = [
    "Rows/s",
    "Buffer",
    "Batch/Rank",
    "Other",
    "Iter Wall",
    "Rollout Wall",
];

fn view(state: &TerminalState) -> PanelState {
    let (snap, now) = snapshot_at_end(state);
    PanelState::new(snap, now, Glyphs::UNICODE, false)
}

fn text(state: &TerminalState, width: u16) -> String {
    buffer_text(&render_to_buffer(&view(state), width, None))
}

fn has_label(text: &str, label: &str) -> bool {
    // A whole label: not followed by another letter ("Train" is not "Training").
    text.match_indices(label).any(|(i, _)| {
        let next = text[i + label.len()..].chars().next();
        next.is_none_or(|c| !c.is_alphanumeric())
    })
}

/// The share a timing row shows: the column whose text starts with `label`, its last `N%`.
fn share(t: &str, label: &str) -> f64 {
    let cell = t
        .lines()
        .flat_map(|l| l.split('│'))
        .find(|c| c.trim_start().starts_with(&format!("{label}  ")))
        .unwrap_or_else(|| panic!("no {label} row:\n{t}"));
    let last = cell.trim_end().rsplit(' ').next().unwrap();
    last.strip_suffix('%')
        .unwrap_or_else(|| panic!("{label} shows no share: {cell:?}\n{t}"))
        .parse()
        .unwrap()
}

#[test]
fn onpolicy_panel_snapshots_at_80_100_and_140_columns() {
    let s = onpolicy_state();
    for w in WIDTHS {
        insta::assert_snapshot!(format!("onpolicy_{w}"), text(&s, w));
    }
}

#[test]
fn an_iteration_is_collect_then_train_and_no_off_policy_row_shows() {
    let s = onpolicy_state();
    for w in WIDTHS {
        let t = text(&s, w);
        for l in ONPOLICY_ROWS {
            assert!(has_label(&t, l), "{l} missing at {w}:\n{t}");
        }
        for l in OFF_POLICY_ONLY {
            assert!(!has_label(&t, l), "{l} shown at {w}:\n{t}");
        }
    }
}

#[test]
fn collect_and_train_share_iter_time_and_sum_to_100() {
    // Collect 72 ms and Train 24 ms (window means: × 1.0011) of an iteration of 96.1 ms: 75 %
    // and 25 %, whatever
    // wall the runner measured around them (3.2 s here, never persisted for on-policy runs).
    let s = onpolicy_state();
    for w in WIDTHS {
        let t = text(&s, w);
        let (collect, train) = (share(&t, "Collect"), share(&t, "Train"));
        assert_eq!((collect, train), (75.0, 25.0), "at {w}:\n{t}");
        assert_eq!(share(&t, "Iter Time"), 100.0, "at {w}:\n{t}");
        let iter = t
            .lines()
            .flat_map(|l| l.split('│'))
            .find(|c| c.trim_start().starts_with("Iter Time  "))
            .unwrap();
        assert!(iter.contains(" 96.1ms "), "{iter:?}");
    }
}

#[test]
fn the_header_shows_steps_per_second_and_no_rows_per_second() {
    let t = text(&onpolicy_state(), 140);
    let header = t.lines().nth(1).unwrap();
    assert!(header.contains("Steps/s 1,025,"), "{header}");
    assert!(!t.contains("Rows/s"), "{t}");
}

#[test]
fn the_full_tier_titles_name_the_shared_denominator() {
    // Collect and Train are shares of one Iter Time, so both columns say so.
    let t = text(&onpolicy_state(), 140);
    assert!(t.contains("Learner (Iter Time)"), "{t}");
    assert!(t.contains("Collector (Iter Time)"), "{t}");
    assert!(!t.contains("own clock"), "{t}");
}

#[test]
fn the_plain_line_names_iter_time_collect_and_train() {
    let line = summary_line(&view(&onpolicy_state()).model);
    for part in [
        "iter 4030/5000",
        "Steps/s 1,025,",
        "Iter Time 96.1ms",
        "Collect 75%, Train 25%",
    ] {
        assert!(line.contains(part), "{part:?} not in {line}");
    }
    for absent in ["Rows/s", "Other", "Iter Wall", "Learning"] {
        assert!(!line.contains(absent), "{absent:?} in {line}");
    }
}
