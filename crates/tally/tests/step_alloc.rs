//! A steady-state `Logger::step` allocates nothing (docs/contract/step.md "The hot path"). Alone
//! in its test binary so no other test allocates while the count runs; the count is global, so
//! it covers the writer thread too.

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::sync::Arc;
use tally::{Backend, Logger, LoggerConfig, ManualClock, MemorySink, RunStatus, StepInput};

#[path = "support/sixty_values.rs"]
mod sixty_values;
use sixty_values::record;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn config(dir: &std::path::Path, log_interval: u64, queue: usize) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "alloc", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.backend = Backend::None;
    c.log_interval = log_interval;
    c.queue_capacity = queue;
    c.summary_interval_secs = 1e9;
    // The system sampler is a thread of its own whose reads of /proc allocate, on its own clock
    // (docs/contract/step.md "The hot path"): off, so the count is the step's.
    c.system_metrics = false;
    c
}

/// Steps a logger with one input whose iteration and env steps advance, 50 ms apart (the 2 s
/// window then holds 41 samples and each step evicts one).
struct Loop {
    input: StepInput,
    clock: Arc<ManualClock>,
}

impl Loop {
    fn new() -> Self {
        Loop {
            input: record(1),
            clock: Arc::new(ManualClock::at(100.0)),
        }
    }

    fn step(&mut self, log: &mut Logger) {
        self.input.iteration += 1;
        self.input.env_steps += 4096;
        self.clock.advance(0.05);
        log.step(&self.input).unwrap();
    }
}

/// The allocations and reallocations since `region` began.
fn count(region: &Region<'_, System>) -> usize {
    let c = region.change();
    c.allocations + c.reallocations
}

#[test]
fn a_steady_state_step_allocates_nothing() {
    // One test: the count is global (every thread's), and tests run in parallel.
    for log_interval in [1, 3] {
        // The writer keeps up (a flush between steps): no step allocates, on the caller's
        // thread or the writer's, whether it is written or skipped by log_interval.
        let tmp = tempfile::tempdir().unwrap();
        let mut l = Loop::new();
        let mut log = Logger::with_sinks(
            config(tmp.path(), log_interval, 1024),
            vec![],
            l.clock.clone(),
        )
        .unwrap();
        for _ in 0..100 {
            l.step(&mut log);
        }
        log.flush().unwrap();
        let mut allocations = 0;
        for _ in 0..2000 {
            let region = Region::new(GLOBAL);
            l.step(&mut log);
            allocations += count(&region);
            log.flush().unwrap();
        }
        assert_eq!(allocations, 0, "2000 steps, log_interval {log_interval}");
        log.close(RunStatus::Completed).unwrap();
    }

    // The writer lags as it may (no flush): a step makes a payload buffer only when none has
    // come back, so the run makes at most queue capacity + 2 of them, whatever the lag.
    let queue = 4;
    let tmp = tempfile::tempdir().unwrap();
    let mut l = Loop::new();
    let mut log =
        Logger::with_sinks(config(tmp.path(), 1, queue), vec![], l.clock.clone()).unwrap();
    for _ in 0..100 {
        l.step(&mut log);
    }
    let region = Region::new(GLOBAL);
    for _ in 0..5000 {
        l.step(&mut log);
    }
    let lagging = count(&region);
    assert!(lagging <= queue + 2, "{lagging} allocations in 5000 steps");
    log.close(RunStatus::Completed).unwrap();

    // A writer held in its sink returns no buffer: each step past the spares then makes its
    // payload buffer, in one allocation, not one per doubling as its values are pushed.
    let queue = 8;
    let tmp = tempfile::tempdir().unwrap();
    let mut l = Loop::new();
    let gate = Arc::new(std::sync::Mutex::new(()));
    let mut log = Logger::with_sinks(
        config(tmp.path(), 1, queue),
        vec![Box::new(Gated(gate.clone()))],
        l.clock.clone(),
    )
    .unwrap();
    for _ in 0..100 {
        l.step(&mut log);
        log.flush().unwrap();
    }
    let held = gate.lock().unwrap();
    let region = Region::new(GLOBAL);
    for _ in 0..queue {
        l.step(&mut log);
    }
    let fresh = count(&region);
    drop(held);
    log.close(RunStatus::Completed).unwrap();
    assert!(
        (1..=queue).contains(&fresh),
        "{fresh} allocations in {queue} steps with the writer held"
    );

    // The count is live: a memory sink copies every step it receives.
    let tmp = tempfile::tempdir().unwrap();
    let mut l = Loop::new();
    let mem = MemorySink::new();
    let mut log = Logger::with_sinks(
        config(tmp.path(), 1, 1024),
        vec![Box::new(mem.clone())],
        l.clock.clone(),
    )
    .unwrap();
    for _ in 0..100 {
        l.step(&mut log);
    }
    let region = Region::new(GLOBAL);
    for _ in 0..100 {
        l.step(&mut log);
    }
    log.flush().unwrap();
    let copies = count(&region);
    log.close(RunStatus::Completed).unwrap();
    assert!(copies >= 100, "{copies}");
    assert_eq!(mem.steps().len(), 200);
}

/// A sink whose writes wait for `0`'s lock: the writer thread held while a test steps.
struct Gated(Arc<std::sync::Mutex<()>>);

impl tally::Sink for Gated {
    fn name(&self) -> &str {
        "gated"
    }

    fn write(&mut self, _: &tally::BackendStep) -> Result<(), tally::SinkError> {
        drop(self.0.lock());
        Ok(())
    }
}
