//! The `ranks` rule (docs/contract/health.md "Ranks"): one rank's values disagreeing with the
//! others' before reduction, judged by a logger given every rank's step; quiet on ranks that
//! differ as healthy ranks do.

use tally::health::{apply_rules_file, Finding, RuleKind, RuleSet};
use tally::{Backend, Logger, LoggerConfig, RunStatus, StepInput};

#[path = "support/sixty_values.rs"]
mod sixty_values;

const RANKS: usize = 4;

fn logger(dir: &std::path::Path) -> Logger {
    let mut c = LoggerConfig::new("sac", "ranks", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.backend = Backend::None;
    c.max_iterations = Some(1_000);
    Logger::new(c).unwrap()
}

/// A healthy job's ranks at iteration `i`: each rank 1 % slower than the one before and a few
/// per cent of jitter (as `tally demo --gpus N` simulates them).
fn ranks(i: u64) -> Vec<StepInput> {
    (0..RANKS)
        .map(|r| {
            let jitter = 1.0 + 0.04 * (((i as usize * 7 + r * 3) % 5) as f64 / 4.0 - 0.5);
            let t = 0.2 * (1.0 + 0.01 * r as f64) * jitter;
            sixty_values::record(i).iteration_time(t)
        })
        .collect()
}

/// The step of iteration `i`: the job's env steps, every rank's summed.
fn step_of(i: u64) -> i64 {
    (i * 4096 * RANKS as u64) as i64
}

/// Steps 1..=n, `plant` changing the ranks of a step; the run's findings.
fn run(n: u64, plant: impl Fn(u64, &mut [StepInput])) -> Vec<Finding> {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path());
    for i in 1..=n {
        let mut r = ranks(i);
        plant(i, &mut r);
        log.step_ranks(&r).unwrap();
    }
    // After close: the writer thread has fed every step to the rules (the reduced values'
    // `nonfinite` is found there, off the step's thread).
    log.close(RunStatus::Completed).unwrap();
    log.health_findings()
}

#[test]
fn healthy_ranks_find_nothing() {
    let f = run(300, |_, _| {});
    assert!(f.is_empty(), "{f:?}");
}

#[test]
fn a_rank_local_nan_names_its_rank_at_its_step() {
    let f = run(60, |i, r| {
        if i == 40 {
            r[2].metrics[0].1 = f64::NAN;
        }
    });
    let ranks: Vec<_> = f.iter().filter(|f| f.rule == RuleKind::Ranks).collect();
    assert_eq!(ranks.len(), 1, "{f:?}");
    assert_eq!((ranks[0].first_step, ranks[0].count), (step_of(40), 1));
    assert!(
        ranks[0].message.starts_with("rank 2: 1 non-finite"),
        "{f:?}"
    );
    // The mean across ranks is NaN too: the reduced tag's own `nonfinite`, at the same step,
    // and nothing else.
    let other: Vec<_> = f.iter().filter(|f| f.rule != RuleKind::Ranks).collect();
    assert_eq!(other.len(), 1, "{f:?}");
    assert_eq!(
        (other[0].rule, other[0].first_step),
        (RuleKind::Nonfinite, step_of(40))
    );
}

#[test]
fn a_straggler_is_one_finding_from_its_first_slow_step() {
    let f = run(80, |i, r| {
        if i >= 50 {
            let t = r[3].iteration_time.unwrap();
            r[3].iteration_time = Some(t * 3.0);
        }
    });
    assert_eq!(f.len(), 1, "{f:?}");
    let s = &f[0];
    assert_eq!(
        (s.rule, s.first_step, s.last_step, s.count),
        (RuleKind::Ranks, step_of(50), step_of(80), 1)
    );
    let from = format!("rank 3 straggles from step {}", step_of(50));
    assert!(s.message.starts_with(&from), "{s:?}");
}

#[test]
fn a_short_slow_stretch_is_not_a_straggler() {
    // Four slow steps, below the default `for_steps` of 5.
    let f = run(80, |i, r| {
        if (50..54).contains(&i) {
            let t = r[1].iteration_time.unwrap();
            r[1].iteration_time = Some(t * 3.0);
        }
    });
    assert!(f.is_empty(), "{f:?}");
}

#[test]
fn the_rules_file_sets_refuses_or_turns_off_the_rule() {
    let mut r = RuleSet::empty();
    apply_rules_file(
        "r.json",
        r#"{"rules": [{"kind": "ranks", "ratio": 2, "min_excess_s": 0.5, "for_steps": 3}]}"#,
        &mut r,
    )
    .unwrap();
    let p = r.ranks.unwrap();
    assert_eq!((p.ratio, p.min_excess_s, p.for_steps), (2.0, 0.5, 3));
    for bad in [
        r#"{"rules": [{"kind": "ranks", "ratio": 1}]}"#,
        r#"{"rules": [{"kind": "ranks", "for_steps": 0}]}"#,
        r#"{"rules": [{"kind": "ranks", "tag": "x"}]}"#,
    ] {
        assert!(
            apply_rules_file("r.json", bad, &mut RuleSet::empty()).is_err(),
            "{bad}"
        );
    }
    let mut r = RuleSet::defaults();
    assert!(r.has(RuleKind::Ranks));
    apply_rules_file("r.json", r#"{"off": ["ranks"]}"#, &mut r).unwrap();
    assert!(!r.has(RuleKind::Ranks));
}
