//! Pins the Perfetto trace: Chrome trace-event JSON, only when tracing is on
//! (docs/contract/trace.md).

use serde_json::Value;
use std::sync::Arc;
use tally::trace::{Tracer, TRACE_FILE};
use tally::{Backend, Logger, LoggerConfig, ManualClock, RunStatus, StepInput};

fn run(trace: bool) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("sac", "t", "m");
    c.log_dir = Some(dir.path().join("run"));
    c.max_iterations = Some(5);
    c.backend = Backend::None;
    c.trace = trace;
    let mut log = Logger::new(c).unwrap();
    assert_eq!(log.tracer().is_some(), trace);
    for i in 1..=5 {
        log.step(&StepInput::new(i).learner("learning", 0.01))
            .unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    let run_dir = log.run_dir().to_owned();
    (dir, run_dir)
}

fn json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn tracing_on_writes_trace_events_and_records_the_path() {
    let (_tmp, dir) = run(true);
    let trace = json(&dir.join(TRACE_FILE));
    let events = trace["traceEvents"].as_array().unwrap();
    assert_eq!(events[0]["ph"], "M");
    assert_eq!(events[0]["name"], "process_name");
    let steps: Vec<_> = events
        .iter()
        .filter(|e| e["name"] == "logger/step")
        .collect();
    assert_eq!(steps.len(), 5, "one slice per step");
    assert!(steps
        .iter()
        .all(|e| e["ph"] == "X" && e["dur"].as_f64().unwrap() >= 0.0));
    let summary = json(&dir.join("run_summary.json"));
    assert_eq!(
        summary["trace_path"],
        dir.join(TRACE_FILE).display().to_string()
    );
}

#[test]
fn tracing_off_writes_nothing() {
    let (_tmp, dir) = run(false);
    assert!(!dir.join(TRACE_FILE).exists());
    assert_eq!(
        json(&dir.join("run_summary.json"))["trace_path"],
        Value::Null
    );
}

#[test]
fn phases_are_laid_out_back_to_back_in_microseconds() {
    let clock = Arc::new(ManualClock::at(10.0));
    let t = Tracer::new("p", clock.clone());
    let tid = t.thread("learner");
    assert_eq!(t.thread("learner"), tid, "a thread is registered once");
    let start = 10.001;
    t.phases(
        tid,
        "learner",
        start,
        &[("wait", 0.002), ("learning", 0.005)],
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    t.write(&path).unwrap();
    let events = json(&path)["traceEvents"].as_array().unwrap().clone();
    let x: Vec<_> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(x.len(), 2);
    let (a, b) = (x[0], x[1]);
    assert!(
        (a["ts"].as_f64().unwrap() - 1000.0).abs() < 1e-6,
        "µs since the trace began"
    );
    assert!((a["dur"].as_f64().unwrap() - 2000.0).abs() < 1e-6);
    let a_end = a["ts"].as_f64().unwrap() + a["dur"].as_f64().unwrap();
    assert!(
        (b["ts"].as_f64().unwrap() - a_end).abs() < 1e-3,
        "back to back"
    );
    assert_eq!(
        events.iter().filter(|e| e["name"] == "thread_name").count(),
        1
    );
}
