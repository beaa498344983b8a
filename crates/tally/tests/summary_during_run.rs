//! `run_summary.json` as the writer thread rewrites it during a run
//! (docs/contract/threads-and-signals.md "The summary during a run"): after a persisted step,
//! never ahead of the event file, and with every secret redacted like the final one
//! (docs/contract/run-artifacts.md "Secrets").

use serde_json::{json, Value};
use std::sync::Arc;
use tally::schema::artifacts::{RunStatus, RuntimeManifest};
use tally::{Backend, Logger, LoggerConfig, ManualClock, StepInput};

fn summary(log: &Logger) -> Value {
    let text = std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn logger(dir: &std::path::Path) -> Logger {
    let mut c = LoggerConfig::new("sac", "go2", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.backend = Backend::TensorBoard;
    c.max_iterations = Some(100);
    Logger::with_sinks(c, vec![], Arc::new(ManualClock::at(10.0))).unwrap()
}

#[test]
fn the_first_persisted_step_is_in_the_summary_once_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path());
    log.step(&StepInput::new(1).metric("Loss/critic", 1.0))
        .unwrap();
    log.flush().unwrap();
    let s = summary(&log);
    assert_eq!(s["status"], "running");
    assert_eq!(s["completed_iterations"], 1);
    assert_eq!(s["persisted_iterations"], 1);
    log.close(RunStatus::Completed).unwrap();
}

#[test]
fn a_summary_rewritten_during_the_run_holds_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path());
    let mut m = RuntimeManifest::v1();
    m.shutdown = Some(json!({"cmd": "python train.py --api-key cmd-key-3"}));
    log.set_runtime_manifest(m).unwrap();
    log.step(&StepInput::new(1).metric("Loss/critic", 1.0))
        .unwrap();
    log.flush().unwrap();
    let s = summary(&log);
    assert_eq!(s["status"], "running");
    let text = s.to_string();
    assert!(!text.contains("cmd-key-3"), "the secret leaked: {text}");
    log.close(RunStatus::Completed).unwrap();
}
