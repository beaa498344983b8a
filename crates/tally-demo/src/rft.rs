//! The `rft` demo (`tally demo --algo grpo`): a Trinity-style run whose explorer thread
//! produces per-run metrics and whose trainer aggregates them with `tally-aggregate`
//! (experience → run → task → step, `docs/aggregation.md`) and logs the step-level keys
//! (`docs/contract/rft.md`).

use crate::error::Error;
use crate::workload::Noise;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;
use std::thread;
use std::time::{Duration, Instant};
use tally::{Logger, StepInput};
use tally_aggregate::{
    aggregate_eval_metrics, aggregate_metrics, calculate_task_level_metrics, BuiltinSum, MetricMap,
    TaskOptions, Value,
};

/// Tasks per training step and runs per task (Trinity's batch_size and repeat_times).
const TASKS: usize = 8;
const REPEATS: usize = 4;
/// Eval every this many steps (and at the last step), on this many held-out tasks.
const EVAL_EVERY: u64 = 10;
const EVAL_TASKS: usize = 16;

type Run = Vec<(String, Value)>;

/// One run of one task: what a workflow puts in `exp.metrics`, with aggregation suffixes.
fn run_metrics(noise: &mut Noise, skill: f64, version: u64) -> Run {
    let correct = noise.next() < skill;
    let tokens = 200.0 + 300.0 * noise.next();
    vec![
        (
            "accuracy".into(),
            Value::Number(f64::from(u8::from(correct))),
        ),
        (
            "format_score".into(),
            Value::Number(if noise.next() < 0.9 { 1.0 } else { 0.0 }),
        ),
        ("response_length".into(), Value::Number(tokens)),
        ("total_tokens:sum".into(), Value::Number(tokens.round())),
        ("model_version:last".into(), Value::Number(version as f64)),
    ]
}

fn as_rows(m: &MetricMap) -> Vec<(String, Value)> {
    m.iter()
        .map(|(k, v)| (k.clone(), Value::Number(*v)))
        .collect()
}

/// Run → task → step for training: `rollout/<metric>/<stat>`.
fn rollout_step(tasks: &[Vec<Run>]) -> MetricMap {
    let opts = TaskOptions::default();
    let task_level: Vec<Vec<(String, Value)>> = tasks
        .iter()
        .map(|runs| as_rows(&calculate_task_level_metrics(runs, false, opts)))
        .collect();
    aggregate_metrics(&task_level, "rollout", None, BuiltinSum::LeftFold)
}

/// Run → task → step for eval: `eval/<taskset>/<metric>/mean@N|std@N|best@k|worst@k`.
fn eval_step(tasks: &[Vec<Run>], taskset: &str) -> MetricMap {
    let opts = TaskOptions::default();
    let task_level: Vec<Vec<(String, Value)>> = tasks
        .iter()
        .map(|runs| as_rows(&calculate_task_level_metrics(runs, true, opts)))
        .collect();
    aggregate_eval_metrics(
        &task_level,
        &format!("eval/{taskset}"),
        None,
        false,
        BuiltinSum::LeftFold,
    )
}

fn sleep_ms(ms: f64) {
    thread::sleep(Duration::from_secs_f64(ms / 1000.0));
}

/// The training loop; `Ok(false)` when `stop` ended it early.
pub(crate) fn train(iterations: u64, log: &mut Logger, stop: &AtomicBool) -> Result<bool, Error> {
    let (tx, rx) = sync_channel::<(Vec<Vec<Run>>, f64)>(2);
    let explorer = thread::Builder::new()
        .name("explorer".into())
        .spawn(move || {
            let mut noise = Noise(0x6770);
            for step in 1..=iterations {
                let t = Instant::now();
                let skill = 0.2 + 0.6 * (step as f64 / iterations as f64);
                let tasks: Vec<Vec<Run>> = (0..TASKS)
                    .map(|_| {
                        (0..REPEATS)
                            .map(|_| run_metrics(&mut noise, skill, step - 1))
                            .collect()
                    })
                    .collect();
                sleep_ms(3.0);
                if tx.send((tasks, t.elapsed().as_secs_f64())).is_err() {
                    return;
                }
            }
        })
        .map_err(|e| Error::Run(format!("spawn explorer thread: {e}")))?;
    let mut noise = Noise(0xe7a1);
    log.status(tally::Level::Info, "Waiting for the first explore step...");
    for step in 1..=iterations {
        if stop.load(Ordering::SeqCst) {
            drop(rx);
            let _ = explorer.join();
            return Ok(false);
        }
        let t_wait = Instant::now();
        let (tasks, explore_secs) = rx
            .recv()
            .map_err(|_| Error::Run("explorer thread stopped".into()))?;
        let wait = t_wait.elapsed().as_secs_f64();
        let t_update = Instant::now();
        sleep_ms(4.0);
        let update = t_update.elapsed().as_secs_f64();
        let p = step as f64 / iterations as f64;
        let tokens = (TASKS * REPEATS) as f64 * 350.0;
        let mut input = StepInput::new(step);
        let mut push = |k: String, v: f64| input.metrics.push((k.into(), v));
        for (k, v) in rollout_step(&tasks) {
            push(k, v);
        }
        for (k, v) in [
            ("actor/pg_loss", -0.05 + 0.1 * noise.next()),
            ("actor/entropy", 1.2 - 0.6 * p),
            ("actor/kl_loss", 0.001 + 0.01 * p * noise.next()),
            ("actor/grad_norm", 0.5 + noise.next()),
            ("critic/score/mean", 0.2 + 0.6 * p),
            ("critic/advantages/mean", 0.0),
            ("response_length/mean", 350.0 + 20.0 * noise.next()),
            ("prompt_length/mean", 120.0),
            ("global_seqlen/mean", 470.0 * (TASKS * REPEATS) as f64),
            ("perf/throughput", tokens / (update + wait).max(1e-6)),
            ("time/update_actor", update),
            ("time/wait_explore_step", wait),
            ("time/explore_step", explore_secs),
            (
                "timing_per_token_ms/update_actor",
                tally_aggregate::per_token_ms(update, tokens as u64).unwrap_or(0.0),
            ),
            (
                "experience_pipeline/experience_count",
                (TASKS * REPEATS) as f64,
            ),
            ("sample/model_version/mean", (step - 1) as f64),
            ("sample/task_count", TASKS as f64),
        ] {
            push(k.to_owned(), v);
        }
        if step % EVAL_EVERY == 0 || step == iterations {
            let skill = 0.25 + 0.6 * p;
            let eval_tasks: Vec<Vec<Run>> = (0..EVAL_TASKS)
                .map(|_| {
                    (0..REPEATS)
                        .map(|_| run_metrics(&mut noise, skill, step))
                        .collect()
                })
                .collect();
            for (k, v) in eval_step(&eval_tasks, "gsm8k-eval") {
                push(k, v);
            }
        }
        log.step(&input)?;
    }
    drop(rx);
    explorer
        .join()
        .map_err(|_| Error::Run("explorer thread panicked".into()))?;
    Ok(true)
}
