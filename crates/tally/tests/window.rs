//! Pins the terminal's 2-second time-sliding window (docs/contract/panel.md).

use std::sync::Arc;
use tally::window::{Sample, TimeWindow, SLOTS, SLOT_SECS};
use tally::{Backend, Logger, LoggerConfig, ManualClock, MemorySink, StepInput, Tag};

fn tag(t: &'static str) -> Tag {
    Tag::Spec(tally::schema::metric(t).unwrap())
}

fn sample(t: f64, pairs: &[(&'static str, f64)]) -> Sample {
    sample_at(t, t as u64, pairs)
}

fn sample_at(t: f64, iteration: u64, pairs: &[(&'static str, f64)]) -> Sample {
    Sample {
        t,
        iteration,
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
fn at_2000_iterations_per_second_the_window_still_covers_two_seconds() {
    // 10 s of samples 0.5 ms apart; each holds its own iteration number as the value. The
    // exact window at the end is every sample not older than newest − 2 s.
    let rate = 2000.0;
    let mut w = TimeWindow::default();
    let total = 20_000_u64;
    let mut values = Vec::new();
    for i in 0..=total {
        let t = 100.0 + i as f64 / rate;
        w.push(sample_at(t, i, &[("Loss/critic", i as f64)]));
        values.push((t, i as f64));
    }
    let newest = values.last().unwrap().0;
    let exact: Vec<f64> = values
        .iter()
        .filter(|(t, _)| *t >= newest - 2.0)
        .map(|(_, v)| *v)
        .collect();
    let exact_mean = exact.iter().sum::<f64>() / exact.len() as f64;
    let s = w.snapshot();
    // The window is summed in time slots: it may hold the older samples of the one slot
    // the 2 s boundary falls in, never fewer samples than the exact window.
    let slot_extra = (rate * SLOT_SECS).ceil() as usize;
    assert!(
        s.n >= exact.len() && s.n <= exact.len() + slot_extra,
        "n = {} for an exact window of {} samples",
        s.n,
        exact.len()
    );
    let mean = s.get("Loss/critic").unwrap();
    // Up to `slot_extra` older samples, each at most 2 s (4000 iterations) below the rest.
    let bound = slot_extra as f64 * 2.0 * rate / exact.len() as f64;
    assert!(
        (mean - exact_mean).abs() <= bound,
        "window mean {mean} vs exact mean of the last 2 s {exact_mean} (bound {bound})"
    );
    assert_eq!(s.iteration, total);
}

#[test]
fn the_window_memory_is_bounded_however_fast_samples_come() {
    let mut w = TimeWindow::default();
    for i in 0..200_000_u64 {
        w.push(sample_at(
            100.0 + i as f64 * 1e-6,
            i,
            &[("Loss/critic", 1.0)],
        ));
    }
    assert_eq!(w.len(), 200_000, "0.2 s of samples: all in the window");
    assert!(w.slot_count() <= SLOTS + 1, "{} slots held", w.slot_count());
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
