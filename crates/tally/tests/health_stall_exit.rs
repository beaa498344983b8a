//! Ending a stalled run (docs/contract/health.md "Ending a stalled run"): a real child process
//! whose loop stops sending steps is recorded `failed`, with a status reason naming the stall,
//! and ends with exit code 75 after the grace period; one whose loop comes back within it
//! goes on and closes as usual.

use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};
use tally::health::stall_exit::STALL_EXIT_CODE;
use tally::health::RuleSet;
use tally::{Backend, Error, Logger, LoggerConfig, RunStatus, StepInput};

fn config(dir: &std::path::Path, grace: f64) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "stall", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.backend = Backend::TensorBoard;
    let mut rules = RuleSet::defaults();
    let stall = rules.stall.as_mut().unwrap();
    // A quick threshold so the test is short (docs/contract/health.md "Stall").
    stall.min_gap_s = 0.5;
    stall.min_history = 3;
    c.health = rules;
    c.stall_exit_after_secs = Some(grace);
    c
}

/// The child: 20 steps 10 ms apart, then a pause (`forever`, or 1.5 s and 5 more steps).
#[test]
#[ignore]
fn child_stalls() {
    let Ok(dir) = std::env::var("TALLY_STALL_CHILD_DIR") else {
        return;
    };
    let forever = std::env::var("TALLY_STALL_CHILD_MODE").as_deref() == Ok("forever");
    let grace = if forever { 1.0 } else { 4.0 };
    let mut log = Logger::new(config(std::path::Path::new(&dir), grace)).unwrap();
    for it in 1..=20 {
        log.step(&StepInput::new(it).metric("Loss/critic", 1.0))
            .unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    if forever {
        std::thread::sleep(Duration::from_secs(3600));
    }
    std::thread::sleep(Duration::from_millis(1500));
    for it in 21..=25 {
        log.step(&StepInput::new(it).metric("Loss/critic", 1.0))
            .unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
}

/// Runs the child in `mode`; its exit code and its run's summary.
fn run_child(mode: &str) -> (Option<i32>, Value, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["child_stalls", "--exact", "--ignored", "--nocapture"])
        .env("TALLY_STALL_CHILD_DIR", dir.path())
        .env("TALLY_STALL_CHILD_MODE", mode)
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("the child ({mode}) did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = start.elapsed();
    let text = std::fs::read_to_string(dir.path().join("run/run_summary.json")).unwrap();
    (status.code(), serde_json::from_str(&text).unwrap(), took)
}

#[test]
fn a_loop_that_stops_ends_the_process_after_the_grace_period() {
    let (code, s, took) = run_child("forever");
    assert_eq!(code, Some(STALL_EXIT_CODE));
    assert_eq!(STALL_EXIT_CODE, 75);
    assert_eq!(s["status"], "failed", "{s}");
    let reason = s["status_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("stalled: no step after step 20 for "),
        "{reason}"
    );
    assert!(reason.contains("stall_exit_after=1 s"), "{reason}");
    assert!(reason.contains("exit code 75"), "{reason}");
    assert!(s["end_time_utc"].is_string(), "{s}");
    let stall: Vec<&Value> = s["health"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "stall")
        .collect();
    assert_eq!(stall.len(), 1, "{s}");
    assert_eq!(stall[0]["first_step"], 20);
    // Found after about 0.6 s of pause, ended 1 s later: well before the child's hour.
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[test]
fn a_loop_back_within_the_grace_period_goes_on() {
    let (code, s, _) = run_child("comes_back");
    assert_eq!(code, Some(0));
    assert_eq!(s["status"], "completed", "{s}");
    assert_eq!(s["completed_iterations"], 25);
    assert!(s.get("status_reason").is_none(), "{s}");
    // The pause was still a stall, and found.
    assert!(s["health"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["rule"] == "stall"));
}

#[test]
fn a_bad_grace_period_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    for (grace, says) in [
        (
            -1.0,
            "stall_exit_after -1 must be a finite number of seconds >= 0",
        ),
        (f64::NAN, "stall_exit_after NaN must be"),
    ] {
        match Logger::new(config(dir.path(), grace)) {
            Err(Error::Config(m)) => assert!(m.contains(says), "{m}"),
            Err(e) => panic!("{e:?}"),
            Ok(_) => panic!("accepted {grace}"),
        }
    }
    let mut c = config(dir.path(), 5.0);
    c.health.turn_off(tally::health::RuleKind::Stall);
    match Logger::new(c) {
        Err(Error::Config(m)) => assert!(m.contains("the stall rule is off"), "{m}"),
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("accepted"),
    }
    assert!(!dir.path().join("run").exists());
}
