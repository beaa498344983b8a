//! How the write side's cost grows with its inputs (BENCHMARKS.md "Scaling (target 8, write
//! rows)"): `Logger::step` with 10 → 1 000 user metrics per record, and the cross-rank
//! reduction `reduce_ranks` over 1 → 64 ranks' submissions and over 10 → 1 000 metrics.
//! Every bench is timed by the caller thread's CPU clock (waiting for a core on a shared
//! machine does not count); `bench/write_scaling.py` runs it and divides by the size.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use std::time::Duration;
use tally::reduce::reduce_ranks;
use tally::user::UserMetrics;
use tally::{Backend, RunStatus, StepInput};

#[path = "../tests/support/sixty_values.rs"]
mod sixty_values;
mod support;
use support::{bench_logger, thread_cpu};

/// User metrics per record.
const METRICS: [usize; 5] = [10, 30, 100, 300, 1000];
/// Simulated ranks.
const RANKS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
/// Ranks of the metrics-per-record reduction rows.
const RANKS_FOR_METRICS: usize = 8;

/// A record of `n` user metrics (outside the canonical groups, so accepted without
/// registration), with the iteration and env steps; rank `r` shifts the values.
fn user_record(i: u64, n: usize, r: usize) -> StepInput {
    let mut s = StepInput::new(i).env_steps(4096 * i);
    for k in 0..n {
        s = s.metric(format!("bench/metric_{k:04}"), 0.5 + (k + r) as f64 * 1e-3);
    }
    s
}

/// The caller's CPU for `Logger::step` of a record of `n` user metrics; the logger writes no
/// file (as `step.rs`'s `_thread_cpu` bench: this is the training loop thread's share).
fn step_metrics(c: &mut Criterion) {
    let mut g = c.benchmark_group("step_user_metrics_thread_cpu");
    for n in METRICS {
        let (_dir, mut log) = bench_logger(Backend::None);
        let mut input = user_record(1, n, 0);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_custom(|iters| {
                let t0 = thread_cpu();
                for _ in 0..iters {
                    input.iteration += 1;
                    input.env_steps += 4096;
                    log.step(black_box(&input)).unwrap();
                }
                thread_cpu() - t0
            })
        });
        log.close(RunStatus::Completed).unwrap();
    }
    g.finish();
}

/// `reduce_ranks` of `ranks` submissions, each the 60-value record (its values shifted per
/// rank): what rank 0 computes when the ranks' inputs are gathered to it.
fn reduce_over_ranks(c: &mut Criterion) {
    let mut g = c.benchmark_group("reduce_ranks_60_values_thread_cpu");
    let user = UserMetrics::default();
    for n in RANKS {
        let inputs: Vec<StepInput> = (0..n)
            .map(|r| {
                let mut s = sixty_values::record(7);
                for (_, v) in s.metrics.iter_mut().chain(s.learner.iter_mut()) {
                    *v += r as f64 * 1e-3;
                }
                s
            })
            .collect();
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_custom(|iters| {
                let t0 = thread_cpu();
                for _ in 0..iters {
                    black_box(reduce_ranks(black_box(&inputs), &user).unwrap());
                }
                thread_cpu() - t0
            })
        });
    }
    g.finish();
}

/// `reduce_ranks` of a fixed number of ranks with `n` user metrics each.
fn reduce_over_metrics(c: &mut Criterion) {
    let mut g = c.benchmark_group("reduce_ranks_8_ranks_user_metrics_thread_cpu");
    let user = UserMetrics::default();
    for n in METRICS {
        let inputs: Vec<StepInput> = (0..RANKS_FOR_METRICS)
            .map(|r| user_record(7, n, r))
            .collect();
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_custom(|iters| {
                let t0 = thread_cpu();
                for _ in 0..iters {
                    black_box(reduce_ranks(black_box(&inputs), &user).unwrap());
                }
                thread_cpu() - t0
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    // Short: the script runs the whole group several times for min/median/max.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = step_metrics, reduce_over_ranks, reduce_over_metrics
}
criterion_main!(benches);
