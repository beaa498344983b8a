//! Criterion bench of `Logger::step` with a 60-value SAC record (the hot path a runner pays).
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use tally::resolve::{Axis, Resolver};
use tally::{Backend, BackendStep, Profile, RunStatus, Sink, StepInput};
use tally::{Tag, TensorBoardSink};

#[path = "../tests/support/sixty_values.rs"]
mod sixty_values;
mod support;
use sixty_values::record;
use support::{bench_logger, bench_logger_health, thread_cpu};

fn bench(c: &mut Criterion) {
    for (name, backend) in [
        ("step_60_values_backend_none", Backend::None),
        ("step_60_values_tensorboard", Backend::TensorBoard),
    ] {
        let (_dir, mut log) = bench_logger(backend);
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
    let (_dir, mut log) = bench_logger(Backend::None);
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
    // The same with the health rules off: the difference is what the default rules add to a
    // step (docs/contract/health.md "In the logger"; budget 0.3 µs).
    let (_dir, mut log) = bench_logger_health(Backend::None, false);
    let mut input = record(1);
    input.iteration = 1 << 40;
    input.env_steps = 1 << 50;
    c.bench_function(
        "step_60_values_backend_none_in_place_health_off_thread_cpu",
        |b| {
            b.iter_custom(|n| {
                let t0 = thread_cpu();
                for _ in 0..n {
                    input.iteration += 1;
                    input.env_steps += 4096;
                    log.step(black_box(&input)).unwrap();
                }
                thread_cpu() - t0
            })
        },
    );
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

criterion_group!(benches, bench, writer);
criterion_main!(benches);
