//! The generic dashboard of a run without a schema (`docs/contract/panel.md` "The generic
//! dashboard"): tag groups by prefix with each tag's newest value and 2 s mean, progress from
//! the step axis, groups flowing into the tier's columns, the most recently updated tags kept
//! when the panel is short, and the plain line.

use std::sync::Arc;
use tally::board::TagBoard;
use tally::terminal::{RunFacts, TerminalState};
use tally::window::Sample;
use tally::{Profile, SystemInfo, Tag};
use tally_tui::state::Model;
use tally_tui::{buffer_text, render_to_buffer, summary_line, Glyphs, PanelState};

fn state() -> TerminalState {
    let mut s = TerminalState::new(RunFacts {
        algo: String::new(),
        task: "PPO_1".into(),
        sim: String::new(),
        name: None,
        num_gpus: 1,
        num_envs: None,
        max_iterations: None,
        profile: Profile::SacFamily,
    });
    s.board = Some(TagBoard::default());
    s
}

/// What `tally watch` does with one step of another tool's run.
fn log(s: &mut TerminalState, t: f64, step: i64, values: &[(&str, f64)]) {
    let board = s.board.as_mut().unwrap();
    for (tag, v) in values {
        board.record(tag, *v, step, t);
    }
    let values = values
        .iter()
        .map(|(tag, v)| (Tag::User(Arc::from(*tag)), *v))
        .collect();
    s.push(
        Sample {
            t,
            iteration: step as u64,
            values,
        },
        None,
        SystemInfo::default(),
        0,
    );
}

/// Four tags in three groups; at t = 10 the window (t ≥ 8) holds the steps at 9 and 10.
fn cleanrl_like() -> TerminalState {
    let mut s = state();
    log(
        &mut s,
        0.0,
        0,
        &[
            ("charts/episodic_return", 1.0),
            ("losses/policy_loss", -0.01),
            ("loss", 2.0),
        ],
    );
    log(&mut s, 1.0, 100, &[("losses/value_loss", 0.9)]);
    log(
        &mut s,
        9.0,
        900,
        &[("charts/episodic_return", 3.0), ("losses/value_loss", 0.7)],
    );
    log(
        &mut s,
        10.0,
        1000,
        &[("charts/episodic_return", 5.0), ("losses/value_loss", 0.5)],
    );
    s
}

fn text(s: &TerminalState, width: u16, height: Option<u16>) -> String {
    let p = PanelState::new(s.snapshot(), 10.0, Glyphs::ASCII, false);
    buffer_text(&render_to_buffer(&p, width, height))
}

fn line_with<'a>(screen: &'a str, what: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("{what} not on\n{screen}"))
}

#[test]
fn tags_are_grouped_by_prefix_with_newest_value_and_window_mean() {
    let s = cleanrl_like();
    for width in [80, 100, 140] {
        let screen = text(&s, width, None);
        let title = screen.lines().next().unwrap();
        assert!(
            title.contains("PPO_1") && title.contains("step 1,000") && title.contains("4 tags"),
            "{screen}"
        );
        // Progress from the step axis: 100 steps in the 1 s between the window's two points.
        assert!(
            line_with(&screen, "Steps/s").contains("Steps/s 100"),
            "{screen}"
        );
        assert!(screen.contains("Avg 2s (n=2)"), "{screen}");
        assert!(!screen.contains("ETA"), "no limit, no ETA:\n{screen}");
        assert!(
            !screen.contains("UNKNOWN") && !screen.contains("Waiting"),
            "{screen}"
        );
        // Newest 5, window mean of 3 and 5; a tag outside the window shows its newest only.
        let ret = line_with(&screen, "episodic_return");
        assert!(ret.contains("5.000") && ret.contains("4.000"), "{ret}");
        let value = line_with(&screen, "value_loss");
        assert!(
            value.contains("0.5000") && value.contains("0.6000"),
            "{value}"
        );
        let policy = line_with(&screen, "policy_loss");
        let policy = policy.trim_end().trim_end_matches('|').trim_end();
        assert!(
            policy.contains("-0.0100") && policy.ends_with(" -"),
            "{policy}"
        );
        assert!(
            !screen.contains("losses/"),
            "labels lose their group's prefix:\n{screen}"
        );
    }
    // One column below 96, two from 96, three from 120.
    let heading = |w| line_with(&text(&s, w, None), "charts").to_owned();
    let (h80, h100, h140) = (heading(80), heading(100), heading(140));
    assert!(
        !h80.contains("(no prefix)") && !h80.contains("losses"),
        "{h80}"
    );
    assert!(
        h100.contains("(no prefix)") && !h100.contains("losses"),
        "{h100}"
    );
    assert!(
        h140.contains("(no prefix)") && h140.contains("losses"),
        "{h140}"
    );
}

#[test]
fn a_short_panel_keeps_the_most_recently_updated_tags_and_counts_the_others() {
    let mut s = state();
    for i in 0..20 {
        let tag = format!("g/t{i:02}");
        log(&mut s, f64::from(i), i64::from(i), &[(tag.as_str(), 1.0)]);
    }
    let full = text(&s, 80, None);
    assert!(
        (0..20).all(|i| full.contains(&format!("t{i:02}"))),
        "{full}"
    );
    assert!(!full.contains("more"), "{full}");
    let short = text(&s, 80, Some(12));
    assert_eq!(short.lines().count(), 12, "{short}");
    let shown: Vec<i32> = (0..20)
        .filter(|i| short.contains(&format!("t{i:02} ")))
        .collect();
    let hidden = 20 - shown.len();
    assert!(hidden > 0 && !shown.is_empty(), "{short}");
    // The newest ones, contiguous up to the last.
    assert_eq!(
        shown,
        ((20 - shown.len() as i32)..20).collect::<Vec<_>>(),
        "{short}"
    );
    assert!(short.contains(&format!("+{hidden} more")), "{short}");
}

#[test]
fn the_plain_line_names_the_most_recently_updated_tags_with_their_means() {
    let s = cleanrl_like();
    let line = summary_line(&Model::build(&s.snapshot(), 10.0));
    assert_eq!(
        line,
        "step 1,000 | time 10s | Steps/s 100 | charts/episodic_return 4.000 | \
         losses/value_loss 0.6000 | loss 2.000 | losses/policy_loss -0.0100 | Avg 2s (n=2)"
    );
}

#[test]
fn a_board_without_tags_waits_for_data() {
    let s = state();
    let screen = text(&s, 100, None);
    assert!(screen.contains("Waiting for data..."), "{screen}");
    assert!(
        screen.contains("PPO_1") && !screen.contains("UNKNOWN"),
        "{screen}"
    );
}

#[test]
fn fewer_groups_than_columns_share_the_width_so_long_tags_are_not_cut() {
    // CleanRL-like: two groups at 140 columns (three-column tier). Two columns of the width,
    // not three with one empty, so the long tag shows whole.
    let mut s = state();
    log(
        &mut s,
        0.0,
        0,
        &[
            ("charts/episodic_return_of_the_evaluation_env", 1.0),
            ("losses/approximate_kl_divergence", 0.01),
        ],
    );
    let screen = text(&s, 140, None);
    assert!(
        screen.contains("episodic_return_of_the_evaluation_env"),
        "{screen}"
    );
    assert!(screen.contains("approximate_kl_divergence"), "{screen}");
}
