//! After the fact, a run's verdict holds what its logger recorded as well as what its scalars
//! show (docs/contract/health.md "tally health"): a run the logger ended for a stall, whose
//! event file shows no pause, is unhealthy, and a finding both report is told once.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use tally::health::{RuleKind, RuleSet};
use tally::{Backend, Logger, LoggerConfig, StepInput};

#[path = "support/run.rs"]
mod run;
use run::tally;

/// The child: 20 steps 10 ms apart (with `TALLY_STALL_CHILD_NAN`, a NaN loss at step 5), then
/// a pause the logger ends after 1 s (docs/contract/health.md "Ending a stalled run").
#[test]
#[ignore]
fn child_stalls() {
    let Ok(dir) = std::env::var("TALLY_STALL_CHILD_DIR") else {
        return;
    };
    let mut c = LoggerConfig::new("sac", "stall", "mujoco");
    c.log_dir = Some(PathBuf::from(dir));
    c.backend = Backend::TensorBoard;
    let mut rules = RuleSet::defaults();
    let stall = rules.stall.as_mut().unwrap();
    // A quick threshold so the test is short (docs/contract/health.md "Stall").
    stall.min_gap_s = 0.5;
    stall.min_history = 3;
    c.health = rules;
    c.stall_exit_after_secs = Some(1.0);
    let nan = std::env::var_os("TALLY_STALL_CHILD_NAN").is_some();
    let mut log = Logger::new(c).unwrap();
    for it in 1..=20 {
        let loss = if nan && it == 5 { f64::NAN } else { 1.0 };
        log.step(&StepInput::new(it).metric("Loss/critic", loss))
            .unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_secs(3600));
}

/// A run ended by the logger for a stall (exit code 75), with a NaN loss at step 5 if `nan`.
fn stalled_run(root: &Path, nan: bool) -> PathBuf {
    let dir = root.join("run");
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["child_stalls", "--exact", "--ignored", "--nocapture"])
        .env("TALLY_STALL_CHILD_DIR", &dir);
    if nan {
        child.env("TALLY_STALL_CHILD_NAN", "1");
    }
    let mut child = child.spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("the stalled child did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(75));
    dir
}

/// The findings `tally_read::health::check_paths` gives the run in `dir`.
fn findings(dir: &Path) -> Vec<tally::health::Finding> {
    let mut runs = tally_read::health::check_paths(
        &[dir.to_owned()],
        &RuleSet::defaults(),
        0.0,
        &mut tally_read::Quiet,
    )
    .unwrap();
    assert_eq!(runs.len(), 1);
    runs.remove(0).findings
}

#[test]
fn a_run_ended_for_a_stall_is_unhealthy_afterwards() {
    let root = tempfile::tempdir().unwrap();
    let dir = stalled_run(root.path(), false);
    // The event file shows steps 10 ms apart to the end: only the logger saw the pause.
    let found = findings(&dir);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].rule, found[0].first_step), (RuleKind::Stall, 20));

    let out = tally(&["health", &dir.display().to_string()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("stall"),
        "{out:?}"
    );
    let out = tally(&["health", "--json", &dir.display().to_string()]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["healthy"], false);
    assert_eq!(
        report["runs"][0]["findings"][0]["rule"], "stall",
        "{report}"
    );
}

#[test]
fn a_finding_the_logger_recorded_and_the_scalars_show_is_told_once() {
    let root = tempfile::tempdir().unwrap();
    let dir = stalled_run(root.path(), true);
    let mut rules: Vec<(RuleKind, String)> = findings(&dir)
        .iter()
        .map(|f| (f.rule, f.tag.clone()))
        .collect();
    rules.sort_by_key(|(r, t)| (r.as_str(), t.clone()));
    assert_eq!(
        rules,
        vec![
            (RuleKind::Nonfinite, "Loss/critic".to_owned()),
            (RuleKind::Stall, String::new())
        ]
    );
}
