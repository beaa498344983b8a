//! The health rules in a running logger (docs/contract/health.md "In the logger"): findings
//! kept on the logger, in `run_summary.json`, in the event file as text, `stop_on`, user
//! rules, the defaults off, and a stall found by the writer's timer without a step.

use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tally::health::{Rule, RuleKind, RuleSet, TagRule, Tags};
use tally::tfevents::proto::{event, summary};
use tally::tfevents::EventReader;
use tally::{Backend, Error, Logger, LoggerConfig, ManualClock, RunStatus, StepInput};

fn config(dir: &std::path::Path) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "health", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.backend = Backend::TensorBoard;
    c
}

fn logger(c: LoggerConfig) -> (Logger, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::at(100.0));
    let log = Logger::with_sinks(c, Vec::new(), clock.clone()).unwrap();
    (log, clock)
}

fn step(log: &mut Logger, clock: &ManualClock, it: u64, critic: f64) -> tally::Result<()> {
    clock.advance(0.05);
    log.step(&StepInput::new(it).metric("Loss/critic", critic))
}

fn summary(log: &Logger) -> Value {
    let text = std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every text summary in the event file: (step, tag, text).
fn texts(path: &std::path::Path) -> Vec<(i64, String, String)> {
    let file = std::fs::File::open(path).unwrap();
    let events = EventReader::new(std::io::BufReader::new(file))
        .read_to_end()
        .unwrap();
    let mut out = Vec::new();
    for e in events {
        let Some(event::What::Summary(s)) = e.what else {
            continue;
        };
        for v in s.value {
            if let Some(summary::value::Value::Tensor(t)) = &v.value {
                if let Some(b) = t.string_val.first() {
                    out.push((
                        e.step,
                        v.tag.clone(),
                        String::from_utf8_lossy(b).into_owned(),
                    ));
                }
            }
        }
    }
    out
}

/// Scalar steps in the event file.
fn scalar_steps(path: &std::path::Path) -> Vec<i64> {
    let file = std::fs::File::open(path).unwrap();
    let mut r = EventReader::new(std::io::BufReader::new(file)).into_scalars();
    let mut steps = Vec::new();
    while let Some(s) = r.read_scalar().unwrap() {
        if &*s.tag == "Loss/critic" {
            steps.push(s.step);
        }
    }
    steps
}

#[test]
fn a_nan_is_a_finding_in_the_logger_the_summary_and_the_event_file() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, clock) = logger(config(dir.path()));
    // Without stop_on the writer thread evaluates: a flush waits for it.
    assert!(log.health().unwrap().on_writer());
    for it in 1..=4 {
        step(&mut log, &clock, it, 1.0).unwrap();
    }
    log.flush().unwrap();
    assert!(log.health_findings().is_empty());
    step(&mut log, &clock, 5, f64::NAN).unwrap();
    step(&mut log, &clock, 6, f64::NAN).unwrap();
    step(&mut log, &clock, 7, 1.0).unwrap();
    log.flush().unwrap();
    let f = log.health_findings();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (
            f[0].rule,
            f[0].tag.as_str(),
            f[0].first_step,
            f[0].last_step,
            f[0].count
        ),
        (RuleKind::Nonfinite, "Loss/critic", 5, 6, 2)
    );
    let file = log.event_file().unwrap().to_owned();
    log.close(RunStatus::Completed).unwrap();
    let s = summary(&log);
    let h = s["health"].as_array().unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0]["rule"], "nonfinite");
    assert_eq!(h[0]["tag"], "Loss/critic");
    assert_eq!(
        (h[0]["first_step"].as_i64(), h[0]["last_step"].as_i64()),
        (Some(5), Some(6))
    );
    assert_eq!(h[0]["count"], 2);
    assert_eq!(h[0]["last_value"], "NaN");
    // Written once, at the step it first fired at, under the text plugin's tag.
    let t = texts(&file);
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(t[0].0, 5);
    assert_eq!(t[0].1, "tally/health/text_summary");
    assert!(
        t[0].2.contains("nonfinite") && t[0].2.contains("Loss/critic"),
        "{t:?}"
    );
    assert_eq!(scalar_steps(&file), vec![1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn stop_on_refuses_the_next_step_once_and_close_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.stop_on = vec![RuleKind::Nonfinite];
    let (mut log, clock) = logger(c);
    // With stop_on the step's thread evaluates: the next step sees the finding, no flush.
    assert!(!log.health().unwrap().on_writer());
    step(&mut log, &clock, 1, 1.0).unwrap();
    step(&mut log, &clock, 2, f64::INFINITY).unwrap();
    let e = step(&mut log, &clock, 3, 1.0).unwrap_err();
    let Error::HealthStop(f) = &e else {
        panic!("{e:?}")
    };
    assert_eq!((f.rule, f.first_step), (RuleKind::Nonfinite, 2));
    assert!(e.to_string().contains("Loss/critic"), "{e}");
    // The refused step changed nothing: the loop may go on (or close).
    step(&mut log, &clock, 3, 1.0).unwrap();
    let file = log.event_file().unwrap().to_owned();
    log.close(RunStatus::Interrupted).unwrap();
    assert_eq!(scalar_steps(&file), vec![1, 2, 3]);
    let s = summary(&log);
    assert_eq!(s["completed_iterations"], 3);
    assert_eq!(s["health"][0]["last_value"], "Infinity");
}

#[test]
fn the_defaults_off_find_nothing_and_a_user_rule_fires() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.health = RuleSet::empty();
    let (mut log, clock) = logger(c);
    step(&mut log, &clock, 1, f64::NAN).unwrap();
    assert!(log.health().is_none());
    log.close(RunStatus::Completed).unwrap();
    assert!(summary(&log).get("health").is_none());

    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.health.turn_off(RuleKind::Nonfinite);
    c.health.tag_rules.push(TagRule {
        rule: Rule::Above { value: 2.0 },
        tags: Tags::Globs(vec!["Loss/*".into()]),
    });
    let (mut log, clock) = logger(c);
    step(&mut log, &clock, 1, f64::NAN).unwrap();
    step(&mut log, &clock, 2, 3.0).unwrap();
    log.flush().unwrap();
    let f = log.health_findings();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].rule, f[0].first_step), (RuleKind::Above, 2));
}

#[test]
fn a_loop_that_stops_stepping_gets_a_stall_from_the_writer_timer() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    let stall = c.health.stall.as_mut().unwrap();
    stall.min_gap_s = 0.2;
    stall.min_history = 3;
    c.stop_on = vec![RuleKind::Stall];
    let (mut log, clock) = logger(c);
    for it in 1..=6 {
        step(&mut log, &clock, it, 1.0).unwrap();
    }
    // No step comes; the run's clock moves past the threshold.
    clock.advance(5.0);
    let t0 = Instant::now();
    while log.health_findings().is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(5), "no stall found");
        std::thread::sleep(Duration::from_millis(10));
    }
    let f = log.health_findings();
    assert_eq!(
        (f[0].rule, f[0].first_step, f[0].count),
        (RuleKind::Stall, 6, 1)
    );
    // The panel was told at once, without a step.
    let told = log.terminal().lock().unwrap().snapshot();
    assert!(
        told.messages
            .iter()
            .any(|m| m.text.contains("health: stall")),
        "{:?}",
        told.messages
    );
    assert_eq!(told.health.as_ref().map(|f| f.rule), Some(RuleKind::Stall));
    let e = step(&mut log, &clock, 7, 1.0).unwrap_err();
    assert!(matches!(e, Error::HealthStop(_)), "{e:?}");
    let file = log.event_file().unwrap().to_owned();
    log.close(RunStatus::Interrupted).unwrap();
    let t = texts(&file);
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(t[0].0, 6);
    assert!(t[0].2.contains("stall"), "{t:?}");
}

#[test]
fn a_value_beyond_float32_is_nonfinite_as_the_event_file_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, clock) = logger(config(dir.path()));
    step(&mut log, &clock, 1, 1.0).unwrap();
    step(&mut log, &clock, 2, 1e39).unwrap();
    log.flush().unwrap();
    let f = log.health_findings();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].rule, f[0].first_step), (RuleKind::Nonfinite, 2));
    assert_eq!(f[0].last_value, f64::INFINITY);
}

#[test]
fn a_bad_rule_or_stop_on_is_refused_when_the_logger_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.health = RuleSet::defaults().with(TagRule::above(&["charts/k?"], 0.05));
    let e = Logger::with_sinks(c, Vec::new(), Arc::new(ManualClock::at(0.0)))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("charts/k?"), "{e}");
    let mut c = config(dir.path());
    c.health.turn_off(RuleKind::Stall);
    c.stop_on = vec![RuleKind::Stall];
    let e = Logger::with_sinks(c, Vec::new(), Arc::new(ManualClock::at(0.0)))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("stop_on: stall"), "{e}");
    assert!(!dir.path().join("run").exists());
}
