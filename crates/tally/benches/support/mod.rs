//! What the tally benches share: the caller thread's CPU clock, a logger that writes no file
//! and never rewrites its summary, and the bench-name filter of the non-criterion benches.
// Each bench uses its own part of this module.
#![allow(dead_code)]

use std::time::Duration;
use tally::{Backend, Logger, LoggerConfig};

/// This thread's CPU time: what a step costs the training loop's thread, steady on a shared
/// machine where wall time also counts waiting for a core.
pub fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// A logger with `backend` in a fresh directory (kept alive by the returned guard), accepting
/// any iteration and never rewriting its summary during the bench.
pub fn bench_logger(backend: Backend) -> (tempfile::TempDir, Logger) {
    bench_logger_health(backend, true)
}

/// As [`bench_logger`], with the default health rules on or off (docs/contract/health.md
/// "In the logger": what they add to a step).
pub fn bench_logger_health(backend: Backend, health: bool) -> (tempfile::TempDir, Logger) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = LoggerConfig::new("sac", "bench", "mujoco");
    cfg.log_dir = Some(dir.path().join("run"));
    // Unbounded: the largest iteration the logger accepts.
    cfg.max_iterations = Some(tally::resolve::MAX_COUNT);
    cfg.backend = backend;
    cfg.summary_interval_secs = 1e9;
    if !health {
        cfg.health = tally::health::RuleSet::empty();
    }
    let log = Logger::new(cfg).unwrap();
    (dir, log)
}

/// As [`bench_logger`], with `stop_on` set: the default rules evaluated on the step's thread
/// (docs/contract/health.md "In the logger").
pub fn bench_logger_stop_on(backend: Backend) -> (tempfile::TempDir, Logger) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = LoggerConfig::new("sac", "bench", "mujoco");
    cfg.log_dir = Some(dir.path().join("run"));
    cfg.max_iterations = Some(tally::resolve::MAX_COUNT);
    cfg.backend = backend;
    cfg.summary_interval_secs = 1e9;
    cfg.stop_on = vec![tally::health::RuleKind::Nonfinite];
    let log = Logger::new(cfg).unwrap();
    (dir, log)
}

/// Whether a bench binary named `name` should run: `cargo bench -p tally -- FILTER` passes
/// FILTER to every bench binary, so one that is not criterion's runs only when it is named (or
/// nothing is), as criterion's benches do.
pub fn selected(name: &str) -> bool {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}
