//! A run's several event files (a resumed run writes a new file in the same directory): read
//! in order of their first event's wall time, then name, as one run, purge markers applied and
//! steps going back kept and reported, as TensorBoard reads them
//! (`docs/contract/consumers.md` "A run's event files").

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

/// The `(step, value)` rows of `tally export`'s JSON lines.
fn exported(out: &str) -> Vec<(i64, f64)> {
    out.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["step"].as_i64().unwrap(), v["value"].as_f64().unwrap())
        })
        .collect()
}

#[test]
fn a_step_going_back_across_files_is_kept_and_reported_and_refused_when_strict() {
    let tmp = tempfile::tempdir().unwrap();
    let first = segment(tmp.path(), "a", 1_700_000_000.0, 1..=5);
    let second = segment(tmp.path(), "b", 1_700_000_100.0, 5..=8);
    summary(tmp.path(), 8);
    let dir = tmp.path().to_str().unwrap();
    let (code, out, err) = tally(&["export", dir, "--progress", "never"]);
    assert_eq!(code, 0, "{err}");
    let steps: Vec<i64> = exported(&out).iter().map(|r| r.0).collect();
    assert_eq!(
        steps,
        [1, 2, 3, 4, 5, 5, 6, 7, 8],
        "both segments, as TensorBoard draws them"
    );
    assert!(
        err.contains(&format!("{}: steps going back", second.display()))
            && err.contains("1 points from step 5 on do not pass step 5")
            && err.contains(&first.display().to_string()),
        "{err}"
    );
    let (code, _, err) = tally(&["extract", dir]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("steps going back"), "{err}");
    let (code, _, err) = tally(&["export", dir, "--strict", "--progress", "never"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&first.display().to_string())
            && err.contains(&second.display().to_string())
            && err.contains("step 5"),
        "{err}"
    );
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
fn a_purge_marker_drops_the_earlier_points_from_its_step_as_tensorboard_does() {
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
    let (code, out, err) = tally(&[
        "export",
        tmp.path().to_str().unwrap(),
        "--progress",
        "never",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        exported(&out),
        [(1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0), (5, 5.0)],
        "the first segment's steps 5..8 dropped, the second's 5 kept"
    );
    assert!(
        err.contains(&format!("{}: purge at byte", second.display()))
            && err.contains("purge marker at step 5: 4 points of")
            && err.contains(&first.display().to_string()),
        "{err}"
    );
}
