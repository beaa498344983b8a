//! A run whose summary could not be finalised (its directory turned read-only mid-run, so
//! `run_summary.json` stays `running` at an earlier step while the event file holds every
//! step) is read for what its files hold and never reported as completed
//! (docs/contract/run-artifacts.md "Storage faults").

use std::path::Path;
use std::process::Command;
use tally::{Logger, LoggerConfig, RunStatus, StepInput};

/// A 40-step run whose `run_summary.json` is left as it was after step 20, as when the
/// directory turns read-only there: the rewrites fail, the open event file takes every step.
fn unfinalised_run(run_dir: &Path) -> serde_json::Value {
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(run_dir.to_path_buf());
    c.max_iterations = Some(40);
    let mut log = Logger::new(c).unwrap();
    let mut stuck = None;
    for i in 1..=40 {
        let input = StepInput::new(i)
            .iteration_time(0.5)
            .metric("Loss/critic", i as f64);
        log.step(&input).unwrap();
        if i == 20 {
            log.flush().unwrap();
            stuck = Some(std::fs::read(run_dir.join("run_summary.json")).unwrap());
        }
    }
    log.close(RunStatus::Completed).unwrap();
    std::fs::write(run_dir.join("run_summary.json"), stuck.unwrap()).unwrap();
    serde_json::from_slice(&std::fs::read(run_dir.join("run_summary.json")).unwrap()).unwrap()
}

fn tally(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(args)
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn extract_reads_a_run_whose_summary_stayed_running_and_says_it_was_not_finalised() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let s = unfinalised_run(&run_dir);
    assert_eq!(s["status"], "running", "{s}");
    let claimed = s["completed_iterations"].as_u64().unwrap();
    assert!(claimed <= 20, "{s}");
    let (code, out, err) = tally(&["extract"], &run_dir);
    assert_eq!(code, 0, "{err}");
    // The figures come from the file: every step of it.
    assert!(out.contains("500.000"), "{out}");
    // The summary's state is named: not finalised, still saying `running`; never completed.
    let summary = run_dir.join("run_summary.json");
    assert!(
        err.contains(&format!(
            "{}: says the run is still running ({claimed} iterations)",
            summary.display()
        )),
        "{err}"
    );
    assert!(err.contains("could not be finalised"), "{err}");
    assert!(
        !out.contains("completed") && !err.contains("completed"),
        "{out}{err}"
    );
    // --json keeps stdout a JSON document; the note stays on stderr.
    let (code, out, err) = tally(&["extract", "--json"], &run_dir);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["damage"], serde_json::json!([]), "{doc}");
    assert!(err.contains("could not be finalised"), "{err}");
}
