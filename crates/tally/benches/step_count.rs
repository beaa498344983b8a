//! A fixed number of 60-value `Logger::step`s (`TALLY_STEP_COUNT`, 100 000 unless set), for
//! instruction counts that the load of a shared machine does not move: run it under
//! `valgrind --tool=callgrind` at two counts and divide the difference of the totals by the
//! difference of the counts (BENCHMARKS.md "Scaling (target 8, write rows)"). Built by
//! `cargo bench -p tally --bench step_count --no-run`.
#![allow(missing_docs)]

use std::hint::black_box;
use tally::{Backend, Logger, LoggerConfig, RunStatus};

#[path = "../tests/support/sixty_values.rs"]
mod sixty_values;

fn main() {
    // `cargo bench -p tally -- FILTER` passes FILTER to every bench binary: run only when it
    // names this one (or there is none), as criterion's benches do.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if !filters.is_empty() && !filters.iter().any(|f| "step_count".contains(f.as_str())) {
        return;
    }
    let n: u64 = std::env::var("TALLY_STEP_COUNT")
        .map(|v| v.parse().expect("TALLY_STEP_COUNT is a step count"))
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = LoggerConfig::new("sac", "bench", "mujoco");
    cfg.log_dir = Some(dir.path().join("run"));
    cfg.max_iterations = Some(tally::resolve::MAX_COUNT);
    cfg.backend = Backend::None;
    cfg.summary_interval_secs = 1e9;
    let mut log = Logger::new(cfg).unwrap();
    let mut input = sixty_values::record(1);
    for _ in 0..n {
        input.iteration += 1;
        input.env_steps += 4096;
        log.step(black_box(&input)).unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
}
