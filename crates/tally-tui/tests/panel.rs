//! The panel's rendering against `docs/contract/panel.md` and `docs/contract/timelines.md`:
//! snapshots of the full panel at 80, 100 and 140 columns, every timeline label where the
//! profile has it, tiers, the 1 % rule, percentages, trimming, and the plain fallback; and
//! the `rft` profile's category groups (`docs/contract/panel.md` "The RFT panel",
//! `docs/contract/rft.md`).

#[path = "support/fixtures.rs"]
mod fixtures;

use fixtures::{
    appo_state, appo_values, onpolicy_state, rft_eval_values, rft_sample, rft_state, rft_values,
    sac_state, sac_values, sample, snapshot_at_end,
};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tally::terminal::{Level, RunFacts, TerminalState};
use tally::{Profile, SystemClock};
use tally_tui::{
    buffer_text, render_to_buffer, Glyphs, Mode, Panel, PanelOptions, PanelState, Tier,
};

const WIDTHS: [u16; 3] = [80, 100, 140];

/// Learner labels of the learner timeline table, per profile (`docs/contract/timelines.md`).
const SAC_LEARNER: [&str; 8] = [
    "Collector Wait",
    "Inference",
    "Collector Release",
    "Replay Batch Wait",
    "Replay Sample",
    "Learning",
    "Other",
    "Iter Wall",
];
const APPO_LEARNER: [&str; 7] = [
    "Collector Wait",
    "Replay Stage",
    "Replay Sample",
    "Learning",
    "Weight Publish",
    "Other",
    "Iter Wall",
];
/// Collector labels of the collector's own-clock timeline (SAC cycle, its quiet and nested
/// diagnostics, and APPO's three rows; `docs/contract/timelines.md`).
const SAC_COLLECTOR: [&str; 13] = [
    "Inference Request",
    "Learner Action Wait",
    "Env Step",
    "Replay Write",
    "Transition Extract",
    "Metrics Publish",
    "Action Validate",
    "Apply Action",
    "Action+Backend",
    "Backend Step",
    "Update State",
    "Reset Done",
    "Env Step",
];
const APPO_COLLECTOR: [&str; 3] = ["MLP Infer", "Env Step", "Rollout Wall"];
/// System column labels: buffer, timeout rate, envs, batch per rank, CUDA MPS
/// (`docs/contract/panel.md`).
const SYSTEM: [&str; 5] = ["Buffer", "Timeout Rate", "Envs", "Batch/Rank", "CUDA MPS"];
/// Labels only APPO has: Replay Stage and Weight Publish appear only in APPO
/// (`docs/contract/timelines.md`).
const APPO_ONLY: [&str; 4] = [
    "Replay Stage",
    "Weight Publish",
    "MLP Infer",
    "Rollout Wall",
];
/// Labels only the SAC family has.
const SAC_ONLY: [&str; 5] = [
    "Collector Release",
    "Replay Batch Wait",
    "Learner Action Wait",
    "Inference Request",
    "Backend Step",
];

fn view(state: &TerminalState, glyphs: Glyphs) -> PanelState {
    let (snap, now) = snapshot_at_end(state);
    PanelState::new(snap, now, glyphs, false)
}

fn text(state: &TerminalState, width: u16) -> String {
    buffer_text(&render_to_buffer(
        &view(state, Glyphs::UNICODE),
        width,
        None,
    ))
}

fn text_in(state: &TerminalState, width: u16, height: u16) -> String {
    buffer_text(&render_to_buffer(
        &view(state, Glyphs::UNICODE),
        width,
        Some(height),
    ))
}

fn has_label(text: &str, label: &str) -> bool {
    // A whole label: not followed by another letter (so "Env Step" is not "Env Steps").
    text.match_indices(label).any(|(i, _)| {
        let next = text[i + label.len()..].chars().next();
        next.is_none_or(|c| !c.is_alphanumeric())
    })
}

// ---- snapshots ------------------------------------------------------------------------------

#[test]
fn sac_panel_snapshots_at_80_100_and_140_columns() {
    // The panel has explicit width tiers: < 96, 96–119, ≥ 120 columns
    // (docs/contract/panel.md, "Width tiers").
    let s = sac_state();
    for w in WIDTHS {
        insta::assert_snapshot!(format!("sac_{w}"), text(&s, w));
    }
}

#[test]
fn appo_panel_snapshots_at_80_100_and_140_columns() {
    let s = appo_state();
    for w in WIDTHS {
        insta::assert_snapshot!(format!("appo_{w}"), text(&s, w));
    }
}

// ---- labels ---------------------------------------------------------------------------------

#[test]
fn every_timeline_label_of_the_profile_shows_at_80_100_and_140_columns() {
    // The learner, collector and System tables; no core label is cut
    // (docs/contract/panel.md, docs/contract/timelines.md).
    let cases: [(TerminalState, Vec<&str>); 2] = [
        (
            sac_state(),
            [&SAC_LEARNER[..], &SAC_COLLECTOR[..], &SYSTEM[..]].concat(),
        ),
        (
            appo_state(),
            [&APPO_LEARNER[..], &APPO_COLLECTOR[..], &SYSTEM[..]].concat(),
        ),
    ];
    for (state, labels) in &cases {
        for w in WIDTHS {
            let t = text(state, w);
            for l in labels {
                assert!(has_label(&t, l), "{l:?} missing at {w} columns:\n{t}");
            }
        }
    }
}

#[test]
fn appo_rows_never_show_in_sac_and_sac_rows_never_in_appo() {
    // An algorithm's own phases never take a row in another algorithm's table; Replay Stage
    // and Weight Publish appear only in APPO (docs/contract/timelines.md).
    for w in WIDTHS {
        let sac = text(&sac_state(), w);
        for l in APPO_ONLY {
            assert!(!has_label(&sac, l), "{l} in SAC at {w}:\n{sac}");
        }
        let appo = text(&appo_state(), w);
        for l in SAC_ONLY {
            assert!(!has_label(&appo, l), "{l} in APPO at {w}:\n{appo}");
        }
    }
}

#[test]
fn nested_learner_diagnostics_are_not_rows() {
    // Inference H2D/Forward/D2H and Replay H2D Submit are nested diagnostics, recorded only in
    // TensorBoard / W&B, not extra Iter Wall slices (docs/contract/timelines.md).
    for w in WIDTHS {
        let t = text(&sac_state(), w);
        for l in [
            "Inference H2D",
            "Inference Forward",
            "Inference D2H",
            "Replay H2D Submit",
        ] {
            assert!(!t.contains(l), "{l} at {w}");
        }
    }
}

#[test]
fn no_core_label_is_cut_at_any_width_from_60_columns() {
    // No core label is ever cut at any width ≥ 60 columns (docs/contract/panel.md).
    let core: Vec<&str> = [&SAC_LEARNER[..], &SYSTEM[..]]
        .concat()
        .into_iter()
        .chain([
            "Learner Action Wait",
            "Env Step",
            "Replay Write",
            "Reward",
            "Actor Loss",
        ])
        .chain([
            "Ingress Backpressure",
            "Ingress Depth",
            "GPUs 2",
            "iter 4030/5000",
        ])
        .collect();
    let s = sac_state();
    for w in 60..=160 {
        let t = text(&s, w);
        for l in &core {
            assert!(
                has_label(&t, l),
                "{l:?} cut or missing at {w} columns:\n{t}"
            );
        }
    }
    let appo = appo_state();
    for w in 60..=160 {
        let t = text(&appo, w);
        for l in APPO_LEARNER.iter().chain(&APPO_COLLECTOR) {
            assert!(
                has_label(&t, l),
                "{l:?} cut or missing at {w} columns:\n{t}"
            );
        }
    }
    // On-policy: Train and Iter Time, Collect (docs/contract/panel.md "On-policy runs").
    let ppo = onpolicy_state();
    for w in 60..=160 {
        let t = text(&ppo, w);
        for l in ["Train", "Iter Time", "Collect", "Timeout Rate", "Envs"] {
            assert!(
                has_label(&t, l),
                "{l:?} cut or missing at {w} columns:\n{t}"
            );
        }
    }
}

#[test]
fn title_names_the_run_gpus_and_iteration() {
    // The title names the run, not a lab: " 🚀 SAC · go2_joystick_flat · mujoco | GPUs 2 |
    // iter 4030/5000 " (docs/contract/panel.md "Title and header").
    let t = text(&sac_state(), 140);
    let first = t.lines().next().unwrap();
    assert!(
        first.contains(" 🚀 SAC · go2_joystick_flat · mujoco | GPUs 2 | iter 4030/5000 "),
        "{first}"
    );
    assert!(!t.contains("UniLab"), "{t}");
    // Narrower: the run's name is shortened with an ellipsis; GPUs and iteration stay.
    let first = text(&sac_state(), 50).lines().next().unwrap().to_owned();
    assert!(first.contains(" SAC · go2"), "{first}");
    // ASCII terminals get an ASCII separator.
    let ascii = buffer_text(&render_to_buffer(
        &view(&sac_state(), Glyphs::ASCII),
        140,
        None,
    ));
    assert!(
        ascii.contains(" SAC - go2_joystick_flat - mujoco | GPUs 2 | iter 4030/5000 "),
        "{ascii}"
    );
    assert!(first.contains("… | GPUs 2 | iter 4030/5000 "), "{first}");
}

#[test]
fn a_named_run_without_max_iterations_shows_its_name_and_the_count_alone() {
    let mut s = sac_state();
    s.facts.name = Some("ablation-7".into());
    s.facts.max_iterations = None;
    let t = text(&s, 140);
    let first = t.lines().next().unwrap();
    assert!(
        first.contains(" 🚀 ablation-7 | GPUs 2 | iter 4030 "),
        "{first}"
    );
    assert!(!first.contains("SAC"), "{first}");
    // No last iteration: no ETA to count down to.
    assert!(!t.contains("ETA"), "{t}");
    assert!(text(&sac_state(), 140).contains("ETA"));
    // The plain line counts iterations alone.
    let (snap, now) = snapshot_at_end(&s);
    let line = tally_tui::summary_line(&PanelState::new(snap, now, Glyphs::ASCII, false).model);
    assert!(line.starts_with("iter 4030 |"), "{line}");
    assert!(!line.contains("ETA"), "{line}");
}

#[test]
fn header_shows_throughput_episode_length_and_window_count() {
    // Steps/s and Rows/s are whole-job totals; Avg 2s (n=...) counts the window
    // (docs/contract/panel.md, "The 2-second window").
    let (snap, now) = snapshot_at_end(&sac_state());
    let n = snap.window.n;
    let fps = snap.window.get("Perf/total_fps").unwrap();
    let t = text(&sac_state(), 140);
    assert!(t.contains(&format!("Avg 2s (n={n})")), "{t}");
    assert!(
        t.contains(&format!("Steps/s {}", tally_tui::format::grouped(fps))),
        "{t}"
    );
    assert!(t.contains("Rows/s ") && t.contains("Ep Len "), "{t}");
    let _ = now;
}

#[test]
fn elapsed_excludes_warm_up_and_eta_follows_the_iteration_rate() {
    // Warm-up is excluded from elapsed time and ETA (docs/contract/panel.md).
    let mut s = TerminalState::new(RunFacts {
        algo: "sac".into(),
        task: "t".into(),
        sim: String::new(),
        name: None,
        num_gpus: 1,
        num_envs: Some(1),
        max_iterations: Some(4),
        profile: Profile::SacFamily,
    });
    s.message(100.0, Level::Info, "Warming up...".into());
    s.push(
        sample(130.0, 1, &[("Loss/critic", 1.0)]),
        None,
        Default::default(),
        0,
    );
    s.push(
        sample(132.0, 2, &[("Loss/critic", 1.0)]),
        None,
        Default::default(),
        0,
    );
    let v = PanelState::new(s.snapshot(), 132.0, Glyphs::ASCII, false);
    let t = buffer_text(&render_to_buffer(&v, 100, None));
    assert!(t.contains("time 2s | ETA 2s"), "{t}");
}

#[test]
fn ingress_gauges_are_labelled_as_ingress_and_follow_the_losses() {
    // Replay-ingress gauges show as "Ingress Backpressure", "Ingress Depth" and so on, never
    // in the loss group (docs/contract/panel.md).
    let t = text(&sac_state(), 140);
    let line_of = |l: &str| t.lines().position(|x| x.contains(l)).unwrap();
    let last_loss = [
        "Actor Loss",
        "Critic Loss",
        "Temperature Loss",
        "Entropy",
        "Temperature",
    ]
    .iter()
    .map(|l| line_of(l))
    .max()
    .unwrap();
    for l in [
        "Ingress Backpressure",
        "Ingress Depth",
        "Ingress Occupancy",
        "Ingress High Water",
        "Ingress Dropped",
    ] {
        assert!(line_of(l) > last_loss, "{l} inside the loss group:\n{t}");
    }
    // Training diagnostics are indented.
    assert!(t.contains("│   Critic Grad Norm"), "{t}");
}

#[test]
fn env_step_details_are_indented_with_connectors_and_the_last_closes() {
    // Env Step detail rows are indented ("  Backend Step") with ─┤, the last with ─┘
    // (docs/contract/timelines.md).
    let t = text(&sac_state(), 140);
    let details: Vec<&str> = t
        .lines()
        .filter(|l| {
            [
                "  Action Validate",
                "  Apply Action",
                "  Action+Backend",
                "  Backend Step",
                "  Update State",
                "  Reset Done",
            ]
            .iter()
            .any(|d| l.contains(d))
        })
        .collect();
    assert_eq!(details.len(), 6, "{t}");
    for d in &details[..5] {
        assert!(d.contains("%─┤"), "{d}");
    }
    assert!(details[5].contains("%─┘"), "{}", details[5]);
    let ascii = buffer_text(&render_to_buffer(
        &view(&sac_state(), Glyphs::ASCII),
        140,
        None,
    ));
    assert!(ascii.contains("%-'"), "{ascii}");
}

// ---- timing ---------------------------------------------------------------------------------

/// The learner percentages of a rendered panel (rows from Collector Wait through Other).
fn learner_percentages(t: &str, labels: &[&str]) -> Vec<f64> {
    labels
        .iter()
        .filter(|l| **l != "Iter Wall")
        .map(|l| {
            let line = t
                .lines()
                .find(|x| {
                    let first = x.split('│').nth(1).unwrap_or("");
                    first.trim_start().starts_with(&format!("{l}  "))
                })
                .unwrap_or_else(|| panic!("{l} missing:\n{t}"));
            let seg = line.split('│').nth(1).unwrap();
            let pct = seg.trim_end().trim_end_matches('%');
            pct.rsplit(' ').next().unwrap().parse::<f64>().unwrap()
        })
        .collect()
}

#[test]
fn learner_percentages_sum_to_100_within_rounding() {
    // The learner rows normally add up to Iter Wall, so the row percentages sum to about
    // 100 % (per-row rounding may be slightly off; docs/contract/timelines.md).
    for (state, labels) in [
        (sac_state(), &SAC_LEARNER[..]),
        (appo_state(), &APPO_LEARNER[..]),
    ] {
        for w in WIDTHS {
            let t = text(&state, w);
            let p = learner_percentages(&t, labels);
            let sum: f64 = p.iter().sum();
            let tolerance = 0.5 * p.len() as f64;
            assert!(
                (sum - 100.0).abs() <= tolerance,
                "sum {sum} of {p:?} at {w}:\n{t}"
            );
        }
    }
}

fn sac_with(overrides: &[(&'static str, f64)]) -> TerminalState {
    let mut values = sac_values(1.0);
    for (k, v) in overrides {
        values.retain(|(t, _)| t != k);
        values.push((k, *v));
    }
    let mut s = TerminalState::new(sac_state().facts);
    s.push(sample(10.0, 1, &values), Some(1.0), Default::default(), 0);
    s
}

#[test]
fn quiet_collector_rows_show_only_at_one_percent_of_the_cycle() {
    // Inference Request, Transition Extract, Metrics Publish and the nested details show in
    // the panel only at 1 % of the collector cycle or more (docs/contract/timelines.md).
    // Cycle without Inference Request: 5.0 + 1.9 + 0.1 + 0.35 + 0.09 = 7.44 ms.
    let quiet = sac_with(&[("Perf/collector_inference_request_ms", 0.03)]); // 0.4 %
    let shown = sac_with(&[("Perf/collector_inference_request_ms", 0.2)]); // 2.6 %
    for w in WIDTHS {
        assert!(!has_label(&text(&quiet, w), "Inference Request"), "{w}");
        assert!(has_label(&text(&shown, w), "Inference Request"), "{w}");
    }
    let detail_quiet = sac_with(&[("Perf/collector_env_step_reset_done_ms", 0.01)]);
    assert!(!has_label(&text(&detail_quiet, 140), "Reset Done"));
}

#[test]
fn core_collector_rows_show_even_below_one_percent() {
    // The panel always keeps the core cycle rows (docs/contract/timelines.md).
    let s = sac_with(&[("Perf/collector_replay_write_ms", 0.001)]);
    for w in WIDTHS {
        assert!(has_label(&text(&s, w), "Replay Write"), "{w}");
    }
}

/// The collector cycle's six phases (docs/contract/timelines.md "Collector timeline
/// (sac_family)").
const CYCLE_PHASES: [&str; 6] = [
    "Perf/collector_inference_request_ms",
    "Perf/collector_learner_action_wait_ms",
    "Perf/collector_env_step_ms",
    "Perf/collector_transition_extract_ms",
    "Perf/collector_replay_write_ms",
    "Perf/collector_metrics_publish_ms",
];

/// The value column of the row labelled `label` in the collector table, if it shows.
fn collector_value(t: &str, label: &str) -> Option<String> {
    t.lines().find_map(|line| {
        let col = line
            .split(['│', '║'])
            .find(|c| c.trim_start().starts_with(&format!("{label}  ")))?;
        Some(col.trim_start()[label.len()..].trim().to_owned())
    })
}

#[test]
fn the_collector_cycle_total_shows_as_the_collector_s_100_percent_row() {
    // The cycle is the sum of its phases, the denominator of every collector share, and a
    // terminal-derived field the panel shows, as Iter Wall is the learner's
    // (docs/contract/timelines.md, docs/contract/panel.md "Timing tables").
    let phases = [0.2, 6.0, 2.4, 0.3, 0.5, 0.2];
    let values: Vec<(&'static str, f64)> = CYCLE_PHASES.iter().copied().zip(phases).collect();
    let s = sac_with(&values);
    let cycle: f64 = phases.iter().sum();
    for w in WIDTHS {
        let t = text(&s, w);
        assert_eq!(
            collector_value(&t, "Collector Cycle").as_deref(),
            Some(format!("{cycle:.1}ms  100%").as_str()),
            "at {w} columns:\n{t}"
        );
    }
    // All or nothing: a cycle missing a phase is no cycle, and no total is shown.
    let mut values = sac_values(1.0);
    values.retain(|(tag, _)| *tag != "Perf/collector_metrics_publish_ms");
    let mut partial = TerminalState::new(sac_state().facts);
    partial.push(sample(10.0, 1, &values), Some(1.0), Default::default(), 0);
    for w in WIDTHS {
        let t = text(&partial, w);
        assert!(!has_label(&t, "Collector Cycle"), "at {w} columns:\n{t}");
    }
    // APPO has no cycle.
    assert!(!has_label(&text(&appo_state(), 140), "Collector Cycle"));
}

#[test]
fn appo_collector_shows_milliseconds_without_percentages() {
    // APPO's three collector values are not a percentage breakdown of anything, so the
    // panel shows ms only (docs/contract/timelines.md).
    let t = text(&appo_state(), 140);
    for l in APPO_COLLECTOR {
        let line = t.lines().find(|x| x.contains(l)).unwrap();
        let col = line.split('│').find(|c| c.contains(l)).unwrap();
        assert!(col.trim_end().ends_with("ms"), "{col:?}");
    }
}

#[test]
fn the_two_timing_clocks_are_separate_columns_never_summed() {
    // The two timing columns are never added across; from 120 columns timing uses the full
    // three columns (docs/contract/timelines.md, docs/contract/panel.md "Width tiers").
    let t = text(&sac_state(), 140);
    let header = t
        .lines()
        .find(|l| l.contains("Learner (Iter Wall)"))
        .unwrap();
    let a = header.find("Learner (Iter Wall)").unwrap();
    let b = header.find("Collector (own clock)").unwrap();
    let c = header.find("System").unwrap();
    assert!(a < b && b < c, "{header}");
    assert!(
        header[a..b].contains('│') && header[b..c].contains('│'),
        "{header}"
    );
    assert!(!t.contains("Total"), "{t}");
}

// ---- tiers ----------------------------------------------------------------------------------

#[test]
fn width_tiers_switch_at_96_and_120_columns() {
    // Tiers: below 96 columns, 96–119 columns, 120 columns and more
    // (docs/contract/panel.md, "Width tiers").
    assert_eq!(Tier::for_width(60), Tier::Stacked);
    assert_eq!(Tier::for_width(95), Tier::Stacked);
    assert_eq!(Tier::for_width(96), Tier::SideBySide);
    assert_eq!(Tier::for_width(119), Tier::SideBySide);
    assert_eq!(Tier::for_width(120), Tier::Full);
    let s = sac_state();
    let t95 = text(&s, 95);
    assert!(
        t95.contains("Timing") && !t95.contains("Learner (Iter Wall)"),
        "{t95}"
    );
    let t96 = text(&s, 96);
    assert!(
        !t96.contains("Timing") && !t96.contains("Learner (Iter Wall)"),
        "{t96}"
    );
    assert!(
        t96.contains("│ Collector ") && t96.contains("Learner "),
        "{t96}"
    );
    let t119 = text(&s, 119);
    assert!(!t119.contains("Collector (own clock)"), "{t119}");
    let t120 = text(&s, 120);
    assert!(
        t120.contains("Learner (Iter Wall)") && t120.contains("Collector (own clock)"),
        "{t120}"
    );
}

#[test]
fn below_96_columns_everything_stacks_in_one_column() {
    // Below 96 columns metrics, rewards and timing stack vertically and timing is a single
    // Timing column (docs/contract/panel.md, "Width tiers").
    let t = text(&sac_state(), 80);
    let line_of = |l: &str| t.lines().position(|x| x.contains(l)).unwrap();
    assert!(line_of("Metrics") < line_of("Rewards"));
    assert!(line_of("Rewards") < line_of("Timing"));
    assert!(line_of("Timing") < line_of("Learner Action Wait"));
    // One column: no line holds two table titles.
    assert!(t
        .lines()
        .all(|l| !(l.contains("Metrics") && l.contains("Rewards"))));
    assert!(!t.contains('│') || t.lines().all(|l| l.matches('│').count() <= 2));
}

#[test]
fn reward_peak_loses_precision_below_96_columns() {
    // The reward peak loses precision rather than a core label being cut
    // (docs/contract/panel.md, "Width tiers").
    let narrow = text(&sac_state(), 80);
    let wide = text(&sac_state(), 100);
    assert!(
        narrow.contains("/ Peak 25.00\n") || narrow.contains("/ Peak 25.00 "),
        "{narrow}"
    );
    assert!(wide.contains("/ Peak 25.000"), "{wide}");
}

#[test]
fn a_short_terminal_drops_optional_rows_but_keeps_core_rows_and_titles() {
    // No core label is cut; optional rows go first and each title counts them
    // (docs/contract/panel.md).
    let t = text_in(&sac_state(), 80, 40);
    assert_eq!(t.lines().count(), 40);
    for l in [
        "Metrics",
        "Rewards",
        "Timing",
        "Actor Loss",
        "Iter Wall",
        "Learner Action Wait",
        "Replay Write",
    ] {
        assert!(has_label(&t, l), "{l}:\n{t}");
    }
    assert!(t.contains("Metrics (+"), "{t}");
    let wide = text_in(&sac_state(), 140, 30);
    for l in [
        "Learner (Iter Wall)",
        "Collector (own clock)",
        "System",
        "Iter Wall",
        "CUDA MPS",
    ] {
        assert!(has_label(&wide, l), "{l}:\n{wide}");
    }
}

#[test]
fn ascii_fallback_draws_only_ascii() {
    // ASCII fallbacks when the encoding cannot show "⏱ ▲ ▼ ━" (docs/contract/panel.md).
    for w in WIDTHS {
        let t = buffer_text(&render_to_buffer(
            &view(&sac_state(), Glyphs::ASCII),
            w,
            None,
        ));
        assert!(t.is_ascii(), "{t}");
        assert!(t.contains("Reward +") && t.contains("time "), "{t}");
    }
}

// ---- messages -------------------------------------------------------------------------------

#[test]
fn errors_and_status_show_without_waiting_for_a_step() {
    // Errors and status lines show without waiting for the next iteration
    // (docs/contract/panel.md, "Status, warnings and errors").
    let mut s = sac_state();
    let t = s.updated_at.unwrap() + 0.2;
    s.message(
        t,
        Level::Error,
        "[red]ERROR sink tensorboard failed[/]".into(),
    );
    s.message(t, Level::Info, "Checkpoint saved: ckpt_4030.pt".into());
    let v = PanelState::new(s.snapshot(), t + 0.1, Glyphs::UNICODE, false);
    let text = buffer_text(&render_to_buffer(&v, 140, None));
    assert!(
        text.contains("ERROR ERROR sink tensorboard failed"),
        "{text}"
    );
    assert!(text.contains("Checkpoint saved: ckpt_4030.pt"), "{text}");
    assert!(!text.contains("[red]"), "{text}");
}

#[test]
fn warm_up_status_shows_in_the_header_before_the_first_step() {
    let mut s = TerminalState::new(sac_state().facts);
    s.message(1.0, Level::Info, "Buffer fill: 4,096/40,960 (10%)".into());
    let v = PanelState::new(s.snapshot(), 1.5, Glyphs::UNICODE, false);
    let t = buffer_text(&render_to_buffer(&v, 100, None));
    assert!(t.contains("Buffer fill: 4,096/40,960 (10%)"), "{t}");
    assert!(t.contains("Waiting for data..."), "{t}");
}

// ---- the render thread ----------------------------------------------------------------------

/// A writer whose output the test reads, and which can be made to block.
#[derive(Clone, Default)]
struct Capture {
    bytes: Arc<Mutex<Vec<u8>>>,
    gate: Arc<Mutex<()>>,
}

impl Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let _g = self.gate.lock().unwrap();
        self.bytes.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn plain_options(cap: &Capture) -> PanelOptions {
    PanelOptions {
        mode: Mode::Plain,
        refresh: Duration::from_millis(20),
        plain_interval: Duration::from_millis(50),
        plain_writer: Some(Box::new(cap.clone())),
        ..PanelOptions::default()
    }
}

#[test]
fn plain_mode_emits_no_escape_bytes_and_summarises_each_interval() {
    // Not a terminal / --panel off: no escape codes at all; a compact one-line summary
    // (docs/contract/panel.md, "Plain output").
    let state = Arc::new(Mutex::new(TerminalState::new(sac_state().facts)));
    let cap = Capture::default();
    let mut panel = Panel::start(
        state.clone(),
        Arc::new(SystemClock::default()),
        plain_options(&cap),
    );
    assert_eq!(panel.output(), tally_tui::Output::Plain);
    state
        .lock()
        .unwrap()
        .message(0.0, Level::Info, "Warming up...".into());
    for i in 1..=20u64 {
        let t = 1.0 + 0.01 * i as f64;
        state.lock().unwrap().push(
            sample(t, i, &sac_values(1.0)),
            Some(5.0),
            Default::default(),
            0,
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    state.lock().unwrap().message(
        1.5,
        Level::Warning,
        "contract: accounted 104% of Iter Wall".into(),
    );
    panel.log("a log line from the runner");
    panel.stop().unwrap();
    let out = String::from_utf8(cap.bytes.lock().unwrap().clone()).unwrap();
    assert!(!out.as_bytes().contains(&0x1b), "{out:?}");
    assert!(out.is_ascii(), "{out}");
    let summaries: Vec<&str> = out.lines().filter(|l| l.starts_with("iter ")).collect();
    assert!(summaries.len() >= 2, "{out}");
    let last = summaries.last().unwrap();
    for part in [
        "iter 20/5000",
        "Steps/s 12,345",
        "Reward 23.456",
        "Learning ",
    ] {
        assert!(last.contains(part), "{part} not in {last}");
    }
    assert!(
        out.contains("WARN contract: accounted 104% of Iter Wall"),
        "{out}"
    );
    assert!(out.contains("a log line from the runner"), "{out}");
    assert!(out.contains("Warming up..."), "{out}");
}

#[test]
fn a_note_of_the_logger_never_displaces_the_runners_status_before_training() {
    // Warm-up progress prints only its latest line per interval; a note the logger says once
    // (no GPU metrics) is not progress and never takes a status's place (docs/contract/panel.md
    // "Plain output").
    let state = Arc::new(Mutex::new(TerminalState::new(sac_state().facts)));
    let cap = Capture::default();
    let mut opts = plain_options(&cap);
    opts.plain_interval = Duration::from_secs(60);
    let mut panel = Panel::start(state.clone(), Arc::new(SystemClock::default()), opts);
    {
        let mut s = state.lock().unwrap();
        s.message(0.0, Level::Info, "connecting to the simulator".into());
        s.note(0.1, "no GPU metrics: NVML not loaded".into());
    }
    std::thread::sleep(Duration::from_millis(100));
    panel.stop().unwrap();
    let out = String::from_utf8(cap.bytes.lock().unwrap().clone()).unwrap();
    assert!(out.contains("connecting to the simulator"), "{out}");
    assert!(out.contains("no GPU metrics: NVML not loaded"), "{out}");
    assert_eq!(
        state.lock().unwrap().status,
        "connecting to the simulator",
        "a note is not the status"
    );
}

#[test]
fn a_stuck_output_never_blocks_the_training_loop() {
    // step() never renders and never blocks on the terminal (docs/contract/panel.md,
    // "One producer, a fixed clock").
    let state = Arc::new(Mutex::new(TerminalState::new(sac_state().facts)));
    let cap = Capture::default();
    let gate = cap.gate.clone();
    let stuck = gate.lock().unwrap();
    let mut panel = Panel::start(
        state.clone(),
        Arc::new(SystemClock::default()),
        plain_options(&cap),
    );
    state.lock().unwrap().push(
        sample(1.0, 1, &sac_values(1.0)),
        Some(5.0),
        Default::default(),
        0,
    );
    // Let the printer reach its (blocked) write.
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    for i in 2..=200u64 {
        let s = sample(1.0 + i as f64 * 0.01, i, &sac_values(1.0));
        state
            .lock()
            .unwrap()
            .push(s, Some(5.0), Default::default(), 0);
    }
    let took = t.elapsed();
    drop(stuck);
    panel.stop().unwrap();
    assert!(
        took < Duration::from_millis(500),
        "199 pushes took {took:?} while the output was stuck"
    );
}

#[test]
fn render_fills_exactly_the_area_it_is_given() {
    let v = view(&sac_state(), Glyphs::UNICODE);
    let area = Rect::new(0, 0, 100, 20);
    let mut buf = Buffer::empty(area);
    (&v).render(area, &mut buf);
    assert_eq!(buffer_text(&buf).lines().count(), 20);
    let _ = appo_values(1.0);
}

#[test]
fn control_characters_in_a_message_never_reach_the_terminal() {
    // A status line is runner text: an ESC in it must not become an escape sequence.
    let mut s = sac_state();
    let t = s.updated_at.unwrap() + 0.1;
    s.message(t, Level::Error, "bad\x1b[2Jthing\tand\x07bell".into());
    let v = PanelState::new(s.snapshot(), t, Glyphs::UNICODE, false);
    let buf = render_to_buffer(&v, 140, None);
    for cell in buf.content() {
        assert!(
            !cell.symbol().contains(|c: char| c.is_control()),
            "{:?}",
            cell.symbol()
        );
    }
}

// ---- rft runs (docs/contract/rft.md) --------------------------------------------------------

/// Where a group title is drawn: (line, column) of each place `title` starts a table, i.e.
/// the cell below its first character is the rule (full-height panels only).
fn title_at(t: &str, title: &str) -> Option<(usize, usize)> {
    let lines: Vec<Vec<char>> = t.lines().map(|l| l.chars().collect()).collect();
    let want: Vec<char> = title.chars().collect();
    for (y, line) in lines.iter().enumerate() {
        for x in 0..line.len() {
            let starts = line[x..].starts_with(&want)
                && line.get(x + want.len()).is_none_or(|c| *c == ' ')
                && (x == 0 || line[x - 1] == ' ');
            if starts && lines.get(y + 1).and_then(|l| l.get(x)) == Some(&'━') {
                return Some((y, x));
            }
        }
    }
    None
}

/// The group titles of the rft fixture, in Trinity-RFT's category order (`docs/contract/rft.md`).
const RFT_TITLES: [&str; 14] = [
    "rollout",
    "eval/gsm8k-eval",
    "bench/aime24",
    "time",
    "actor",
    "critic",
    "perf",
    "global_seqlen",
    "response_length",
    "prompt_length",
    "timing_per_token_ms",
    "experience_pipeline",
    "sample",
    "",
];

#[test]
fn rft_panel_snapshots_at_80_100_and_140_columns() {
    // Metrics follow {category}/{taskset_name}/{metric_name}/{statistic} (docs/contract/rft.md);
    // the panel groups them by category, eval mean@N/best@k as a small table per taskset
    // (docs/contract/panel.md, "The RFT panel").
    let s = rft_state();
    for w in WIDTHS {
        insta::assert_snapshot!(format!("rft_{w}"), text(&s, w));
    }
}

#[test]
fn rft_categories_appear_in_category_order_at_every_tier() {
    // The metric categories, in order (docs/contract/rft.md): rollout/, eval/, bench/, time/,
    // actor/, critic/, perf/, global_seqlen/, response_length/, prompt_length/,
    // timing_per_token_ms/, experience_pipeline/, sample/ — the panel keeps that order
    // (reading down, then across).
    let (snap, now) = snapshot_at_end(&rft_state());
    let model = PanelState::new(snap, now, Glyphs::UNICODE, false).model;
    let titles: Vec<String> = model
        .rft
        .unwrap()
        .groups
        .iter()
        .map(|g| g.title())
        .collect();
    assert_eq!(titles, RFT_TITLES[..13]);
    for w in [80, 96, 100, 119, 120, 140, 160] {
        let t = text(&rft_state(), w);
        let at: Vec<(usize, usize)> = RFT_TITLES[..13]
            .iter()
            .map(|l| title_at(&t, l).unwrap_or_else(|| panic!("{l} missing at {w}:\n{t}")))
            .collect();
        for (i, pair) in at.windows(2).enumerate() {
            let ((ya, xa), (yb, xb)) = (pair[0], pair[1]);
            assert!(
                yb > ya || xb > xa,
                "{} is above-left of {} at {w}:\n{t}",
                RFT_TITLES[i + 1],
                RFT_TITLES[i]
            );
        }
        if w < 96 {
            // Stacked: one column, strictly top to bottom.
            assert!(
                at.windows(2).all(|p| p[1].0 > p[0].0 && p[1].1 == p[0].1),
                "{t}"
            );
        } else {
            // Two columns from 96, three from 120: the small groups sit side by side.
            let xs: std::collections::BTreeSet<usize> = at[3..].iter().map(|p| p.1).collect();
            assert_eq!(xs.len(), if w < 120 { 2 } else { 3 }, "{w}:\n{t}");
        }
    }
}

/// The headers on a group's title line, after the title.
fn headers_after(t: &str, title: &str) -> Vec<String> {
    let (y, x) = title_at(t, title).unwrap_or_else(|| panic!("{title} missing:\n{t}"));
    let line: String = t
        .lines()
        .nth(y)
        .unwrap()
        .chars()
        .skip(x + title.chars().count())
        .collect();
    line.split_whitespace()
        .take_while(|w| *w != "│" && !w.contains('/'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn rft_eval_tables_have_one_column_per_statistic_in_order() {
    // eval/{task_name}/{metric_name}/{statistic} with mean@N, std@N, best@k, worst@k, which
    // an eval reports by default (docs/contract/rft.md): one table per taskset, columns in
    // that order with k ascending, plain aggregates (:sum) after them.
    let t = text(&rft_state(), 140);
    assert_eq!(
        headers_after(&t, "eval/gsm8k-eval"),
        ["mean@4", "std@4", "best@2", "best@4", "worst@2", "worst@4", "sum"]
    );
    assert_eq!(
        headers_after(&t, "bench/aime24"),
        ["mean@8", "std@8", "best@2", "best@4", "best@8", "worst@2", "worst@4", "worst@8"]
    );
    // Rollout metrics are one row per metric with their step statistics as columns
    // (rollout/accuracy/mean, /max, /min; :sum → /sum; :last → /last; docs/contract/rft.md).
    assert_eq!(
        headers_after(&t, "rollout"),
        ["mean", "max", "min", "sum", "last"]
    );
    let row = t.lines().find(|l| l.contains("│ accuracy ")).unwrap();
    assert!(row.contains("0.4536  1.000       0"), "{row}");
    // Narrower panels drop statistics, smallest k first, never mean@N, and never cut a label.
    let narrow = text(&rft_state(), 60);
    let h = headers_after(&narrow, "eval/gsm8k-eval");
    assert_eq!(h.first().map(String::as_str), Some("mean@4"), "{narrow}");
    assert!(
        !h.contains(&"best@2".to_owned()) && h.contains(&"best@4".to_owned()),
        "{h:?}"
    );
}

#[test]
fn rft_panels_show_no_rl_tables_and_never_cut_a_label_from_60_columns() {
    // The Trinity-RFT categories replace the RL registry for rft runs: no learner/collector
    // timelines, losses, rewards or system table (docs/contract/rft.md); no label is cut at
    // ≥ 60 columns (docs/contract/panel.md).
    let s = rft_state();
    let labels = [
        "accuracy",
        "format_score",
        "response_length",
        "explore_step",
        "wait_explore_step",
        "pg_loss",
        "advantages",
        "mfu/actor",
        "clip_ratio",
        "update_actor",
        "experience_count",
        "model_version/mean",
        "task_count",
        "GPUs 8",
        "iter 4030/5000",
    ];
    for w in 60..=160 {
        let t = text(&s, w);
        for rl in [
            "Learner (Iter Wall)",
            "Learner",
            "Collector",
            "Losses & Metrics",
            "Metrics",
            "Rewards",
            "Timing",
            "System",
            "Iter Wall",
            "CUDA MPS",
            "Timeout Rate",
            "Waiting for data",
        ] {
            assert!(!t.contains(rl), "{rl:?} in an rft panel at {w}:\n{t}");
        }
        assert!(!t.contains('…'), "something cut at {w}:\n{t}");
        for l in labels.iter().chain(&RFT_TITLES[..13]) {
            assert!(has_label(&t, l), "{l:?} missing at {w}:\n{t}");
        }
    }
}

#[test]
fn rft_panels_render_at_any_size_and_fill_the_area() {
    // The panel draws whatever area it gets, rft groups included (docs/contract/panel.md).
    let v = view(&rft_state(), Glyphs::ASCII);
    for w in (8..=200).step_by(3) {
        for h in [3, 7, 20, 45] {
            let area = Rect::new(0, 0, w, h);
            let mut buf = Buffer::empty(area);
            (&v).render(area, &mut buf);
            let t = buffer_text(&buf);
            assert_eq!(t.lines().count(), usize::from(h));
            assert!(t.is_ascii(), "{t}");
        }
    }
}

#[test]
fn rft_time_values_carry_their_units() {
    // Unless stated otherwise, time metrics are in seconds; timing_per_token_ms/ is per-token
    // ms (docs/contract/rft.md).
    let t = text(&rft_state(), 100);
    let line = |l: &str| t.lines().find(|x| x.contains(l)).unwrap().to_owned();
    assert!(line("explore_step").contains("18.220s"), "{t}");
    assert!(line("│ update_actor").contains("12.414s"), "{t}");
    let per_token = t
        .lines()
        .rev()
        .find(|x| x.contains("update_actor"))
        .unwrap();
    assert!(per_token.contains("1.101ms"), "{per_token}");
}

#[test]
fn rft_eval_tables_stay_between_evaluations() {
    // Eval metrics are computed on evaluation steps only (docs/contract/rft.md), so between
    // two evals the panel keeps the last one (marked) instead of dropping the table.
    let mut s = rft_state();
    let (snap, now) = snapshot_at_end(&s);
    let mut view = PanelState::new(snap, now, Glyphs::UNICODE, false);
    let t0 = s.updated_at.unwrap();
    for i in 1..=12u64 {
        s.push(
            rft_sample(t0 + 0.5 * i as f64, 4030 + i, &rft_values(1.0)),
            None,
            Default::default(),
            0,
        );
    }
    let (snap, now) = snapshot_at_end(&s);
    assert!(snap.window.get("eval/gsm8k-eval/accuracy/mean@4").is_none());
    let fresh = PanelState::new(snap.clone(), now, Glyphs::UNICODE, false);
    assert!(!buffer_text(&render_to_buffer(&fresh, 100, None)).contains("eval/"));
    view.update(snap, now);
    let t = buffer_text(&render_to_buffer(&view, 100, None));
    assert!(t.contains("eval/gsm8k-eval (last eval)"), "{t}");
    assert!(t.contains("bench/aime24 (last bench)"), "{t}");
    assert!(t.contains("0.5569"), "{t}");
    // The next evaluation replaces the held table.
    let t1 = t0 + 6.5;
    let mut values = rft_values(1.0);
    values.extend(rft_eval_values(1.1));
    s.push(rft_sample(t1, 4043, &values), None, Default::default(), 0);
    let (snap, now) = snapshot_at_end(&s);
    view.update(snap, now);
    let t = buffer_text(&render_to_buffer(&view, 100, None));
    assert!(!t.contains("(last eval)") && t.contains("0.6188"), "{t}");
}

#[test]
fn a_short_rft_panel_drops_the_last_groups_and_names_them() {
    // When the terminal is short, the groups at the end of the category order go first,
    // counted on a "+N more" line; rollout and eval stay (docs/contract/panel.md, "The RFT panel").
    let t = text_in(&rft_state(), 80, 30);
    assert_eq!(t.lines().count(), 30);
    for l in ["rollout", "eval/gsm8k-eval", "accuracy", "mean@4"] {
        assert!(has_label(&t, l), "{l}:\n{t}");
    }
    let from = t.find(" more: ").expect(&t);
    let more = &t[from..];
    assert!(more.contains("sample") && more.contains("perf"), "{more}");
    assert!(
        !more.contains("rollout") && !more.contains("eval/"),
        "{more}"
    );
}

#[test]
fn rft_plain_summary_carries_accuracy_latest_eval_and_the_longest_times() {
    // rollout/accuracy/mean, eval/{taskset}/accuracy/mean@N, time/ in seconds
    // (docs/contract/panel.md "Plain output", docs/contract/rft.md).
    let (snap, now) = snapshot_at_end(&rft_state());
    let line = tally_tui::summary_line(&PanelState::new(snap, now, Glyphs::ASCII, false).model);
    assert!(line.is_ascii(), "{line}");
    for part in [
        "iter 4030/5000",
        "rollout/accuracy/mean 0.4536",
        "eval/gsm8k-eval/accuracy/mean@4 0.5569",
        "time/explore_step 18.220s, time/update_actor 12.414s",
        "Avg 2s (n=9)",
    ] {
        assert!(line.contains(part), "{part:?} not in {line}");
    }
    assert!(
        !line.contains("wait_explore_step") && !line.contains("Reward"),
        "{line}"
    );
}

#[test]
fn rft_plain_mode_keeps_the_last_eval_between_evaluations() {
    // Eval keys arrive on evaluation steps only (docs/contract/rft.md); the summary still names the
    // latest eval mean@N after the eval step left the 2 s window.
    let state = Arc::new(Mutex::new(TerminalState::new(rft_state().facts)));
    let cap = Capture::default();
    let mut panel = Panel::start(
        state.clone(),
        Arc::new(SystemClock::default()),
        plain_options(&cap),
    );
    let mut values = rft_values(1.0);
    values.extend(rft_eval_values(1.0));
    state
        .lock()
        .unwrap()
        .push(rft_sample(1.0, 1, &values), None, Default::default(), 0);
    std::thread::sleep(Duration::from_millis(200));
    for i in 2..=10u64 {
        let s = rft_sample(1.0 + 0.5 * i as f64, i, &rft_values(1.0));
        state.lock().unwrap().push(s, None, Default::default(), 0);
        std::thread::sleep(Duration::from_millis(10));
    }
    panel.stop().unwrap();
    let out = String::from_utf8(cap.bytes.lock().unwrap().clone()).unwrap();
    let last = out.lines().rfind(|l| l.starts_with("iter ")).expect(&out);
    assert!(last.contains("iter 10/5000"), "{last}");
    assert!(last.contains("rollout/accuracy/mean 0.4531"), "{last}");
    assert!(
        last.contains("eval/gsm8k-eval/accuracy/mean@4 0.5625"),
        "{last}"
    );
}

/// `sac_state` plus `n` user metrics, metric `user/m{k}` last logged at the k-th newest step.
fn sac_with_user_metrics(n: usize) -> TerminalState {
    let mut s = sac_state();
    let (t0, it0) = (3740.0, 4031u64);
    for k in (0..n).rev() {
        let tag = format!("user/m{k}");
        let mut values = sac_values(1.0);
        values.push((tag.as_str(), k as f64 + 0.5));
        let t = t0 + 0.1 * (n - k) as f64;
        s.push(
            sample(t, it0 + (n - k) as u64, &values),
            Some(20.0),
            Default::default(),
            0,
        );
    }
    s
}

#[test]
fn user_metrics_have_their_own_section_most_recent_first_with_a_more_line() {
    // docs/contract/panel.md "Metrics table": the user's own metrics under their own heading,
    // as many as the tier allows, most recently logged first, then "+N more".
    let full = text(&sac_with_user_metrics(10), 140);
    assert!(full.contains("Your metrics"), "{full}");
    let at = |label: &str| {
        full.find(label)
            .unwrap_or_else(|| panic!("{label} missing:\n{full}"))
    };
    assert!(
        at("user/m0") < at("user/m1") && at("user/m6") < at("user/m7"),
        "{full}"
    );
    assert!(
        !full.contains("user/m8") && !full.contains("user/m9"),
        "{full}"
    );
    assert!(full.contains("+2 more"), "{full}");
    let stacked = text(&sac_with_user_metrics(10), 80);
    assert!(
        stacked.contains("user/m3") && !stacked.contains("user/m4"),
        "{stacked}"
    );
    assert!(stacked.contains("+6 more"), "{stacked}");
    // Few enough to fit: no "more" line.
    let few = text(&sac_with_user_metrics(2), 140);
    assert!(few.contains("user/m1") && !few.contains("more"), "{few}");
    // Without user metrics the section is absent.
    assert!(!text(&sac_state(), 140).contains("Your metrics"));
}

#[test]
fn a_huge_reward_is_shown_in_scientific_notation_not_cut() {
    // A reward of 1e300 is a legal (finite) value: the reward row keeps its shape, the figures
    // in scientific notation like every other metric at that size (docs/contract/panel.md
    // "Number formats").
    let mut s = sac_state();
    for i in 31..=40u64 {
        let t = 3730.0 + 0.25 * i as f64;
        s.push(
            sample(t, 4000 + i, &sac_values(1.0)),
            Some(1e300),
            tally::SystemInfo::default(),
            (4000 + i) * 4096,
        );
    }
    for width in [80, 140] {
        let t = text(&s, width);
        assert!(t.contains("/ Peak 1.00e+300"), "{width} columns:\n{t}");
    }
}

#[test]
fn the_health_line_shows_the_newest_finding_for_as_long_as_the_run_goes() {
    // docs/contract/health.md "In the logger": the newest finding, as it stands.
    use tally::health::{LiveHealth, RuleSet};
    let mut s = sac_state();
    assert!(
        !text(&s, 100).contains("Health "),
        "no line before a finding"
    );
    let h = Arc::new(LiveHealth::new(RuleSet::defaults()));
    let critic = tally::Tag::Spec(tally::schema::metric("Loss/critic").unwrap());
    h.step(7, 1.0, &[(critic.clone(), f64::NAN)], false);
    s.health = Some(h.clone());
    let t = text(&s, 100);
    let line = t
        .lines()
        .find(|l| l.contains("Health "))
        .unwrap_or_else(|| panic!("{t}"));
    assert!(
        line.contains("nonfinite Loss/critic at step 7 (x1)"),
        "{line}"
    );
    // It fires again: the same line, updated.
    h.step(9, 2.0, &[(critic, f64::NAN)], false);
    let t = text(&s, 100);
    assert!(t.contains("nonfinite Loss/critic at steps 7-9 (x2)"), "{t}");
}
