//! A run's several event files (a resumed run writes a new file in the same directory): read
//! in order of their first event's wall time, then name, as one run with steps increasing
//! across files (`docs/contract/consumers.md` "A run's event files").

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};
use tally_tfevents::{EventFileWriter, FsyncPolicy, WriterOptions};

/// An event file created at `created` (seconds) by `host`, holding `steps`.
fn segment(dir: &Path, host: &str, created: f64, steps: std::ops::RangeInclusive<i64>) -> PathBuf {
    let options = WriterOptions {
        hostname: host.into(),
        pid: 7,
        created_at: UNIX_EPOCH + Duration::from_secs_f64(created),
        fsync: FsyncPolicy::Never,
        suffix: String::new(),
    };
    let mut w = EventFileWriter::open(dir, options).unwrap();
    for step in steps {
        w.write_scalars(
            step,
            created + step as f64,
            &[("Perf/total_fps", step as f64)],
        )
        .unwrap();
    }
    let path = w.path().to_owned();
    w.close().unwrap();
    path
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

fn summary(dir: &Path, n: u64) {
    std::fs::write(
        dir.join("run_summary.json"),
        json!({"metric_schema_version": 1, "status": "completed", "completed_iterations": n})
            .to_string(),
    )
    .unwrap();
}

/// Two segments whose names sort the other way round from their creation times (same second
/// in the name, hostnames "a" and "b"): order by wall time must win.
fn resumed(dir: &Path) -> (PathBuf, PathBuf) {
    let second = segment(dir, "a", 1_700_000_000.75, 6..=10);
    let first = segment(dir, "b", 1_700_000_000.25, 1..=5);
    assert!(
        second.file_name() < first.file_name(),
        "names sort second first"
    );
    (first, second)
}

#[test]
fn extract_reads_a_resumed_run_as_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    resumed(tmp.path());
    summary(tmp.path(), 10);
    let (code, out, err) = tally(&[
        "extract",
        tmp.path().to_str().unwrap(),
        "--last",
        "3",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    // The last three steps are 8, 9, 10, all in the later segment.
    assert_eq!(v["steps_per_sec"], 9.0);
}

#[test]
fn export_of_a_run_directory_streams_its_files_in_run_order() {
    let tmp = tempfile::tempdir().unwrap();
    resumed(tmp.path());
    let (code, out, err) = tally(&[
        "export",
        tmp.path().to_str().unwrap(),
        "--progress",
        "never",
    ]);
    assert_eq!(code, 0, "{err}");
    let steps: Vec<i64> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["step"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(steps, (1..=10).collect::<Vec<_>>());
}

#[test]
fn a_step_going_back_across_files_is_an_error_naming_both_files() {
    let tmp = tempfile::tempdir().unwrap();
    let first = segment(tmp.path(), "a", 1_700_000_000.0, 1..=5);
    let second = segment(tmp.path(), "b", 1_700_000_100.0, 5..=8);
    summary(tmp.path(), 8);
    for args in [
        vec!["extract", tmp.path().to_str().unwrap()],
        vec![
            "export",
            tmp.path().to_str().unwrap(),
            "--progress",
            "never",
        ],
    ] {
        let (code, _, err) = tally(&args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(
            err.contains(&first.display().to_string())
                && err.contains(&second.display().to_string())
                && err.contains("step 5"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn several_run_directories_below_one_directory_are_refused_by_one_run_readers() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["r1", "r2"] {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        segment(&dir, "a", 1_700_000_000.0, 1..=3);
        summary(&dir, 3);
    }
    let (code, _, err) = tally(&["extract", tmp.path().to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("r1") && err.contains("r2") && err.contains("pass one run directory"),
        "{err}"
    );
    // One run below the directory given is that run.
    let only = tmp.path().join("only");
    std::fs::create_dir(&only).unwrap();
    std::fs::rename(tmp.path().join("r1"), only.join("r1")).unwrap();
    let (code, _, err) = tally(&["extract", only.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_purge_marker_is_named_in_the_refusal_not_applied() {
    use tally_tfevents::proto::{event::What, SessionLog};
    let tmp = tempfile::tempdir().unwrap();
    let first = segment(tmp.path(), "a", 1_700_000_000.0, 1..=8);
    let options = WriterOptions {
        hostname: "b".into(),
        pid: 7,
        created_at: UNIX_EPOCH + Duration::from_secs(1_700_000_100),
        fsync: FsyncPolicy::Never,
        suffix: String::new(),
    };
    let mut w = EventFileWriter::open(tmp.path(), options).unwrap();
    // What torch's SummaryWriter(purge_step=5) writes first: SessionLog START at step 5.
    w.write_event(&tally_tfevents::Event {
        wall_time: 1_700_000_100.0,
        step: 5,
        what: Some(What::SessionLog(SessionLog {
            status: 1,
            ..Default::default()
        })),
    })
    .unwrap();
    w.write_scalars(5, 1_700_000_101.0, &[("Perf/total_fps", 5.0)])
        .unwrap();
    let second = w.path().to_owned();
    w.close().unwrap();
    let (code, _, err) = tally(&[
        "export",
        tmp.path().to_str().unwrap(),
        "--progress",
        "never",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("purge marker at step 5")
            && err.contains(&first.display().to_string())
            && err.contains(&second.display().to_string()),
        "{err}"
    );
}
