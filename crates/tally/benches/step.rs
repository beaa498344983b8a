//! Criterion bench of `Logger::step` with a 60-value SAC record (the hot path a runner pays).
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::Duration;
use tally::resolve::{Axis, Resolver};
use tally::{Backend, BackendStep, Logger, LoggerConfig, Profile, RunStatus, Sink, StepInput};
use tally::{Tag, TensorBoardSink};

#[path = "../tests/support/sixty_values.rs"]
mod sixty_values;
use sixty_values::record;

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

/// The writer thread's work per step: the TensorBoard sink writing one step's payload (the
/// persisted values of the 60-value record, resolved as the logger resolves them) to an event
/// file, timed by this thread's CPU clock. Scalars per second = payload length / time per step.
fn writer(c: &mut Criterion) {
    let input = record(1);
    let resolved = Resolver::new(Profile::SacFamily, None)
        .resolve(&input, Axis::default(), Vec::new())
        .unwrap();
    let scalars: Vec<(Tag, f64)> = resolved
        .values
        .entries()
        .iter()
        .filter(|(t, _)| t.persisted())
        .cloned()
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut sink = TensorBoardSink::create(dir.path(), Default::default()).unwrap();
    let mut step = BackendStep {
        iteration: 1,
        step: 4096,
        wall_time: 1.7e9,
        scalars,
    };
    let name = format!(
        "writer_tensorboard_{}_scalars_thread_cpu",
        step.scalars.len()
    );
    c.bench_function(&name, |b| {
        b.iter_custom(|n| {
            let t0 = thread_cpu();
            for _ in 0..n {
                step.iteration += 1;
                step.step += 4096;
                sink.write(black_box(&step)).unwrap();
            }
            thread_cpu() - t0
        })
    });
    sink.close().unwrap();
}

fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

criterion_group!(benches, bench, writer);
criterion_main!(benches);
