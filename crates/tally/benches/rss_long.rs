//! Resident memory over a long run (BENCHMARKS.md "Memory over a long run"): the 60-value
//! record stepped `TALLY_RSS_STEPS` times (10 million unless set) through a logger writing
//! TensorBoard every 10 000 iterations (as `tests/faults_rss.rs`, so the event file stays
//! small), printing VmRSS after the warm-up (a twentieth of the steps: the window and the
//! bounded histories are full by then) and at the end. Not a criterion bench: one run, one
//! figure; `cargo bench -p tally --bench rss_long` (docs/contract/performance.md "Memory over a
//! run").
#![allow(missing_docs)]

use std::time::Instant;
use tally::{Backend, Logger, LoggerConfig, RunStatus};

#[path = "../tests/support/sixty_values.rs"]
mod sixty_values;
mod support;

#[path = "../tests/support/rss.rs"]
mod rss;
use rss::rss_kib;

fn main() {
    if !support::selected("rss_long") {
        return;
    }
    let steps: u64 = std::env::var("TALLY_RSS_STEPS")
        .map(|v| v.parse().expect("TALLY_RSS_STEPS is a step count"))
        .unwrap_or(10_000_000);
    let dir = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("sac", "bench", "mujoco");
    c.log_dir = Some(dir.path().join("run"));
    c.max_iterations = Some(steps);
    c.num_envs = Some(4096);
    c.backend = Backend::TensorBoard;
    c.log_interval = 10_000;
    let mut log = Logger::new(c).unwrap();
    let warm = steps / 20;
    let mut input = sixty_values::record(1);
    let (mut start, t0) = (0, Instant::now());
    for i in 1..=steps {
        input.iteration = i;
        input.env_steps = 4096 * i;
        // Values change every step, as a training run's do.
        input.metrics[0].1 = (i % 1000) as f64 * 1e-3;
        log.step(&input).unwrap();
        if i == warm {
            log.flush().unwrap();
            start = rss_kib();
        }
    }
    log.flush().unwrap();
    let end = rss_kib();
    let secs = t0.elapsed().as_secs_f64();
    log.close(RunStatus::Completed).unwrap();
    let growth = end as i64 - start as i64;
    println!(
        "rss_long: {steps} steps of 60 values in {secs:.1} s: VmRSS {start} KiB after {warm} steps, \
         {end} KiB at the end: growth {growth:+} KiB ({:+.2} MiB; target 7: <= 5 MiB, {})",
        growth as f64 / 1024.0,
        if growth <= 5 * 1024 { "met" } else { "NOT met" }
    );
}
