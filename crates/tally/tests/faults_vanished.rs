//! A run directory removed mid-run loses nothing tally still holds
//! (docs/contract/run-artifacts.md "Storage faults"): the event file is put back at its path
//! from its open descriptor, the JSON artefacts are rewritten from memory, and it is said once.

use serde_json::Value;
use std::path::{Path, PathBuf};
use tally::{Logger, LoggerConfig, RunStatus, StepInput};

fn config(run_dir: &Path) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(run_dir.to_path_buf());
    c.max_iterations = Some(40);
    c
}

fn step(i: u64) -> StepInput {
    StepInput::new(i).metric("Loss/critic", i as f64)
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The steps of `Loss/critic` in the event file, read by the strict reader (a torn or corrupt
/// record fails it).
fn file_steps(event_file: &Path) -> Vec<i64> {
    tally_tfevents::read_scalars_from_file(event_file)
        .unwrap()
        .into_iter()
        .filter(|e| e.tag == "Loss/critic")
        .map(|e| e.step)
        .collect()
}

/// Log 40 steps, removing the run directory after step `removed_after`; returns the errors
/// raised during the run and by close, and `run_config.json` as it was before.
fn run_removing(run_dir: &Path, removed_after: u64) -> (Logger, Vec<String>, Value) {
    let mut log = Logger::new(config(run_dir)).unwrap();
    let mut errors = Vec::new();
    let mut config = None;
    for i in 1..=40 {
        if let Err(e) = log.step(&step(i)) {
            errors.push(e.to_string());
        }
        if i % 5 == 0 {
            if let Err(e) = log.flush() {
                errors.push(e.to_string());
            }
        }
        if i == removed_after {
            config = Some(json(&run_dir.join("run_config.json")));
            std::fs::remove_dir_all(run_dir).unwrap();
        }
    }
    if let Err(e) = log.close(RunStatus::Completed) {
        errors.push(e.to_string());
    }
    (log, errors, config.unwrap())
}

#[test]
fn a_run_directory_removed_mid_run_is_restored_with_every_step_and_said_once() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let (log, errors, before) = run_removing(&run_dir, 20);
    let event_file = log.event_file().unwrap().to_path_buf();
    assert_eq!(event_file.parent(), Some(run_dir.as_path()));
    // Every step in the file at its old path, whole records only, in order.
    assert_eq!(file_steps(&event_file), (1..=40).collect::<Vec<_>>());
    // Said once, naming the directory and how much was restored.
    assert_eq!(errors.len(), 1, "{errors:?}");
    let text = &errors[0];
    assert!(
        text.contains(&format!("run directory {} was removed", run_dir.display())),
        "{text}"
    );
    assert!(
        text.contains("restored") && text.contains("bytes from the open event file"),
        "{text}"
    );
    // Both JSON artefacts are back; the summary counts what the file holds.
    assert_eq!(json(&run_dir.join("run_config.json")), before);
    let s = json(&run_dir.join("run_summary.json"));
    assert_eq!(s["status"], "completed", "{s}");
    assert_eq!(s["completed_iterations"], 40);
    assert_eq!(s["persisted_iterations"], 40);
    assert_eq!(s["lost_iterations"], 0);
    let listed = s["sink_errors"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{s}");
    assert!(listed[0].as_str().unwrap().contains("was removed"), "{s}");
    // The restored summary passes the validator `tally validate` runs.
    let report = tally::schema::conformance::validate(&s);
    assert!(report.is_ok(), "{report:?}");
}

#[test]
fn with_warn_a_removed_run_directory_is_restored_and_nothing_raised() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let mut c = config(&run_dir);
    c.on_storage_error = tally::OnStorageError::Warn;
    let mut log = Logger::new(c).unwrap();
    for i in 1..=40 {
        log.step(&step(i)).unwrap();
        if i == 20 {
            log.flush().unwrap();
            std::fs::remove_dir_all(&run_dir).unwrap();
        }
    }
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(
        file_steps(log.event_file().unwrap()),
        (1..=40).collect::<Vec<_>>()
    );
    let s = json(&run_dir.join("run_summary.json"));
    assert_eq!(s["status"], "completed", "{s}");
    assert_eq!(s["persisted_iterations"], 40, "{s}");
    assert!(
        s["sink_errors"][0]
            .as_str()
            .unwrap()
            .contains("was removed"),
        "{s}"
    );
}

#[test]
fn a_run_directory_removed_after_the_last_step_is_restored_at_close() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let (log, errors, before) = run_removing(&run_dir, 40);
    assert_eq!(
        file_steps(log.event_file().unwrap()),
        (1..=40).collect::<Vec<_>>()
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    let s = json(&run_dir.join("run_summary.json"));
    assert_eq!(s["status"], "completed", "{s}");
    assert_eq!(s["persisted_iterations"], 40);
    assert_eq!(json(&run_dir.join("run_config.json")), before);
}

/// A run of 20 flushed steps whose directory then goes and comes back with a directory where
/// the event file was: the summary can be written, the event file cannot be put back.
fn blocked_after_20(run_dir: &Path) -> (Logger, PathBuf) {
    let mut log = Logger::new(config(run_dir)).unwrap();
    let event_file = log.event_file().unwrap().to_path_buf();
    for i in 1..=20 {
        log.step(&step(i)).unwrap();
    }
    log.flush().unwrap();
    std::fs::remove_dir_all(run_dir).unwrap();
    std::fs::create_dir_all(&event_file).unwrap();
    (log, event_file)
}

#[test]
fn an_event_file_that_cannot_be_restored_is_kept_pending_then_counted_lost_at_close() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let (mut log, event_file) = blocked_after_20(&run_dir);
    // Steps go on, each flushed, until a summary is written in the recreated directory. Only a
    // step sends a rewrite, and one comes due some multiple of the last one's cost after it
    // (`summary_pace.rs`): steps half a second apart leave it that time however loaded the
    // machine is (unpaced, 20 steps could all come before it on a loaded one).
    let mut errors = Vec::new();
    let mut last = 20;
    while !run_dir.join("run_summary.json").exists() && last < 40 {
        std::thread::sleep(std::time::Duration::from_millis(500));
        last += 1;
        if let Err(e) = log.step(&step(last)) {
            errors.push(e.to_string());
        }
        // `flush` says each time that the steps are not in a file at its path
        // (docs/contract/run-artifacts.md "Storage faults").
        match log.flush() {
            Err(tally::Error::NotDurable { .. }) | Ok(()) => {}
            Err(e) => errors.push(e.to_string()),
        }
    }
    assert!(
        run_dir.join("run_summary.json").exists(),
        "no summary rewrite in 20 steps half a second apart"
    );
    assert_eq!(errors.len(), 1, "said once: {errors:?}");
    assert!(
        matches!(log.flush(), Err(tally::Error::NotDurable { pending, .. }) if pending >= 20),
        "while the steps are only in the open descriptor, flush says so"
    );
    assert!(
        errors[0].contains(&event_file.display().to_string()),
        "{errors:?}"
    );
    // That summary claims no step in the file: the open descriptor still holds them, kept for
    // a later restore.
    let s = json(&run_dir.join("run_summary.json"));
    assert_eq!(s["persisted_iterations"], 0, "{s}");
    assert!(s["pending_iterations"].as_u64().unwrap() >= 20, "{s}");
    for i in last + 1..=40 {
        let _ = log.step(&step(i));
    }
    // Still blocked at close: every step the lost file held is counted lost.
    let closed = log.close(RunStatus::Completed);
    assert!(closed.is_err());
    let s = json(&run_dir.join("run_summary.json"));
    assert_eq!(s["status"], "degraded", "{s}");
    assert_eq!(s["persisted_iterations"], 0, "{s}");
    assert_eq!(s["lost_iterations"], 40, "{s}");
    assert_eq!(s["pending_iterations"], 0, "{s}");
}

#[test]
fn an_event_file_restored_later_counts_every_step_again() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let (mut log, event_file) = blocked_after_20(&run_dir);
    assert!(log.step(&step(21)).is_err() || log.flush().is_err());
    // The path clears: the next check puts the file back with every step.
    std::fs::remove_dir(&event_file).unwrap();
    for i in 22..=40 {
        let _ = log.step(&step(i));
    }
    let _ = log.close(RunStatus::Completed);
    assert_eq!(file_steps(&event_file), (1..=40).collect::<Vec<_>>());
    let s = json(&run_dir.join("run_summary.json"));
    assert_eq!(s["persisted_iterations"], 40, "{s}");
    assert_eq!(s["lost_iterations"], 0, "{s}");
    assert_eq!(s["status"], "completed", "{s}");
}

#[test]
fn what_a_removed_run_directory_held_and_is_not_restored_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let mut c = config(&run_dir);
    c.trace = true;
    let mut log = Logger::new(c).unwrap();
    let mut errors = Vec::new();
    for i in 1..=20 {
        if let Err(e) = log.step(&step(i)) {
            errors.push(e.to_string());
        }
        if i == 10 {
            // A summary rewrite held by the writer names the trace.
            log.flush().unwrap();
            std::fs::remove_dir_all(&run_dir).unwrap();
        }
    }
    if let Err(e) = log.flush() {
        errors.push(e.to_string());
    }
    let _ = log.close(RunStatus::Completed);
    let s = json(&run_dir.join("run_summary.json"));
    let trace = s["trace_path"].as_str().unwrap().to_owned();
    assert!(Path::new(&trace).starts_with(&run_dir), "{trace}");
    let all = errors.join("\n") + &s["sink_errors"].to_string();
    assert!(
        all.contains(&format!("not restored: the trace {trace}")),
        "{all}"
    );
    // The event file is whole.
    assert_eq!(
        file_steps(log.event_file().unwrap()),
        (1..=20).collect::<Vec<_>>()
    );
}

#[test]
fn a_run_directory_moved_away_mid_run_is_put_back_at_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let moved = tmp.path().join("moved");
    let mut log = Logger::new(config(&run_dir)).unwrap();
    let mut errors = Vec::new();
    for i in 1..=40 {
        if let Err(e) = log.step(&step(i)) {
            errors.push(e.to_string());
        }
        if i == 20 {
            log.flush().unwrap();
            std::fs::rename(&run_dir, &moved).unwrap();
        }
    }
    if let Err(e) = log.close(RunStatus::Completed) {
        errors.push(e.to_string());
    }
    assert_eq!(errors.len(), 1, "{errors:?}");
    // The run goes on at its path with every step; the moved copy keeps what it had.
    let event_file = log.event_file().unwrap();
    assert_eq!(file_steps(event_file), (1..=40).collect::<Vec<_>>());
    let s = json(&run_dir.join("run_summary.json"));
    assert_eq!(s["persisted_iterations"], 40, "{s}");
    let moved_steps = file_steps(&moved.join(event_file.file_name().unwrap()));
    assert!(
        moved_steps.starts_with(&(1..=20).collect::<Vec<_>>()),
        "{moved_steps:?}"
    );
}
