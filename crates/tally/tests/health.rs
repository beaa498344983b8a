//! Each health rule on values fed one at a time: when it fires, at which step, and when it
//! must not (docs/contract/health.md, one section per rule).

use tally::health::{apply_rules_file, Evaluator, Finding, RuleKind, RuleSet};

fn rules(json: &str) -> RuleSet {
    let mut r = RuleSet::empty();
    apply_rules_file("test.json", json, &mut r).unwrap();
    r
}

/// Feeds `values` of `tag` at steps 1, 2, ... one second apart; returns the findings.
fn run(rules: RuleSet, tag: &str, values: impl IntoIterator<Item = f64>) -> Vec<Finding> {
    let mut eval = Evaluator::new(rules);
    let slot = eval.tag(tag);
    for (i, v) in values.into_iter().enumerate() {
        let step = i as i64 + 1;
        eval.step(step, step as f64);
        eval.value(slot, step, step as f64, v);
    }
    eval.into_findings()
}

/// A noisy but healthy series around `level` (deterministic).
fn noisy(level: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| level * (1.0 + 0.2 * ((i * 7919 % 101) as f64 / 101.0 - 0.5)))
        .collect()
}

#[test]
fn divergence_waits_for_its_history_then_fires_from_the_first_value_out_of_range() {
    // "Divergence": 50 values before it may fire, then 3 out of range in a row.
    let mut early = noisy(1.0, 10);
    early.push(1e6);
    assert!(run(RuleSet::defaults(), "Loss/critic", early).is_empty());
    // Spikes of one or two values (A2C's value loss at an episode's end) are not divergence.
    let mut v = noisy(1.0, 300);
    v[150] = 1e3;
    v[200] = 100.0;
    v[201] = 80.0;
    assert!(run(RuleSet::defaults(), "Loss/critic", v.clone()).is_empty());
    v[202] = 90.0;
    let f = run(RuleSet::defaults(), "Loss/critic", v);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0].rule, f[0].first_step, f[0].last_step, f[0].count),
        (RuleKind::Divergence, 201, 203, 3)
    );
    assert_eq!(f[0].last_value, 90.0);
    // A reward is not watched for divergence by default.
    let mut v = noisy(1.0, 300);
    v[200] = 100.0;
    assert!(run(RuleSet::defaults(), "Train/mean_reward", v).is_empty());
}

#[test]
fn a_steady_trend_is_not_a_divergence() {
    // A loss falling 1000-fold over the run stays in its recent range.
    let v: Vec<f64> = (0..2000)
        .map(|i| 10.0 * (-(i as f64) / 290.0).exp())
        .collect();
    assert!(run(RuleSet::defaults(), "Loss/value", v).is_empty());
}

#[test]
fn nonfinite_fires_at_each_such_value_and_nothing_else_sees_it() {
    let mut v = noisy(1.0, 100);
    v[40] = f64::NAN;
    v[60] = f64::INFINITY;
    let f = run(RuleSet::defaults(), "Loss/critic", v);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0].rule, f[0].first_step, f[0].last_step, f[0].count),
        (RuleKind::Nonfinite, 41, 61, 2)
    );
    assert_eq!(f[0].message, "NaN at step 41");
}

#[test]
fn collapse_is_a_fall_to_a_few_percent_of_the_early_level() {
    // "Collapse": 3 values in a row at or below 5 % of the mean of the first 5, toward 0.
    let mut v = noisy(0.69, 50);
    v.extend([0.1; 40]); // 14 % of its start: a policy that learned, not a collapse
    v.extend([0.03; 2]);
    v.push(0.1);
    assert!(run(RuleSet::defaults(), "losses/entropy", v.clone()).is_empty());
    v.extend([0.02; 10]);
    let f = run(RuleSet::defaults(), "losses/entropy", v);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0].rule, f[0].first_step, f[0].last_step, f[0].count),
        (RuleKind::Collapse, 94, 103, 10)
    );
}

#[test]
fn collapse_sees_a_gaussian_entropy_cross_zero_and_minus_the_entropy_rise_to_it() {
    // A Gaussian's entropy goes negative as its std shrinks; SB3 logs minus the entropy.
    let mut v = noisy(1.4, 20);
    v.extend((0..20).map(|i| 1.0 - 0.1 * i as f64));
    let f = run(RuleSet::defaults(), "losses/entropy", v.clone());
    assert_eq!((f.len(), f[0].first_step), (1, 31), "{f:?}");
    let minus: Vec<f64> = v.iter().map(|x| -x).collect();
    let f = run(RuleSet::defaults(), "train/entropy_loss", minus);
    assert_eq!((f.len(), f[0].first_step), (1, 31), "{f:?}");
}

#[test]
fn collapse_never_fires_on_a_series_that_starts_at_zero() {
    // A clip fraction at CleanRL's defaults: 0 from the start (and not watched by default).
    let r = rules(r#"{"rules": [{"kind": "collapse", "tag": "losses/clipfrac"}]}"#);
    assert!(run(r, "losses/clipfrac", [0.0; 200]).is_empty());
    assert!(run(RuleSet::defaults(), "losses/approx_kl", [0.0; 200]).is_empty());
}

#[test]
fn a_flat_reward_fires_below_its_best_not_at_it() {
    // "Flat reward": frozen for 20 values fires; holding at a whole-number best does not.
    let mut v: Vec<f64> = (0..50).map(|i| i as f64).collect();
    v.extend([500.0; 300]);
    assert!(run(RuleSet::defaults(), "rollout/ep_rew_mean", v).is_empty());
    let mut v: Vec<f64> = (0..50).map(|i| i as f64).collect();
    v.extend([20.0; 19]);
    assert!(run(RuleSet::defaults(), "rollout/ep_rew_mean", v.clone()).is_empty());
    v.extend([20.0; 31]);
    let f = run(RuleSet::defaults(), "rollout/ep_rew_mean", v);
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].rule, f[0].first_step, f[0].count),
        (RuleKind::FlatFor, 51, 50)
    );
    // A stale mean frozen at its best, as an improving run's is, is frozen too.
    let mut v: Vec<f64> = (0..50).map(|i| i as f64 + 0.37).collect();
    v.extend([49.37; 30]);
    let f = run(RuleSet::defaults(), "rollout/ep_rew_mean", v);
    assert_eq!((f.len(), f[0].first_step), (1, 50), "{f:?}");
}

#[test]
fn the_same_step_logged_again_is_not_flat_for_longer() {
    let mut eval = Evaluator::new(rules(
        r#"{"rules": [{"kind": "flat_for", "tag": "r", "for_values": 3}]}"#,
    ));
    let s = eval.tag("r");
    eval.value(s, 1, 1.0, 9.0);
    for _ in 0..10 {
        eval.value(s, 2, 2.0, 1.0);
    }
    assert!(eval.findings().is_empty());
    eval.value(s, 3, 3.0, 1.0);
    eval.value(s, 4, 4.0, 1.0);
    assert_eq!(eval.findings().len(), 1);
    assert_eq!(eval.findings()[0].first_step, 2);
}

#[test]
fn above_and_below_fire_on_each_value_past_them() {
    let r = rules(
        r#"{"rules": [{"kind": "above", "tag": "charts/*", "value": 0.05},
                      {"kind": "below", "tag": "charts/kl", "value": 0.0}]}"#,
    );
    let f = run(r, "charts/kl", [0.01, 0.06, 0.02, 0.07, -1.0]);
    let got: Vec<_> = f
        .iter()
        .map(|f| (f.rule, f.first_step, f.last_step, f.count))
        .collect();
    assert_eq!(
        got,
        [(RuleKind::Above, 2, 4, 2), (RuleKind::Below, 5, 5, 1)]
    );
}

#[test]
fn a_pause_is_a_stall_only_past_k_medians_and_the_minimum_gap() {
    let stall = |pause: f64, min_gap: f64| {
        let r = rules(&format!(
            r#"{{"rules": [{{"kind": "stall", "min_gap_s": {min_gap}}}]}}"#
        ));
        let mut eval = Evaluator::new(r);
        let mut wall = 0.0;
        for step in 1..=100 {
            wall += if step == 51 { pause } else { 1.0 };
            eval.step(step, wall);
        }
        eval.into_findings()
    };
    assert!(
        stall(9.0, 0.0).is_empty(),
        "9 s is below 10 × the 1 s median"
    );
    assert!(
        stall(30.0, 60.0).is_empty(),
        "30 s is below the minimum gap"
    );
    let f = stall(120.0, 60.0);
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].rule, f[0].tag.as_str(), f[0].first_step, f[0].count),
        (RuleKind::Stall, "", 50, 1)
    );
    assert_eq!(f[0].last_value, 120.0);
}

#[test]
fn a_new_segment_forgets_the_pause_before_it_and_overdue_reports_once() {
    let mut eval = Evaluator::new(RuleSet::defaults());
    for step in 1..=50 {
        eval.step(step, step as f64);
    }
    eval.new_segment();
    for step in 51..=60 {
        eval.step(step, 10_000.0 + step as f64);
    }
    assert!(eval.findings().is_empty(), "{:?}", eval.findings());
    // A run still being written, 100 s after its last step (10 s threshold... 60 s minimum).
    assert_eq!(eval.overdue(10_060.0 + 30.0), None);
    assert_eq!(eval.overdue(10_060.0 + 100.0), Some(100.0));
    assert_eq!(
        eval.overdue(10_060.0 + 200.0),
        None,
        "reported once per last step"
    );
    assert_eq!(eval.findings()[0].first_step, 60);
}

/// Feeds a throughput tag whose values say nothing (an average since the start would hide
/// the pace) at steps 100 apart, each `secs` after the one before; a loss from value `loss_from`
/// on. Returns the findings.
fn paced(secs: &[f64], loss_from: usize) -> Vec<Finding> {
    let mut eval = Evaluator::new(RuleSet::defaults());
    let (fps, loss) = (eval.tag("time/fps"), eval.tag("train/value_loss"));
    let mut wall = 1e9;
    for (i, dt) in secs.iter().enumerate() {
        wall += dt;
        let step = 100 * (i as i64 + 1);
        eval.step(step, wall);
        eval.value(fps, step, wall, 1000.0);
        if i >= loss_from {
            eval.value(loss, step, wall, 1.0);
        }
    }
    eval.into_findings()
}

#[test]
fn throughput_is_the_pace_of_steps_and_an_exact_halving_for_long_enough_fires() {
    // "Throughput": one value a second, then every interval exactly twice as long.
    let series = |slow: usize| {
        let mut s = noisy(1.0, 100);
        s.extend(noisy(2.0, slow));
        s.extend(noisy(1.0, 50));
        paced(&s, 0)
    };
    assert!(series(8).is_empty(), "16 s slow is a dip");
    let f = series(40);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].rule, f[0].first_step), (RuleKind::Throughput, 10_100));
}

#[test]
fn throughput_ignores_the_warm_up_before_training_and_a_single_pause() {
    // Random steps before learning_starts are 5 times as fast as training ones.
    let mut s = noisy(0.2, 60);
    s.extend(noisy(1.0, 100));
    assert!(paced(&s, 60).is_empty());
    assert_eq!(paced(&s, 0).len(), 1, "without the warm-up rule it fires");
    // One pause of 900 s is a stall, not a slower run.
    let mut s = noisy(1.0, 100);
    s.push(900.0);
    s.extend(noisy(1.0, 50));
    let f = paced(&s, 0);
    assert!(f.iter().all(|f| f.rule == RuleKind::Stall), "{f:?}");
}

#[test]
fn no_defaults_means_no_rule() {
    let f = run(RuleSet::empty(), "Loss/critic", [f64::NAN; 30]);
    assert!(f.is_empty());
}
