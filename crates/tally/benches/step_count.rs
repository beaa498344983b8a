//! A fixed number of 60-value `Logger::step`s (`TALLY_STEP_COUNT`, 100 000 unless set), for
//! instruction counts that the load of a shared machine does not move: run it under
//! `valgrind --tool=callgrind` at two counts and divide the difference of the totals by the
//! difference of the counts (BENCHMARKS.md "Scaling (target 8, write rows)"). Built by
//! `cargo bench -p tally --bench step_count --no-run`.
#![allow(missing_docs)]

use std::hint::black_box;
use tally::{Backend, RunStatus};

#[path = "../tests/support/sixty_values.rs"]
mod sixty_values;
mod support;

fn main() {
    if !support::selected("step_count") {
        return;
    }
    let n: u64 = std::env::var("TALLY_STEP_COUNT")
        .map(|v| v.parse().expect("TALLY_STEP_COUNT is a step count"))
        .unwrap_or(100_000);
    let (_dir, mut log) = support::bench_logger(Backend::None);
    let mut input = sixty_values::record(1);
    for _ in 0..n {
        input.iteration += 1;
        input.env_steps += 4096;
        log.step(black_box(&input)).unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
}
