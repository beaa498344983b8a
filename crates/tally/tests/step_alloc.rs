//! A steady-state `Logger::step` allocates nothing (docs/contract/step.md "The hot path"). Alone
//! in its test binary so no other test allocates while the count runs; the count is global, so
//! it covers the writer thread too.

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::sync::Arc;
use tally::{Backend, Logger, LoggerConfig, ManualClock, MemorySink, RunStatus, StepInput};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// 60 values: 20 metrics (3 of a family), 10 learner and 11 collector phases, 5 gauges, 8
/// reward terms, the dedicated fields (the bench's record).
fn record() -> StepInput {
    let mut s = StepInput::new(1).env_steps(4096);
    for t in [
        "Loss/critic",
        "Loss/actor",
        "Loss/temperature",
        "Loss/entropy",
        "Policy/temperature",
        "Train/actor_gradient_norm",
        "Train/critic_gradient_norm",
        "Train/target_q_max",
        "Train/target_q_min",
        "Train/reward_scale_std",
        "Train/replay_ingress_depth",
        "Train/replay_ingress_occupancy",
        "Train/replay_ingress_high_water",
        "Train/replay_ingress_backpressure_wait_ms",
        "Train/replay_ingress_dropped_batches",
        "Perf/dp_gradient_sync_ms_per_rank",
        "Perf/dp_gradient_sync_calls_per_rank",
        "Episode_Termination/time_out",
        "Episode_Termination/base_contact",
        "Episode_Termination/joint_limit",
    ] {
        s = s.metric(t, 1.5);
    }
    for p in [
        "collector_wait",
        "inference",
        "collector_release",
        "replay_batch_wait",
        "replay_sample",
        "learning",
        "inference_h2d",
        "inference_forward",
        "inference_d2h",
        "replay_ingress_h2d_submit",
    ] {
        s = s.learner(p, 0.001);
    }
    for p in [
        "inference_request",
        "learner_action_wait",
        "env_step",
        "env_step_action_validate",
        "env_step_apply_action",
        "env_step_backend",
        "env_step_update_state",
        "env_step_reset_done",
        "transition_extract",
        "replay_write",
        "metrics_publish",
    ] {
        s = s.collector(p, 0.001);
    }
    for g in [
        "queue_depth",
        "in_flight",
        "max_in_flight",
        "publication_lag",
        "max_publication_lag",
    ] {
        s = s.collector_inference(g, 1.0);
    }
    for r in [
        "lin_vel",
        "ang_vel",
        "action_rate",
        "air_time",
        "orientation",
        "torques",
        "collision",
        "stand_still",
    ] {
        s = s.reward(r, 0.1);
    }
    s.iteration_time(0.02)
        .episode_return(3.0)
        .episode_length(200.0)
        .timeout_rate(0.1)
        .steps_this_iter(4096.0)
}

fn config(dir: &std::path::Path, log_interval: u64, queue: usize) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "alloc", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.backend = Backend::None;
    c.log_interval = log_interval;
    c.queue_capacity = queue;
    c.summary_interval_secs = 1e9;
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
            input: record(),
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
