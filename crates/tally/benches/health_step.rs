//! What the default health rules add to `Logger::step` (docs/contract/health.md "In the
//! logger"; budget 0.3 µs on the 60-value step): two loggers, rules on and off, stepped in
//! alternating blocks of 2 000 steps, each block timed by this thread's CPU clock, so both
//! see the same load of a shared machine. Prints the median per-step cost of each and the
//! median of the paired differences, with the rules evaluated on the step's thread (a run
//! with `stop_on`) and by the writer thread (without). `cargo bench -p tally --bench
//! health_step`.
#![allow(missing_docs)]

use std::hint::black_box;
use tally::{Backend, Logger, RunStatus, StepInput};

#[path = "../tests/support/sixty_values.rs"]
mod sixty_values;
mod support;

const BLOCK: u32 = 2_000;
const PAIRS: usize = 150;

fn block(log: &mut Logger, input: &mut StepInput) -> f64 {
    let t0 = support::thread_cpu();
    for _ in 0..BLOCK {
        input.iteration += 1;
        input.env_steps += 4096;
        log.step(black_box(input)).unwrap();
    }
    (support::thread_cpu() - t0).as_secs_f64() * 1e9 / f64::from(BLOCK)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The default rules evaluated on the step's thread (as with `stop_on`) or by the writer
/// thread (without), against none.
fn main() {
    if !support::selected("health_step") {
        return;
    }
    for stop_on in [true, false] {
        pair(stop_on);
    }
}

fn logger(health: Option<bool>) -> (tempfile::TempDir, Logger) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = tally::LoggerConfig::new("sac", "bench", "mujoco");
    cfg.log_dir = Some(dir.path().join("run"));
    cfg.max_iterations = Some(tally::resolve::MAX_COUNT);
    cfg.backend = Backend::None;
    cfg.summary_interval_secs = 1e9;
    match health {
        None => cfg.health = tally::health::RuleSet::empty(),
        Some(true) => cfg.stop_on = vec![tally::health::RuleKind::Nonfinite],
        Some(false) => {}
    }
    (dir, Logger::new(cfg).unwrap())
}

fn pair(stop_on: bool) {
    let (_a, mut on) = logger(Some(stop_on));
    let (_b, mut off) = logger(None);
    let (mut input_on, mut input_off) = (sixty_values::record(1), sixty_values::record(1));
    // Warm-up: every window past its minimum history.
    for _ in 0..3 {
        block(&mut on, &mut input_on);
        block(&mut off, &mut input_off);
    }
    let (mut t_on, mut t_off, mut diff) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..PAIRS {
        // Alternate which goes first, so neither always follows the other.
        let (a, b) = if i % 2 == 0 {
            let a = block(&mut on, &mut input_on);
            (a, block(&mut off, &mut input_off))
        } else {
            let b = block(&mut off, &mut input_off);
            (block(&mut on, &mut input_on), b)
        };
        t_on.push(a);
        t_off.push(b);
        diff.push(a - b);
    }
    assert!(
        on.health_findings().is_empty(),
        "{:?}",
        on.health_findings()
    );
    let at = if stop_on {
        "on the step's thread (stop_on)"
    } else {
        "by the writer thread (no stop_on)"
    };
    println!(
        "health_step, rules evaluated {at}: on {:.0} ns/step, off {:.0} ns/step, paired \
         difference {:.0} ns/step (medians of {PAIRS} pairs of {BLOCK}-step blocks, caller \
         thread CPU)",
        median(&mut t_on),
        median(&mut t_off),
        median(&mut diff)
    );
    on.close(RunStatus::Completed).unwrap();
    off.close(RunStatus::Completed).unwrap();
}
