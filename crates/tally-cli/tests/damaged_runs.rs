//! Readers that say what they found: a truncated tail or a skipped corrupt record is reported
//! with the file and byte offset (stderr, and a `damage` field in JSON), and a run that claims
//! `completed` but ends early fails `extract` unless `--allow-truncated`
//! (`docs/contract/consumers.md` "What readers report").

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use tally_tfevents::{EventFileWriter, WriterOptions};

/// A schema-v1 run of `n` iterations (step = iteration); returns the event file and the start
/// offset of each step's record (index 0: step 1) plus the end of the file.
fn run(dir: &Path, n: i64, summary: Value) -> (PathBuf, Vec<u64>) {
    std::fs::create_dir_all(dir).unwrap();
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    let mut offsets = Vec::new();
    for step in 1..=n {
        offsets.push(w.bytes_written());
        w.write_scalars(
            step,
            1000.0 + step as f64,
            &[("Perf/total_fps", 100.0), ("Perf/iteration_time", 0.5)],
        )
        .unwrap();
    }
    offsets.push(w.bytes_written());
    let path = w.path().to_owned();
    w.close().unwrap();
    std::fs::write(dir.join("run_summary.json"), summary.to_string()).unwrap();
    (path, offsets)
}

fn completed(n: u64) -> Value {
    json!({"metric_schema_version": 1, "status": "completed", "completed_iterations": n})
}

fn cut(path: &Path, len: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(len).unwrap();
}

fn tally(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn extract_fails_a_completed_run_cut_mid_record_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let (file, offsets) = run(tmp.path(), 200, completed(200));
    // 99 of 200 iterations, then half a record.
    cut(&file, offsets[99] + 30);
    let (code, _, err) = tally(&["extract", s(tmp.path())]);
    assert_eq!(code, 1, "{err}");
    let at = format!("{}: truncated tail at byte {}", file.display(), offsets[99]);
    assert!(err.contains(&at), "{err}");
    assert!(err.contains("--allow-truncated"), "{err}");

    let (code, out, err) = tally(&["extract", s(tmp.path()), "--allow-truncated", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&at), "the damage is still reported: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["steps_per_sec"], 100.0);
    assert_eq!(
        v["damage"],
        json!([{"file": file.display().to_string(), "offset": offsets[99],
                "kind": "truncated_tail", "detail": "the file ends inside a record (30 bytes of an incomplete record)"}])
    );
}

#[test]
fn extract_fails_a_completed_run_cut_at_a_record_boundary() {
    let tmp = tempfile::tempdir().unwrap();
    let (file, offsets) = run(tmp.path(), 200, completed(200));
    cut(&file, offsets[99]);
    let (code, _, err) = tally(&["extract", s(tmp.path())]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("iteration 99") && err.contains("200") && err.contains("--allow-truncated"),
        "{err}"
    );
    let (code, _, err) = tally(&["extract", s(tmp.path()), "--allow-truncated"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_killed_run_with_a_torn_tail_extracts_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let summary =
        json!({"metric_schema_version": 1, "status": "running", "completed_iterations": 150});
    let (file, offsets) = run(tmp.path(), 200, summary);
    cut(&file, offsets[120] + 5);
    let (code, out, err) = tally(&["extract", s(tmp.path()), "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!(
            "{}: truncated tail at byte {}",
            file.display(),
            offsets[120]
        )),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["damage"][0]["offset"], offsets[120]);
}

#[test]
fn a_clean_completed_run_reports_no_damage() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), 20, completed(20));
    let (code, out, err) = tally(&["extract", s(tmp.path()), "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["damage"], json!([]));
}

#[test]
fn export_reports_a_truncated_tail_on_stderr_and_keeps_every_complete_row() {
    let tmp = tempfile::tempdir().unwrap();
    let (file, offsets) = run(tmp.path(), 200, completed(200));
    cut(&file, offsets[99] + 30);
    let (code, out, err) = tally(&["export", s(tmp.path()), "--progress", "never"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 99 * 2);
    assert!(
        err.contains(&format!(
            "{}: truncated tail at byte {}",
            file.display(),
            offsets[99]
        )),
        "{err}"
    );
}

#[test]
fn export_under_skip_names_each_skipped_record() {
    let tmp = tempfile::tempdir().unwrap();
    let (file, offsets) = run(tmp.path(), 10, completed(10));
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[offsets[4] as usize + 16] ^= 0x10;
    bytes[offsets[7] as usize + 16] ^= 0x10;
    std::fs::write(&file, &bytes).unwrap();
    let (code, out, err) = tally(&[
        "export",
        s(tmp.path()),
        "--on-corrupt",
        "skip",
        "--progress",
        "never",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 8 * 2);
    for i in [4, 7] {
        let want = format!("{}: corrupt record at byte {}", file.display(), offsets[i]);
        assert!(err.contains(&want), "{want} not in {err}");
    }
    assert!(err.contains("skipped 2 corrupt record(s)"), "{err}");
}

#[test]
fn extract_and_scaling_name_the_file_and_offset_of_a_corrupt_record() {
    let tmp = tempfile::tempdir().unwrap();
    let (file, offsets) = run(tmp.path(), 10, completed(10));
    std::fs::write(
        tmp.path().join("run_config.json"),
        json!({"run": {"task": "t", "logger": null}, "config": {"training": {"num_gpus": 1}}})
            .to_string(),
    )
    .unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[offsets[4] as usize + 16] ^= 0x10;
    std::fs::write(&file, &bytes).unwrap();
    let want = format!("{}: corrupt record at byte {}", file.display(), offsets[4]);
    let (code, _, err) = tally(&["extract", s(tmp.path())]);
    assert_eq!(code, 1);
    assert!(err.contains(&want), "{err}");
    let (code, _, err) = tally(&["scaling", s(tmp.path())]);
    assert_eq!(code, 1);
    assert!(err.contains(&want), "{err}");
}

#[test]
fn scaling_reports_a_truncated_tail_per_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (file, offsets) = run(tmp.path(), 30, completed(30));
    std::fs::write(
        tmp.path().join("run_config.json"),
        json!({"run": {"task": "t"}, "config": {"training": {"num_gpus": 1}}}).to_string(),
    )
    .unwrap();
    cut(&file, offsets[20] + 7);
    let (code, out, err) = tally(&["scaling", s(tmp.path()), "--json"]);
    assert_eq!(code, 0, "{err}");
    let at = format!("{}: truncated tail at byte {}", file.display(), offsets[20]);
    assert!(err.contains(&at), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["damage"][0]["file"], file.display().to_string());
    assert_eq!(v["damage"][0]["offset"], offsets[20]);
}

/// A finished demo run (env steps are its axis, `Train/iteration` its iteration) with
/// `log_interval`; returns its directory, event file, and each persisted iteration with the
/// offset its record starts at.
fn demo_run(root: &Path, log_interval: u64) -> (PathBuf, PathBuf, Vec<(i64, u64)>) {
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["demo", "--iterations", "30", "--panel", "off"])
        .arg(format!("training.log_root={}", root.display()))
        .arg(format!("training.log_interval={log_interval}"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dir = PathBuf::from(
        stdout
            .lines()
            .last()
            .unwrap()
            .strip_prefix("run: ")
            .unwrap(),
    );
    let files = tally_read::files::run_event_files(&dir).unwrap();
    let file = files[0].clone();
    let mut reader = tally_tfevents::open_event_file(&file).unwrap();
    let mut iterations = Vec::new();
    loop {
        let start = reader.records().position();
        let Some(event) = reader.read_event().unwrap() else {
            break;
        };
        if let Some(it) = tally_tfevents::into_scalars(event).find(|s| s.tag == "Train/iteration") {
            iterations.push((it.value as i64, start));
        }
    }
    (dir, file, iterations)
}

#[test]
fn the_refusal_of_a_run_that_ends_early_reads_as_one_sentence() {
    let tmp = tempfile::tempdir().unwrap();
    let (file, offsets) = run(tmp.path(), 200, completed(200));
    cut(&file, offsets[99]);
    let (_, _, err) = tally(&["extract", s(tmp.path())]);
    // The message once carried a run of spaces where a source line was continued.
    assert!(
        err.contains("but its event files end at iteration 99: pass"),
        "{err}"
    );
    assert!(!err.contains("  "), "{err}");
}

#[test]
fn a_completed_demo_run_missing_its_last_iterations_fails_on_its_train_iteration() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, file, iterations) = demo_run(tmp.path(), 1);
    assert_eq!(iterations.last().unwrap().0, 30);
    // Cut at the record of iteration 30: iteration 29 is the last on disk, one interval short.
    cut(&file, iterations.last().unwrap().1);
    let (code, _, err) = tally(&["extract", s(&dir)]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("completed 30 iterations") && err.contains("end at iteration 29"),
        "{err}"
    );
}

#[test]
fn with_a_log_interval_the_count_check_allows_less_than_one_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, file, iterations) = demo_run(tmp.path(), 10);
    let persisted: Vec<i64> = iterations.iter().map(|(it, _)| *it).collect();
    assert_eq!(persisted, [10, 20, 30]);
    let (code, _, err) = tally(&["extract", s(&dir)]);
    assert_eq!(code, 0, "{err}");
    // Without iteration 30, the run ends at 20: a whole interval short of the 30 claimed.
    cut(&file, iterations[2].1);
    let (code, _, err) = tally(&["extract", s(&dir)]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("log interval 10") && err.contains("end at iteration 20"),
        "{err}"
    );
}
