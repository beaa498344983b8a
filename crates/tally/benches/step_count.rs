//! A fixed number of 60-value `Logger::step`s (`TALLY_STEP_COUNT`, 100 000 unless set), for
//! instruction counts that the load of a shared machine does not move: run it under
//! `valgrind --tool=callgrind` at two counts and divide the difference of the totals by the
//! difference of the counts (BENCHMARKS.md "Scaling (target 8, write rows)"). Built by
//! `cargo bench -p tally --bench step_count --no-run`. `TALLY_STEP_HEALTH` picks the health
//! rules: `writer` (the default rules, evaluated by the writer thread: unset), `stop_on` (on
//! the step's thread, as with `stop_on`) or `off`, so their share of a step is counted too
//! (BENCHMARKS.md "In the logger").
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
    let health = std::env::var("TALLY_STEP_HEALTH").unwrap_or_else(|_| "writer".into());
    let (_dir, mut log) = match health.as_str() {
        "writer" => support::bench_logger(Backend::None),
        "off" => support::bench_logger_health(Backend::None, false),
        "stop_on" => support::bench_logger_stop_on(Backend::None),
        other => panic!("TALLY_STEP_HEALTH is writer, stop_on or off, not {other:?}"),
    };
    let mut input = sixty_values::record(1);
    for _ in 0..n {
        input.iteration += 1;
        input.env_steps += 4096;
        log.step(black_box(&input)).unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
}
