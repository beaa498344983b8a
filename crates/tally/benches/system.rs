//! System metrics' cost (docs/contract/system-metrics.md): a 60-value step with the sampler off
//! and on (at 0.1 s, 50 times the default rate, so any cost would show), and one sample's CPU
//! time on the sampling thread, from which its share of a core at the default 5 s follows.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use tally::{Backend, Logger, LoggerConfig, RunStatus};

#[path = "../tests/support/sixty_values.rs"]
mod sixty_values;
mod support;
use sixty_values::record;
use support::thread_cpu;

fn logger(system: bool) -> (tempfile::TempDir, Logger) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = LoggerConfig::new("sac", "bench", "mujoco");
    cfg.log_dir = Some(dir.path().join("run"));
    cfg.max_iterations = Some(tally::resolve::MAX_COUNT);
    cfg.backend = Backend::TensorBoard;
    cfg.summary_interval_secs = 1e9;
    cfg.system_metrics = system;
    cfg.system_interval_secs = 0.1;
    let log = Logger::new(cfg).unwrap();
    (dir, log)
}

fn bench(c: &mut Criterion) {
    for (name, on) in [
        ("step_60_values_tensorboard_system_off_thread_cpu", false),
        ("step_60_values_tensorboard_system_on_0.1s_thread_cpu", true),
    ] {
        let (_dir, mut log) = logger(on);
        let mut input = record(1);
        input.iteration = 1 << 40;
        input.env_steps = 1 << 50;
        c.bench_function(name, |b| {
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
    // One sample as the sampling thread takes it: /proc read and parsed, rates derived (and
    // NVML queried, when built with it and a GPU is there).
    let dir = tempfile::tempdir().unwrap();
    let (mut probe, _) = tally::system::Probe::new(dir.path().to_owned());
    c.bench_function("system_sample_thread_cpu", |b| {
        b.iter_custom(|n| {
            let t0 = thread_cpu();
            for _ in 0..n {
                black_box(probe.sample(0.0));
            }
            thread_cpu() - t0
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
