//! The writer thread writing steady-state steps to the TensorBoard event file allocates
//! nothing (docs/contract/step.md "The hot path"). Alone in its test binary so no other test
//! allocates while the count runs; the count is global, so it covers the writer thread.

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::sync::Arc;
use tally::{Backend, Logger, LoggerConfig, ManualClock, RunStatus};

#[path = "support/sixty_values.rs"]
mod sixty_values;
use sixty_values::record;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn steps_written_to_the_event_file_allocate_nothing_on_either_thread() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("sac", "alloc", "mujoco");
    c.log_dir = Some(tmp.path().join("run"));
    c.backend = Backend::TensorBoard;
    c.queue_capacity = 4;
    c.summary_interval_secs = 1e9;
    let clock = Arc::new(ManualClock::at(100.0));
    let mut log = Logger::with_sinks(c, vec![], clock.clone()).unwrap();
    let mut input = record(1);
    let mut step = |log: &mut Logger| {
        input.iteration += 1;
        input.env_steps += 4096;
        clock.advance(0.05);
        log.step(&input).unwrap();
    };
    for _ in 0..100 {
        step(&mut log);
    }
    let region = Region::new(GLOBAL);
    for _ in 0..5000 {
        step(&mut log);
    }
    let c = region.change();
    // A payload buffer is made only when none has come back from the writer: at most the
    // queue's capacity plus two over the run, whatever the writer's lag.
    let made = c.allocations + c.reallocations;
    assert!(made <= 4 + 2, "{made} allocations in 5000 written steps");
    log.close(RunStatus::Completed).unwrap();
    let file = std::fs::read_dir(tmp.path().join("run"))
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("events.out.tfevents.")
        })
        .expect("an event file");
    let scalars = tally::tfevents::read_scalars_from_file(file.path()).unwrap();
    assert_eq!(
        scalars.iter().filter(|s| s.tag == "Loss/critic").count(),
        5100
    );
}
