//! Criterion benches: a realistic eval step (500 tasks × 16 runs × 8 metrics) and the numerics.
#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use tally_aggregate::numeric::np_sum;
use tally_aggregate::{
    aggregate_eval_metrics, bootstrap_metric, calculate_task_level_metrics, BuiltinSum, Estimator,
    MetricMap, Reducer, TaskOptions, Value,
};

const TASKS: usize = 500;
const RUNS: usize = 16;
const METRICS: usize = 8;

/// A deterministic xorshift so the bench input is fixed without a dev-dependency.
struct XorShift(u64);

impl XorShift {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

type Dict = Vec<(String, Value)>;

/// One task's `task.metrics`: 16 run dicts (8 metrics + run time) and the task-time dict.
fn eval_step() -> Vec<Vec<Dict>> {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    (0..TASKS)
        .map(|_| {
            let mut runs: Vec<Dict> = (0..RUNS)
                .map(|_| {
                    let mut d: Dict = (0..METRICS)
                        .map(|m| (format!("metric_{m}"), Value::Number(rng.next_f64())))
                        .collect();
                    d.push(("time/run_execution".into(), Value::Number(rng.next_f64())));
                    d
                })
                .collect();
            runs.push(vec![(
                "time/task_execution".into(),
                Value::Number(rng.next_f64()),
            )]);
            runs
        })
        .collect()
}

fn run_step(tasks: &[Vec<Dict>], estimator: Estimator) -> MetricMap {
    let options = TaskOptions {
        builtin_sum: BuiltinSum::Neumaier,
        estimator,
    };
    let task_metrics: Vec<Vec<(String, Value)>> = tasks
        .iter()
        .map(|t| {
            calculate_task_level_metrics(t, true, options)
                .into_iter()
                .map(|(k, v)| (k, Value::Number(v)))
                .collect()
        })
        .collect();
    aggregate_eval_metrics(
        &task_metrics,
        "eval/bench",
        None,
        false,
        BuiltinSum::Neumaier,
    )
}

fn benches(c: &mut Criterion) {
    let tasks = eval_step();
    let mut g = c.benchmark_group("eval_step_500x16x8");
    g.sample_size(10);
    g.bench_function("bootstrap", |b| {
        b.iter(|| run_step(black_box(&tasks), Estimator::Bootstrap))
    });
    g.bench_function("exact", |b| {
        b.iter(|| run_step(black_box(&tasks), Estimator::Exact))
    });
    g.finish();

    let data: Vec<f64> = (0..16).map(|i| i as f64 / 16.0).collect();
    c.bench_function("bootstrap_metric_n16_k16", |b| {
        b.iter(|| {
            bootstrap_metric(
                black_box(&data),
                16,
                &[Reducer::Max, Reducer::Min],
                1000,
                42,
            )
        })
    });
    let big: Vec<f64> = (0..1000).map(|i| (i as f64).sin()).collect();
    c.bench_function("np_sum_1000", |b| b.iter(|| np_sum(black_box(&big))));
}

criterion_group!(aggregate, benches);
criterion_main!(aggregate);
