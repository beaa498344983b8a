//! Pins the terminal's 2-second time-sliding window (docs/contract/panel.md).

use std::sync::Arc;
use tally::window::{Sample, TimeWindow, WINDOW_CAP};
use tally::{Backend, Logger, LoggerConfig, ManualClock, MemorySink, StepInput, Tag};

fn tag(t: &'static str) -> Tag {
    Tag::Spec(tally::schema::metric(t).unwrap())
}

fn sample(t: f64, pairs: &[(&'static str, f64)]) -> Sample {
    Sample {
        t,
        iteration: t as u64,
        values: pairs.iter().map(|(k, v)| (tag(k), *v)).collect(),
    }
}

#[test]
fn eviction_is_strict_at_exactly_two_seconds() {
    // Drop samples while sample.t < now − 2.0 (strict; docs/contract/panel.md).
    let mut w = TimeWindow::default();
    w.push(sample(100.0, &[]));
    w.push(sample(102.0, &[]));
    assert_eq!(w.len(), 2, "a sample exactly 2.0 s old stays");
    w.push(sample(102.000_001, &[]));
    assert_eq!(w.len(), 2, "the t=100 sample is now older than 2 s");
}

#[test]
fn means_are_per_key_over_the_samples_that_have_the_key() {
    let mut w = TimeWindow::default();
    w.push(sample(100.0, &[("Loss/critic", 2.0), ("Loss/actor", 10.0)]));
    w.push(sample(100.5, &[("Loss/critic", 4.0)]));
    w.push(sample(101.0, &[("Loss/critic", 6.0)]));
    let s = w.snapshot();
    assert_eq!(s.n, 3);
    assert_eq!(s.get("Loss/critic"), Some(4.0));
    assert_eq!(
        s.get("Loss/actor"),
        Some(10.0),
        "averaged only over the sample that had it"
    );
    assert_eq!(s.get("Loss/temperature"), None);
    assert_eq!(s.iteration, 101);
}

#[test]
fn the_window_never_holds_more_than_its_cap() {
    let mut w = TimeWindow::default();
    for i in 0..(WINDOW_CAP + 100) {
        w.push(sample(100.0 + i as f64 * 1e-6, &[]));
    }
    assert_eq!(w.len(), WINDOW_CAP);
}

#[test]
fn terminal_averages_two_seconds_while_the_backend_gets_the_latest_value() {
    // The panel shows 2 s time-sliding means (docs/contract/panel.md); the backend keeps
    // every iteration's unsmoothed value (docs/contract/step.md "The backend payload").
    // Samples at t=100 and t=101 → n=2; at 103.1 → n=1.
    let dir = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("sac", "t", "mujoco");
    c.log_dir = Some(dir.path().join("run"));
    c.max_iterations = Some(10);
    c.backend = Backend::None;
    let mem = MemorySink::new();
    let clock = Arc::new(ManualClock::at(100.0));
    let mut log = Logger::with_sinks(c, vec![Box::new(mem.clone())], clock.clone()).unwrap();
    let step = |i: u64, critic: f64, steps: f64| {
        StepInput::new(i)
            .metric("Loss/critic", critic)
            .iteration_time(1.0)
            .steps_this_iter(steps)
            .replay_rows_this_iter(steps * 2.5)
    };
    log.step(&step(1, 2.0, 400.0)).unwrap();
    clock.set(101.0);
    log.step(&step(2, 4.0, 800.0)).unwrap();
    let snap = log.terminal().lock().unwrap().snapshot();
    assert_eq!(snap.window.n, 2);
    assert_eq!(snap.window.get("Loss/critic"), Some(3.0));
    assert_eq!(snap.window.get("Perf/total_fps"), Some(600.0));
    assert_eq!(snap.window.get("Terminal/rows_per_sec"), Some(1500.0));
    log.flush().unwrap();
    let last = mem.steps().pop().unwrap();
    let get = |t: &str| {
        last.scalars
            .iter()
            .find(|(k, _)| k.as_str() == t)
            .map(|(_, v)| *v)
    };
    assert_eq!(get("Loss/critic"), Some(4.0));
    assert_eq!(get("Perf/total_fps"), Some(800.0));
    assert_eq!(
        get("Terminal/rows_per_sec"),
        None,
        "Rows/s is terminal-only"
    );
    clock.set(103.1);
    log.step(&step(3, 8.0, 800.0)).unwrap();
    assert_eq!(log.terminal().lock().unwrap().snapshot().window.n, 1);
}
