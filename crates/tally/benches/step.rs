//! Criterion bench of `Logger::step` with a 60-value SAC record (the hot path a runner pays).
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::Duration;
use tally::{Backend, Logger, LoggerConfig, RunStatus, StepInput};

/// A realistic 60-value SAC-family iteration: 20 metrics, 11 learner phases, 11 collector
/// phases, 5 flight gauges, 8 reward terms, and the dedicated fields.
fn record(i: u64) -> StepInput {
    let mut s = StepInput::new(i).env_steps(4096 * i);
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

fn bench(c: &mut Criterion) {
    for (name, backend) in [
        ("step_60_values_backend_none", Backend::None),
        ("step_60_values_tensorboard", Backend::TensorBoard),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = LoggerConfig::new("sac", "bench", "mujoco");
        cfg.log_dir = Some(dir.path().join("run"));
        // Unbounded: the largest iteration the logger accepts.
        cfg.max_iterations = Some(tally::resolve::MAX_COUNT);
        cfg.backend = backend;
        cfg.summary_interval_secs = 1e9;
        let mut log = Logger::new(cfg).unwrap();
        let inputs: Vec<StepInput> = (1..=1000).map(record).collect();
        let mut i = 0u64;
        c.bench_function(name, |b| {
            b.iter(|| {
                i += 1;
                let mut input = inputs[(i % 1000) as usize].clone();
                input.iteration = i;
                input.env_steps = 4096 * i;
                log.step(black_box(&input)).unwrap();
            })
        });
        log.close(RunStatus::Completed).unwrap();
    }
    // `Logger::step` alone: one input advanced in place, no per-iteration clone of it (the
    // benches above also pay for cloning the input's maps).
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = LoggerConfig::new("sac", "bench", "mujoco");
    cfg.log_dir = Some(dir.path().join("run"));
    cfg.max_iterations = Some(tally::resolve::MAX_COUNT);
    cfg.backend = Backend::None;
    cfg.summary_interval_secs = 1e9;
    let mut log = Logger::new(cfg).unwrap();
    let mut input = record(1);
    c.bench_function("step_60_values_backend_none_in_place", |b| {
        b.iter(|| {
            input.iteration += 1;
            input.env_steps += 4096;
            log.step(black_box(&input)).unwrap();
        })
    });
    // The same, timed by the caller thread's CPU clock: what the step costs the training loop's
    // thread, steady on a shared machine where wall time also counts waiting for a core.
    let mut input = record(1);
    input.iteration = 1 << 40;
    input.env_steps = 1 << 50;
    c.bench_function("step_60_values_backend_none_in_place_thread_cpu", |b| {
        b.iter_custom(|n| {
            let t0 = thread_cpu();
            for _ in 0..n {
                input.iteration += 1;
                input.env_steps += 4096;
                log.step(black_box(&input)).unwrap();
            }
            thread_cpu() - t0
        })
    });
    log.close(RunStatus::Completed).unwrap();
}

fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

criterion_group!(benches, bench);
criterion_main!(benches);
