//! Pins the learner and collector timeline rules (docs/contract/timelines.md).

use std::collections::HashMap;
use tally::timeline::{CollectorTimeline, LearnerTimeline};
use tally::Profile;

fn values(pairs: &[(&str, f64)]) -> impl Fn(&str) -> Option<f64> {
    let m: HashMap<String, f64> = pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    move |t: &str| m.get(t).copied()
}

#[test]
fn other_is_iter_wall_minus_accounted_and_rows_use_iter_wall() {
    // Other = max(Iter Wall - accounted, 0); every row uses Iter Wall as denominator
    // (docs/contract/timelines.md "Accounted and Other").
    let t = LearnerTimeline::from_values(
        Profile::SacFamily,
        values(&[
            ("Perf/learner_collector_wait_ms", 100.0),
            ("Perf/learner_inference_ms", 80.0),
            ("Perf/learner_collector_release_ms", 20.0),
            ("Perf/learner_replay_batch_wait_ms", 120.0),
            ("Perf/learner_replay_sample_ms", 100.0),
            ("Perf/learning_time", 0.5),
            ("Perf/iteration_time", 1.0),
        ]),
    );
    assert!((t.accounted_ms - 920.0).abs() < 1e-9);
    assert!((t.other_ms - 80.0).abs() < 1e-9);
    assert_eq!(t.iter_wall_ms, 1000.0);
    let pct: Vec<_> = t
        .rows
        .iter()
        .map(|r| (r.spec.label, r.pct.round() as i64))
        .collect();
    assert_eq!(
        pct,
        [
            ("Collector Wait", 10),
            ("Inference", 8),
            ("Collector Release", 2),
            ("Replay Batch Wait", 12),
            ("Replay Sample", 10),
            ("Learning", 50)
        ]
    );
    let total: f64 = t.rows.iter().map(|r| r.pct).sum::<f64>() + t.other_pct;
    assert!((total - 100.0).abs() < 1e-9, "accounted + other = 100%");
    assert!(!t.over_accounted());
}

#[test]
fn nested_diagnostics_are_never_added_to_accounted() {
    // Accounted holds only the exclusive phases, never nested or background diagnostics
    // (docs/contract/timelines.md).
    let base = [("Perf/learning_time", 0.5), ("Perf/iteration_time", 1.0)];
    let mut with_nested = base.to_vec();
    with_nested.extend([
        ("Perf/learner_inference_h2d_ms", 300.0),
        ("Perf/learner_inference_forward_ms", 300.0),
        ("Perf/replay_ingress_h2d_submit_ms", 900.0),
    ]);
    let a = LearnerTimeline::from_values(Profile::SacFamily, values(&base));
    let b = LearnerTimeline::from_values(Profile::SacFamily, values(&with_nested));
    assert_eq!(a, b);
    assert!((b.other_ms - 500.0).abs() < 1e-9);
}

#[test]
fn accounted_above_iter_wall_is_a_contract_warning_and_other_clamps_to_zero() {
    // Accounted > 100% is a contract warning to fix; Other is clamped to 0
    // (docs/contract/timelines.md "Accounted and Other").
    let t = LearnerTimeline::from_values(
        Profile::SacFamily,
        values(&[
            ("Perf/learning_time", 0.9),
            ("Perf/learner_collector_wait_ms", 200.0),
            ("Perf/iteration_time", 1.0),
        ]),
    );
    assert_eq!(t.other_ms, 0.0);
    assert!(t.over_accounted());
    assert!((t.accounted_pct() - 110.0).abs() < 1e-9);
}

#[test]
fn without_a_measured_wall_iter_wall_is_the_accounted_sum() {
    let t = LearnerTimeline::from_values(
        Profile::Appo,
        values(&[
            ("Perf/learning_time", 0.3),
            ("Perf/learner_replay_stage_ms", 100.0),
        ]),
    );
    assert!(!t.measured);
    assert!((t.iter_wall_ms - 400.0).abs() < 1e-9);
    assert_eq!(t.other_ms, 0.0);
    assert!(
        !t.over_accounted(),
        "an inferred wall cannot be over-accounted"
    );
}

#[test]
fn appo_rows_never_appear_in_sac_and_vice_versa() {
    // Replay Stage and Weight Publish appear only in APPO (docs/contract/timelines.md).
    let sac: Vec<_> = LearnerTimeline::from_values(Profile::SacFamily, values(&[]))
        .rows
        .iter()
        .map(|r| r.spec.label)
        .collect();
    assert_eq!(
        sac,
        [
            "Collector Wait",
            "Inference",
            "Collector Release",
            "Replay Batch Wait",
            "Replay Sample",
            "Learning"
        ]
    );
    let appo: Vec<_> = LearnerTimeline::from_values(Profile::Appo, values(&[]))
        .rows
        .iter()
        .map(|r| r.spec.label)
        .collect();
    assert_eq!(
        appo,
        [
            "Collector Wait",
            "Replay Stage",
            "Replay Sample",
            "Learning",
            "Weight Publish"
        ]
    );
}

fn full_cycle() -> Vec<(&'static str, f64)> {
    vec![
        ("Perf/collector_inference_request_ms", 0.5),
        ("Perf/collector_learner_action_wait_ms", 3.0),
        ("Perf/collector_env_step_ms", 12.0),
        ("Perf/collector_transition_extract_ms", 0.1),
        ("Perf/collector_replay_write_ms", 4.0),
        ("Perf/collector_metrics_publish_ms", 0.4),
    ]
}

#[test]
fn collector_cycle_is_the_sum_of_cycle_phases_and_details_are_not_added() {
    // The collector cycle total is the sum of the cycle phases; Env Step details are nested
    // diagnostics that do not join the sum but use the same denominator
    // (docs/contract/timelines.md "Collector timeline (sac_family)").
    let mut v = full_cycle();
    v.push(("Perf/collector_env_step_backend_ms", 10.0));
    let t = CollectorTimeline::from_values(Profile::SacFamily, values(&v));
    assert_eq!(t.cycle_ms, Some(20.0));
    let backend = t.rows.iter().find(|r| r.key == "env_step_backend").unwrap();
    assert!(backend.detail && backend.visible);
    assert_eq!(backend.pct, Some(50.0));
    let env = t.rows.iter().find(|r| r.key == "env_step").unwrap();
    assert_eq!(env.pct, Some(60.0));
}

#[test]
fn collector_percentages_wait_for_a_complete_cycle() {
    let mut v = full_cycle();
    v.retain(|(k, _)| *k != "Perf/collector_metrics_publish_ms");
    let t = CollectorTimeline::from_values(Profile::SacFamily, values(&v));
    assert_eq!(t.cycle_ms, None);
    assert!(t.rows.iter().all(|r| r.pct.is_none()));
}

#[test]
fn quiet_rows_show_only_at_one_percent_of_the_cycle_and_core_rows_always() {
    // Inference Request, Transition Extract, Metrics Publish and the Env Step details appear
    // only when >= 1% of the collector cycle; core cycle rows always stay
    // (docs/contract/timelines.md "Collector timeline (sac_family)").
    let t = CollectorTimeline::from_values(Profile::SacFamily, values(&full_cycle()));
    let visible = |k: &str| t.rows.iter().find(|r| r.key == k).unwrap().visible;
    assert!(visible("inference_request"), "0.5 of 20 ms = 2.5%");
    assert!(visible("metrics_publish"), "0.4 of 20 ms = 2%");
    assert!(!visible("transition_extract"), "0.1 of 20 ms = 0.5%");
    assert!(!visible("env_step_backend"), "not reported");
    let empty = CollectorTimeline::from_values(Profile::SacFamily, values(&[]));
    let shown: Vec<_> = empty
        .rows
        .iter()
        .filter(|r| r.visible)
        .map(|r| r.spec.label)
        .collect();
    assert_eq!(shown, ["Learner Action Wait", "Env Step", "Replay Write"]);
}

#[test]
fn appo_collector_shows_milliseconds_without_percentages() {
    // APPO's MLP Infer and Env Step are per-step EMAs and Rollout Wall a whole rollout, so
    // the terminal shows ms only (docs/contract/timelines.md "APPO collector").
    let t = CollectorTimeline::from_values(
        Profile::Appo,
        values(&[
            ("Perf/collector_mlp_infer_ms", 1.5),
            ("Perf/collector_env_step_ms", 40.0),
            ("Perf/collection_time", 0.1),
        ]),
    );
    assert_eq!(t.cycle_ms, None);
    let rows: Vec<_> = t
        .rows
        .iter()
        .filter(|r| r.visible)
        .map(|r| (r.spec.label, r.ms.unwrap(), r.pct))
        .collect();
    assert_eq!(
        rows,
        [
            ("MLP Infer", 1.5, None),
            ("Env Step", 40.0, None),
            ("Rollout Wall", 100.0, None)
        ]
    );
}

#[test]
fn onpolicy_iter_time_is_collect_plus_train_whatever_wall_was_measured() {
    // An on-policy iteration is the rollout, then the update: Iter Time = collect + train, the
    // denominator of both shares; nothing is left unnamed, and a wall the runner measured
    // (never persisted for on-policy runs) does not change it, so a replay of the event file
    // agrees (docs/contract/timelines.md "On-policy: collect, then train").
    for wall in [None, Some(1.0), Some(30.0)] {
        let mut v = vec![("Perf/collection_time", 0.75), ("Perf/learning_time", 0.25)];
        v.extend(wall.map(|w| ("Perf/iteration_time", w)));
        let l = LearnerTimeline::from_values(Profile::OnPolicy, values(&v));
        assert_eq!(l.iter_wall_ms, 1000.0, "{wall:?}");
        assert_eq!((l.other_ms, l.other_pct), (0.0, 0.0), "{wall:?}");
        assert!(!l.measured && !l.over_accounted(), "{wall:?}");
        let rows: Vec<_> = l.rows.iter().map(|r| (r.spec.tag, r.ms, r.pct)).collect();
        assert_eq!(rows, [("Perf/learning_time", 250.0, 25.0)], "{wall:?}");
        let c = CollectorTimeline::from_values(Profile::OnPolicy, values(&v));
        let rows: Vec<_> = c
            .rows
            .iter()
            .filter(|r| r.visible)
            .map(|r| (r.spec.tag, r.ms, r.pct))
            .collect();
        assert_eq!(
            rows,
            [("Perf/collection_time", Some(750.0), Some(75.0))],
            "{wall:?}"
        );
    }
}

#[test]
fn onpolicy_without_a_rollout_is_train_alone() {
    // A runner that reports no collection time: Iter Time is the update alone, Collect is
    // not shown.
    let v = [("Perf/learning_time", 0.5), ("Perf/iteration_time", 2.0)];
    let l = LearnerTimeline::from_values(Profile::OnPolicy, values(&v));
    assert_eq!(
        (l.iter_wall_ms, l.rows[0].pct, l.other_ms),
        (500.0, 100.0, 0.0)
    );
    let c = CollectorTimeline::from_values(Profile::OnPolicy, values(&v));
    assert!(c.rows.iter().all(|r| !r.visible));
}
