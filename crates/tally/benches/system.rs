//! System metrics' cost (docs/contract/system-metrics.md). Two loggers, system metrics off and
//! on (sampling every 0.1 s, 50 times the default rate, so any cost would show), are stepped
//! with the 60-value SAC record in alternating blocks of 2 000 steps, each block timed by the
//! caller thread's CPU clock so both see the same load; prints each one's median per-step cost
//! and their ratio. Then one sample's CPU time as the sampling thread takes it, and the
//! sampler's share of a core at the default 5 s interval.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;
use tally::{Backend, Logger, LoggerConfig, RunStatus, StepInput};

#[path = "../tests/support/sixty_values.rs"]
mod sixty_values;
mod support;
use sixty_values::record;
use support::thread_cpu;

const BLOCK: u64 = 2_000;
const PAIRS: usize = 150;

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

fn block(log: &mut Logger, input: &mut StepInput) -> f64 {
    let t0 = thread_cpu();
    for _ in 0..BLOCK {
        input.iteration += 1;
        input.env_steps += 4096;
        log.step(black_box(input)).unwrap();
    }
    (thread_cpu() - t0).as_secs_f64() / BLOCK as f64
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if !support::selected("system") {
        return;
    }
    let (_d0, mut off) = logger(false);
    let (_d1, mut on) = logger(true);
    let (mut a, mut b) = (record(1), record(1));
    for x in [&mut a, &mut b] {
        x.iteration = 1 << 40;
        x.env_steps = 1 << 50;
    }
    // Warm both up.
    block(&mut off, &mut a);
    block(&mut on, &mut b);
    let (mut t_off, mut t_on) = (Vec::new(), Vec::new());
    let started = std::time::Instant::now();
    for _ in 0..PAIRS {
        t_off.push(block(&mut off, &mut a));
        t_on.push(block(&mut on, &mut b));
    }
    let secs = started.elapsed().as_secs_f64();
    off.close(RunStatus::Completed).unwrap();
    on.close(RunStatus::Completed).unwrap();
    let samples = tally_tfevents::read_scalars_from_file(on.event_file().unwrap())
        .unwrap()
        .iter()
        .filter(|s| s.tag == tally::system::PROCESS_RSS)
        .count();
    let (m_off, m_on) = (median(&mut t_off), median(&mut t_on));
    println!(
        "step_60_values_tensorboard caller thread CPU: system off {:.3} us, on (0.1 s) {:.3} us, \
         ratio {:.3} ({PAIRS} pairs of {BLOCK}-step blocks over {secs:.1} s, {samples} samples \
         written)",
        m_off * 1e6,
        m_on * 1e6,
        m_on / m_off
    );
    // One sample on this thread, as the sampling thread takes it.
    let dir = tempfile::tempdir().unwrap();
    let (mut probe, note) =
        tally::system::Probe::new(dir.path().to_owned(), &tally::system::gpu::Devices::All);
    let n = 2_000;
    let mut per = Vec::new();
    for _ in 0..5 {
        let t0 = thread_cpu();
        let w0 = std::time::Instant::now();
        for _ in 0..n / 5 {
            black_box(probe.sample(0.0));
        }
        per.push((
            (thread_cpu() - t0).as_secs_f64() / (n / 5) as f64,
            w0.elapsed().as_secs_f64() / (n / 5) as f64,
        ));
    }
    let mut cpu: Vec<f64> = per.iter().map(|p| p.0).collect();
    let mut wall: Vec<f64> = per.iter().map(|p| p.1).collect();
    let (c, w) = (median(&mut cpu), median(&mut wall));
    let interval = Duration::from_secs_f64(tally::system::DEFAULT_INTERVAL_SECS);
    println!(
        "system sample: {:.1} us thread CPU ({:.1} us wall); sampler share of a core at {:?}: \
         {:.4} % ({})",
        c * 1e6,
        w * 1e6,
        interval,
        c / interval.as_secs_f64() * 100.0,
        note.unwrap_or_else(|| "with GPUs".into())
    );
}
