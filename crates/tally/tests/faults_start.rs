//! A start that fails after the run directory was made takes back what it wrote
//! (docs/contract/run-artifacts.md "Storage faults"): no half-created run is left for
//! `tally watch`, resume or a sweep script to find.

use std::path::Path;
use tally::{Logger, LoggerConfig};

/// A config whose trace cannot be created: its directory is a regular file.
fn failing_after_the_run_dir(dir: &Path, log_dir: Option<&Path>) -> LoggerConfig {
    let blocker = dir.join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_root = dir.join("logs");
    c.log_dir = log_dir.map(Path::to_path_buf);
    c.trace = true;
    c.trace_output_dir = Some(blocker);
    c
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = walk(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    names.sort();
    names
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn a_start_that_fails_after_making_the_run_directory_leaves_no_run_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let err = Logger::new(failing_after_the_run_dir(tmp.path(), None))
        .err()
        .expect("the trace cannot be created");
    assert!(err.to_string().contains("not-a-dir"), "{err}");
    // The algo/task parents may stay; no run directory does.
    let left = entries(&tmp.path().join("logs"));
    assert_eq!(left, ["sac", "sac/task"], "{left:?}");
}

#[test]
fn a_failed_start_in_an_existing_log_dir_keeps_the_directory_and_what_was_there() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::write(run.join("notes.txt"), "mine").unwrap();
    let fresh = tmp.path().join("fresh");
    for dir in [&run, &fresh] {
        let c = failing_after_the_run_dir(tmp.path(), Some(dir));
        assert!(Logger::new(c).is_err());
        std::fs::remove_file(tmp.path().join("not-a-dir")).unwrap();
    }
    assert_eq!(entries(&run), ["notes.txt"]);
    assert!(!fresh.exists());
}
