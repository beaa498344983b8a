//! `tally scaling`: DP scaling report over schema-v1 runs (`docs/contract/consumers.md`).

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use tally_tfevents::{EventFileWriter, WriterOptions};

fn run(root: &Path, name: &str, gpus: u64, task: &str, fps: &[f64], sync: Option<f64>) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let mut w = EventFileWriter::open(&dir, WriterOptions::from_env()).unwrap();
    for (i, f) in fps.iter().enumerate() {
        let mut s = vec![("Perf/total_fps", *f)];
        if let Some(v) = sync {
            s.push(("Perf/dp_gradient_sync_ms_per_rank", v));
        }
        w.write_scalars(i as i64 + 1, 0.0, &s).unwrap();
    }
    w.close().unwrap();
    std::fs::write(
        dir.join("run_summary.json"),
        json!({"metric_schema_version": 1}).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("run_config.json"),
        json!({"run": {"task": task, "logger": {"num_gpus": gpus}}}).to_string(),
    )
    .unwrap();
    dir
}

fn scaling(dirs: &[&Path], extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tally"))
        .arg("scaling")
        .args(dirs)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn speedup_and_efficiency_are_against_the_smallest_run() {
    let tmp = tempfile::tempdir().unwrap();
    let four = run(tmp.path(), "g4", 4, "t", &[1.0, 3000.0, 3000.0], Some(2.0));
    let one = run(tmp.path(), "g1", 1, "t", &[1000.0, 1000.0], None);
    let two = run(tmp.path(), "g2", 2, "t", &[1800.0], Some(1.0));
    let out = scaling(&[&four, &one, &two], &["--json", "--last", "2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["base_gpus"], 1);
    let runs = v["runs"].as_array().unwrap();
    let gpus: Vec<_> = runs.iter().map(|r| r["gpus"].as_u64().unwrap()).collect();
    assert_eq!(gpus, [1, 2, 4]);
    assert!((runs[1]["efficiency"].as_f64().unwrap() - 0.9).abs() < 1e-12);
    assert_eq!(
        runs[2]["steps_per_sec"], 3000.0,
        "mean of the last 2 values"
    );
    assert!((runs[2]["speedup"].as_f64().unwrap() - 3.0).abs() < 1e-12);
    assert!((runs[2]["efficiency"].as_f64().unwrap() - 0.75).abs() < 1e-12);
    assert_eq!(runs[2]["dp_gradient_sync_ms_per_rank"], 2.0);
    assert_eq!(runs[0]["dp_gradient_sync_ms_per_rank"], Value::Null);
    let text = String::from_utf8(scaling(&[&one, &two], &[]).stdout).unwrap();
    assert!(
        text.contains("scaling against 1 GPU") && text.contains("90.0%"),
        "{text}"
    );
}

#[test]
fn different_tasks_and_unversioned_runs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run(tmp.path(), "a", 1, "walk", &[1.0], None);
    let b = run(tmp.path(), "b", 2, "run", &[1.0], None);
    let out = scaling(&[&a, &b], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a scaling report compares one task"));
    std::fs::write(b.join("run_summary.json"), "{}").unwrap();
    let out = scaling(&[&b], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no metric_schema_version"), "{err}");
    // scaling has no legacy mode: the way out it names is extract's.
    assert!(err.contains("tally extract --legacy-unversioned"), "{err}");
}
