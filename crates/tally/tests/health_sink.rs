//! The `sink` rule (docs/contract/health.md "Sink"): a remote sink falling behind the event
//! file, judged by the live logger's writer timer. Planted: a sink whose `flush` blocks (one
//! finding naming it, after the threshold; it ends when the sink catches up, and falling behind
//! again counts again on the same finding). Quiet: sinks that keep up, a short blip, a loop that
//! pauses.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tally::health::{apply_rules_file, Evaluator, Finding, RuleKind, RuleSet, SinkLag};
use tally::sink::BackendStep;
use tally::{Backend, Error, Logger, LoggerConfig, RunStatus, Sink, SinkError, StepInput};

#[path = "support/gate.rs"]
mod gate;
use gate::Gate;

#[test]
fn the_evaluator_fires_once_per_stretch_behind_and_names_the_sink() {
    let mut rules = RuleSet::empty();
    rules.sink = Some(SinkLag { max_lag_s: 10.0 });
    let mut e = Evaluator::new(rules);
    e.step(40, 0.0);
    // Keeping up: every row complete a second ago is acknowledged.
    for t in 0..30u32 {
        assert!(!e.sink("wandb", f64::from(t), u64::from(t) * 4, u64::from(t) * 4));
    }
    assert!(e.findings().is_empty());
    // From t = 30 the sink acknowledges nothing more; rows keep coming.
    let mut fired_at = None;
    for t in 30..60u32 {
        if e.sink("wandb", f64::from(t), u64::from(t) * 4, 120) {
            assert!(fired_at.is_none(), "one firing per stretch");
            fired_at = Some(t);
        }
    }
    // The oldest row waiting became complete at t = 31 (the first tick that saw it).
    assert_eq!(fired_at, Some(42));
    let f = &e.findings()[0];
    assert_eq!(e.findings().len(), 1);
    assert_eq!(
        (f.rule, f.tag.as_str(), f.count),
        (RuleKind::Sink, "wandb", 1)
    );
    assert_eq!(
        f.last_value,
        59.0 - 31.0,
        "its value: how long the oldest row has waited"
    );
    assert_eq!(
        f.message,
        "wandb: 48 rows of the event file not acknowledged at step 40, the oldest waiting \
         11 s (limit 10 s)"
    );
    // Another sink keeping up meanwhile finds nothing.
    assert!(!e.sink("mlflow", 60.0, 240, 240));
    // It catches up: the stretch ends; behind again counts again on the same finding.
    assert!(!e.sink("wandb", 61.0, 244, 244));
    for t in 62..80u32 {
        e.sink("wandb", f64::from(t), u64::from(t) * 4, 244);
    }
    let f = &e.findings()[0];
    assert_eq!((e.findings().len(), f.count), (1, 2), "{:?}", e.findings());
    // Off: never fires.
    let mut e = Evaluator::new(RuleSet::empty());
    assert!(!e.sink("wandb", 1000.0, 100, 0));
    assert!(!e.sink("wandb", 2000.0, 100, 0));
}

#[test]
fn a_sink_hovering_near_the_threshold_is_one_stretch() {
    let mut rules = RuleSet::empty();
    rules.sink = Some(SinkLag { max_lag_s: 10.0 });
    let mut e = Evaluator::new(rules);
    // Rows every second; acknowledged in bursts, 12 s late, then 8 s late, then 12 s again.
    let mut acked = 0;
    for t in 0..200u64 {
        let complete = t;
        let lag = if (t / 20) % 2 == 0 { 12 } else { 8 };
        acked = acked.max(t.saturating_sub(lag));
        e.sink("trackio", t as f64, complete, acked);
    }
    let f = e.findings();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].count, 1, "{f:?}");
}

#[test]
fn the_rules_file_and_stop_on_take_the_sink_rule() {
    let mut r = RuleSet::empty();
    apply_rules_file(
        "r.json",
        r#"{"rules": [{"kind": "sink", "max_lag_s": 30}]}"#,
        &mut r,
    )
    .unwrap();
    assert_eq!(r.sink, Some(SinkLag { max_lag_s: 30.0 }));
    let d = RuleSet::defaults();
    assert_eq!(d.sink, Some(SinkLag::default()));
    assert_eq!(SinkLag::default().max_lag_s, 300.0);
    let mut r = RuleSet::defaults();
    apply_rules_file("r.json", r#"{"off": ["sink"]}"#, &mut r).unwrap();
    assert_eq!(r.sink, None);
    assert!(!r.has(RuleKind::Sink));
    for (json, says) in [
        (
            r#"{"rules": [{"kind": "sink", "max_lag_s": 0}]}"#,
            "field \"max_lag_s\": 0 must be above 0",
        ),
        (
            r#"{"rules": [{"kind": "sink", "tag": "wandb"}]}"#,
            "field \"tag\": not a field of this rule",
        ),
    ] {
        let e = apply_rules_file("r.json", json, &mut RuleSet::empty()).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
    }
    assert_eq!(RuleKind::parse("sink"), Some(RuleKind::Sink));
    // stop_on takes it while it is on, and refuses it once it is off.
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), Some(SinkLag::default()));
    c.stop_on = vec![RuleKind::Sink];
    assert!(c.check().is_ok());
    c.health.sink = None;
    let e = c.check().unwrap_err().to_string();
    assert!(e.contains("stop_on: sink is off"), "{e}");
    let mut c = config(dir.path(), Some(SinkLag { max_lag_s: -1.0 }));
    c.stop_on = vec![];
    assert!(c.check().unwrap_err().to_string().contains("max_lag_s"));
}

/// A remote sink holding its rows until `flush` (as MLflow's does), which may hang or be slow.
struct Replica {
    name: &'static str,
    gate: Arc<Gate>,
    flush_takes: Duration,
}

impl Sink for Replica {
    fn name(&self) -> &str {
        self.name
    }
    fn is_remote(&self) -> bool {
        true
    }
    fn write(&mut self, _: &BackendStep) -> Result<(), SinkError> {
        Ok(())
    }
    fn flush(&mut self) -> Result<(), SinkError> {
        self.gate.pass();
        std::thread::sleep(self.flush_takes);
        Ok(())
    }
}

fn replica(name: &'static str, flush_takes: Duration) -> (Replica, Arc<Gate>) {
    let gate = Arc::new(Gate::default());
    let r = Replica {
        name,
        gate: gate.clone(),
        flush_takes,
    };
    (r, gate)
}

fn config(dir: &Path, sink: Option<SinkLag>) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "sink", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.backend = Backend::TensorBoard;
    c.health.sink = sink;
    c.remote_finish_timeout_secs = 5.0;
    c
}

fn sink_findings(log: &Logger) -> Vec<Finding> {
    log.health_findings()
        .into_iter()
        .filter(|f| f.rule == RuleKind::Sink)
        .collect()
}

/// Steps every 5 ms for `secs`, or until `done` says so; returns the next iteration.
fn step_for(log: &mut Logger, from: u64, secs: f64, done: impl Fn(&Logger) -> bool) -> u64 {
    let start = Instant::now();
    let mut it = from;
    while start.elapsed().as_secs_f64() < secs && !done(log) {
        log.step(&StepInput::new(it).metric("Loss/critic", 1.0))
            .unwrap();
        it += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    it
}

#[test]
fn a_sink_whose_flush_hangs_is_found_once_and_again_after_it_caught_up() {
    let dir = tempfile::tempdir().unwrap();
    let (sink, gate) = replica("mlflow", Duration::ZERO);
    let mut log = Logger::with_sinks(
        config(dir.path(), Some(SinkLag { max_lag_s: 0.5 })),
        vec![Box::new(sink)],
        Arc::new(tally::SystemClock::default()),
    )
    .unwrap();
    let mut it = step_for(&mut log, 1, 0.3, |_| false);
    assert!(sink_findings(&log).is_empty(), "a sink keeping up");
    gate.set(true);
    let hung = Instant::now();
    it = step_for(&mut log, it, 10.0, |l| !sink_findings(l).is_empty());
    let waited = hung.elapsed().as_secs_f64();
    let f = sink_findings(&log);
    assert_eq!(f.len(), 1, "{:?}", log.health_findings());
    // A row may have been complete, not yet acknowledged, a tick before the gate closed.
    assert!(
        waited >= 0.3,
        "found after {waited} s, before the threshold"
    );
    assert_eq!((f[0].tag.as_str(), f[0].count), ("mlflow", 1));
    assert!(f[0].message.starts_with("mlflow: "), "{f:?}");
    assert!(f[0]
        .message
        .contains("rows of the event file not acknowledged"));
    assert!(f[0].last_value > 0.5, "{f:?}");
    // Still hung: the same stretch, its count does not grow, its value does.
    it = step_for(&mut log, it, 0.6, |_| false);
    let g = sink_findings(&log);
    assert_eq!(g.len(), 1);
    assert_eq!(g[0].count, 1, "{g:?}");
    assert!(g[0].last_value > f[0].last_value, "{g:?}");
    // Released: it catches up, and the stretch ends.
    gate.set(false);
    it = step_for(&mut log, it, 1.0, |_| false);
    assert_eq!(sink_findings(&log)[0].count, 1);
    // Hung again: counted again, on the same finding.
    gate.set(true);
    step_for(&mut log, it, 10.0, |l| sink_findings(l)[0].count > 1);
    let h = sink_findings(&log);
    assert_eq!((h.len(), h[0].count), (1, 2), "{h:?}");
    gate.set(false);
    log.close(RunStatus::Completed).unwrap();
    let s: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap(),
    )
    .unwrap();
    let entry = s["health"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["rule"] == "sink")
        .cloned()
        .unwrap();
    assert_eq!(entry["tag"], "mlflow");
    assert_eq!(entry["count"], 2);
}

#[test]
fn sinks_that_keep_up_a_short_blip_and_a_paused_loop_find_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // A fast sink, and one whose every flush takes 20 ms (a request to a live server): both
    // keep up, the second in bigger batches; the second also stops for 0.3 s once.
    let (fast, _) = replica("wandb", Duration::ZERO);
    let (slow, gate) = replica("mlflow", Duration::from_millis(20));
    let mut log = Logger::with_sinks(
        config(dir.path(), Some(SinkLag { max_lag_s: 1.0 })),
        vec![Box::new(fast), Box::new(slow)],
        Arc::new(tally::SystemClock::default()),
    )
    .unwrap();
    let it = step_for(&mut log, 1, 1.5, |_| false);
    gate.set(true);
    let it = step_for(&mut log, it, 0.3, |_| false);
    gate.set(false);
    let it = step_for(&mut log, it, 1.5, |_| false);
    // The loop pauses (a long evaluation) past the threshold: its last step is not a row yet,
    // so no complete row waits.
    std::thread::sleep(Duration::from_millis(2500));
    step_for(&mut log, it, 0.2, |_| false);
    log.close(RunStatus::Completed).unwrap();
    assert!(
        log.health_findings().is_empty(),
        "{:?}",
        log.health_findings()
    );
}

#[test]
fn the_rule_turned_off_finds_nothing_and_stop_on_stops_the_next_step() {
    let dir = tempfile::tempdir().unwrap();
    let (sink, gate) = replica("trackio", Duration::ZERO);
    gate.set(true);
    let mut c = config(&dir.path().join("off"), None);
    c.remote_finish_timeout_secs = 0.1;
    let mut log = Logger::with_sinks(
        c,
        vec![Box::new(sink)],
        Arc::new(tally::SystemClock::default()),
    )
    .unwrap();
    step_for(&mut log, 1, 1.5, |_| false);
    gate.set(false);
    log.close(RunStatus::Completed).unwrap();
    assert!(log.health_findings().is_empty());

    let (sink, gate) = replica("trackio", Duration::ZERO);
    gate.set(true);
    let mut c = config(&dir.path().join("stop"), Some(SinkLag { max_lag_s: 0.3 }));
    c.stop_on = vec![RuleKind::Sink];
    let mut log = Logger::with_sinks(
        c,
        vec![Box::new(sink)],
        Arc::new(tally::SystemClock::default()),
    )
    .unwrap();
    let start = Instant::now();
    let mut it = 1;
    let stopped = loop {
        assert!(start.elapsed() < Duration::from_secs(10), "never stopped");
        match log.step(&StepInput::new(it).metric("Loss/critic", 1.0)) {
            Ok(()) => it += 1,
            Err(Error::HealthStop(f)) => break f,
            Err(e) => panic!("{e}"),
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(
        (stopped.rule, stopped.tag.as_str()),
        (RuleKind::Sink, "trackio")
    );
    gate.set(false);
    log.close(RunStatus::Interrupted).unwrap();
}
