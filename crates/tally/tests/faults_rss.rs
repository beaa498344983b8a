//! A long run's memory stays flat: nothing the logger keeps grows with the number of steps
//! (the window, reward history and messages are bounded; the event file is on disk).
//! CI logs 200 000 steps (debug); `make test-faults` logs 10 million (release) through
//! `TALLY_RSS_STEPS` and prints the resident set at start and end.

use std::path::Path;
use tally::{Backend, Logger, LoggerConfig, RunStatus, StepInput};

#[path = "support/rss.rs"]
mod rss;
use rss::rss_kib;

fn step(i: u64) -> StepInput {
    let x = (i % 1000) as f64;
    StepInput::new(i)
        .env_steps(i * 64)
        .metric("Loss/critic", 0.5 + x * 1e-3)
        .metric("Loss/actor", -0.25 + x * 1e-4)
        .metric("Loss/temperature", 1.0 - x * 1e-4)
        .episode_return(x)
        .iteration_time(0.01)
}

fn run(dir: &Path, steps: u64, interval: u64) -> (u64, u64) {
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.max_iterations = Some(steps);
    c.num_envs = Some(64);
    c.backend = Backend::TensorBoard;
    c.log_interval = interval;
    let mut log = Logger::new(c).unwrap();
    // Start after the warm-up: the window and the bounded histories are full by then.
    let warm = steps / 20;
    let mut start = 0;
    for i in 1..=steps {
        log.step(&step(i)).unwrap();
        if i == warm {
            log.flush().unwrap();
            start = rss_kib();
        }
    }
    log.flush().unwrap();
    let end = rss_kib();
    log.close(RunStatus::Completed).unwrap();
    let s: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(s["completed_iterations"], steps);
    assert_eq!(s["lost_iterations"], 0);
    (start, end)
}

#[test]
fn memory_stays_flat_over_a_long_run() {
    let steps: u64 = std::env::var("TALLY_RSS_STEPS")
        .map(|v| v.parse().expect("TALLY_RSS_STEPS is a step count"))
        .unwrap_or(200_000);
    let dir = tempfile::tempdir().unwrap();
    let (start, end) = run(dir.path(), steps, 10_000);
    println!(
        "{steps} steps: VmRSS {start} KiB after {} steps, {end} KiB at the end ({:+} KiB)",
        steps / 20,
        end as i64 - start as i64
    );
    // A per-step leak of even 64 bytes is 12 MiB over 200 000 steps; allocator noise is far
    // less than 8 MiB.
    assert!(
        end <= start + 8 * 1024,
        "VmRSS grew from {start} KiB to {end} KiB over {steps} steps"
    );
}
