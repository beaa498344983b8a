//! The `overhead` rule (docs/contract/health.md "Overhead"): tally's share of the iteration on
//! the step's thread above a budget for a while; found when a slow sink makes every step wait,
//! quiet on a loop whose steps are its small part.

use std::time::Duration;
use tally::health::{apply_rules_file, Evaluator, Finding, Overhead, RuleKind, RuleSet};
use tally::sink::BackendStep;
use tally::{Backend, Logger, LoggerConfig, MemorySink, RunStatus, Sink, SinkError, StepInput};

fn rules(p: Overhead) -> RuleSet {
    let mut r = RuleSet::empty();
    r.overhead = Some(p);
    r
}

const TEN_STEPS_A_SECOND: Overhead = Overhead {
    budget: 0.05,
    window: 10,
    // Just under a second: ten blocks of 0.1 s sum to a hair under 1.0 in floating point.
    for_seconds: 0.95,
};

/// Feeds `steps` steps from `first`, each 10 ms apart with `inside` seconds inside tally.
fn feed(e: &mut Evaluator, first: i64, steps: i64, inside: f64) {
    for s in first..first + steps {
        e.overhead(s, 0.010, inside);
    }
}

#[test]
fn a_share_over_budget_for_long_enough_is_one_finding_per_stretch() {
    let mut e = Evaluator::new(rules(TEN_STEPS_A_SECOND));
    feed(&mut e, 1, 100, 0.0001); // 1 %: quiet
    assert!(e.findings().is_empty());
    // 50 % for 0.9 s: over budget, not for long enough.
    feed(&mut e, 101, 90, 0.005);
    assert!(e.findings().is_empty(), "{:?}", e.findings());
    feed(&mut e, 191, 10, 0.0001);
    // 50 % from step 201 on: the tenth block over budget (1 s) fires, from the stretch's start.
    feed(&mut e, 201, 100, 0.005);
    let f = e.findings();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0].rule, f[0].first_step, f[0].last_step, f[0].count),
        (RuleKind::Overhead, 201, 300, 1)
    );
    assert!((f[0].last_value - 0.5).abs() < 1e-9);
    assert_eq!(
        f[0].message,
        "tally took 50 % of the iteration on the step's thread from step 201 (budget 5 %; \
         5000 µs of 10 ms per step over the last 10 steps)"
    );
    // Still over: the same stretch, its count does not grow; a new stretch counts again.
    feed(&mut e, 301, 50, 0.005);
    feed(&mut e, 351, 10, 0.0);
    feed(&mut e, 361, 100, 0.005);
    let f = &e.findings()[0];
    assert_eq!((f.count, f.last_step), (2, 460));
    // Off: never fires.
    let mut e = Evaluator::new(RuleSet::empty());
    feed(&mut e, 1, 1000, 0.01);
    assert!(e.findings().is_empty());
}

#[test]
fn the_rules_file_sets_or_refuses_its_parameters() {
    let mut r = RuleSet::empty();
    let json =
        r#"{"rules": [{"kind": "overhead", "budget": 0.1, "window": 50, "for_seconds": 5}]}"#;
    apply_rules_file("r.json", json, &mut r).unwrap();
    let want = Overhead {
        budget: 0.1,
        window: 50,
        for_seconds: 5.0,
    };
    assert_eq!(r.overhead, Some(want));
    let mut r = RuleSet::defaults();
    assert!(r.has(RuleKind::Overhead), "on by default");
    apply_rules_file("r.json", r#"{"off": ["overhead"]}"#, &mut r).unwrap();
    assert_eq!(r.overhead, None);
    for (json, says) in [
        (
            r#"{"rules": [{"kind": "overhead", "budget": 1.5}]}"#,
            "field \"budget\": must be below 1",
        ),
        (
            r#"{"rules": [{"kind": "overhead", "window": 0}]}"#,
            "field \"window\"",
        ),
        (
            r#"{"rules": [{"kind": "overhead", "tag": "x"}]}"#,
            "field \"tag\": not a field of this rule",
        ),
    ] {
        let e = apply_rules_file("r.json", json, &mut RuleSet::empty()).unwrap_err();
        assert!(e.to_string().contains(says), "{json}: {e}");
    }
}

/// A local disk taking 2 ms a write: with a one-step queue, each step waits for it.
struct SlowDisk(MemorySink);

impl Sink for SlowDisk {
    fn name(&self) -> &str {
        "slow-disk"
    }
    fn is_local_storage(&self) -> bool {
        true
    }
    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        std::thread::sleep(Duration::from_millis(2));
        self.0.write(step)
    }
}

/// `steps` steps of a loop working `work` each, into `sink` behind a queue of `queue` steps;
/// the `overhead` findings.
fn run(sink: Box<dyn Sink>, queue: usize, steps: u64, work: Duration) -> Vec<Finding> {
    let dir = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("sac", "overhead", "mujoco");
    c.log_dir = Some(dir.path().join("run"));
    c.max_iterations = Some(steps);
    c.backend = Backend::None;
    c.queue_capacity = queue;
    c.health.overhead = Some(Overhead {
        window: 20,
        for_seconds: 0.2,
        ..Overhead::default()
    });
    let mut log = Logger::with_sinks(
        c,
        vec![sink],
        std::sync::Arc::new(tally::SystemClock::default()),
    )
    .unwrap();
    for i in 1..=steps {
        std::thread::sleep(work);
        log.step(&StepInput::new(i).metric("Loss/critic", 1.0))
            .unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    log.health_findings()
        .into_iter()
        .filter(|f| f.rule == RuleKind::Overhead)
        .collect()
}

#[test]
fn steps_waiting_on_a_slow_sink_are_found() {
    let f = run(
        Box::new(SlowDisk(MemorySink::new())),
        1,
        200,
        Duration::from_micros(200),
    );
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].count, 1);
    assert!(f[0].last_value > 0.5, "most of the iteration waits: {f:?}");
}

#[test]
fn a_loop_whose_steps_are_its_small_part_finds_nothing() {
    // 20 ms of work a step: a debug build's step on a machine loaded by other builds took up to
    // 0.31 ms (5.4 % of 5 ms work, a false finding); 1.5 % of 20 ms.
    let queue = LoggerConfig::new("sac", "overhead", "mujoco").queue_capacity;
    let f = run(
        Box::new(MemorySink::new()),
        queue,
        100,
        Duration::from_millis(20),
    );
    assert!(f.is_empty(), "{f:?}");
}
