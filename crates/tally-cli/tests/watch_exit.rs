//! How `tally watch` ends (`docs/contract/panel.md` "tally watch"): non-zero on a corrupt
//! record, naming the file and byte offset; refused for a run of another schema version.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tally_tfevents::{encode_scalar_event, RecordWriter};

fn record(step: i64, wall: f64, scalars: &[(&str, f64)]) -> Vec<u8> {
    let mut data = Vec::new();
    encode_scalar_event(step, wall, scalars, &mut data);
    let mut w = RecordWriter::new(Vec::new());
    w.write_record(&data).unwrap();
    w.into_inner()
}

/// `tally watch --panel off DIR`, killed (and the test failed) if it has not ended after a
/// generous bound: a watch that never ends is the defect some of these tests catch.
fn watch(dir: &Path) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "--panel", "off"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "watch did not end:\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_corrupt_record_ends_watch_non_zero_naming_the_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let first = record(1, 10.0, &[("Loss/critic", 1.0)]);
    let mut second = record(2, 11.0, &[("Loss/critic", 2.0)]);
    let n = second.len();
    second[n - 6] ^= 0xff; // inside the data: data crc mismatch
    let name = "events.out.tfevents.1.h.1.0";
    std::fs::write(dir.path().join(name), [first.clone(), second].concat()).unwrap();
    // The summary says the run ended: watch must still not report it as a clean end.
    std::fs::write(
        dir.path().join("run_summary.json"),
        r#"{"status": "completed", "metric_schema_version": 1}"#,
    )
    .unwrap();
    let out = watch(dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(name), "{stderr}");
    assert!(
        stderr.contains(&format!("byte {}", first.len())),
        "the offset of the second record: {stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("Run completed"), "{stdout}");
}

#[test]
fn a_run_stamped_with_another_schema_version_is_refused_as_extract_refuses_it() {
    for (file, stamp, says) in [
        (
            "run_summary.json",
            "2",
            "unsupported metric_schema_version 2: this tally reads version 1; upgrade tally",
        ),
        (
            "run_config.json",
            "\"1\"",
            "metric_schema_version must be the integer 1, found the string \"1\"",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("events.out.tfevents.1.h.1.0"),
            record(1, 10.0, &[("Loss/critic", 1.0)]),
        )
        .unwrap();
        let doc = format!(r#"{{"status": "running", "metric_schema_version": {stamp}}}"#);
        std::fs::write(dir.path().join(file), doc).unwrap();
        let out = watch(dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(file) && stderr.contains(says), "{stderr}");
    }
}

#[test]
fn watch_ends_with_0_saying_so_when_its_output_goes_away() {
    // Plain lines into a pipe whose reader has gone: the write fails, watch stops.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("events.out.tfevents.1.h.1.0"),
        record(1, 10.0, &[("charts/return", 1.0)]),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "--panel", "off", "--every", "0.2"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("watch kept running with nobody reading");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // Said once by the panel (why), once by watch (that it stopped).
    assert_eq!(stderr.matches("Broken pipe").count(), 1, "{stderr}");
    assert!(
        stderr.contains("tally: warning: panel: Broken pipe"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tally watch: the terminal went away; stopped"),
        "{stderr}"
    );
    // A watcher runs no run: nothing may say one goes on (docs/contract/panel.md "tally watch").
    assert!(!stderr.contains("the run goes on"), "{stderr}");
}

#[test]
fn a_run_that_ended_mid_record_is_shown_with_its_truncated_tail() {
    let dir = tempfile::tempdir().unwrap();
    let first = record(1, 10.0, &[("charts/return", 1.0)]);
    let torn = record(2, 11.0, &[("charts/return", 2.0)]);
    let name = "events.out.tfevents.1.h.1.0";
    let bytes = [first.clone(), torn[..torn.len() - 3].to_vec()].concat();
    std::fs::write(dir.path().join(name), bytes).unwrap();
    std::fs::write(
        dir.path().join("run_summary.json"),
        r#"{"status": "completed"}"#,
    )
    .unwrap();
    let out = watch(dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let warn = stdout
        .lines()
        .find(|l| l.starts_with("WARN "))
        .unwrap_or_else(|| panic!("no warning:\n{stdout}"));
    assert!(
        warn.contains(name)
            && warn.contains(&format!("truncated final record at byte {}", first.len())),
        "{warn}"
    );
    assert!(stdout.contains("Run completed"), "{stdout}");
}

#[test]
fn watch_of_thousands_of_empty_files_says_how_far_it_got_and_heeds_sigterm() {
    // Writers that never wrote: 3 000 empty event files. The walk is done a share at a time,
    // the panel says how far it got, and a signal ends watch (130) however far it got.
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3000 {
        std::fs::write(
            dir.path()
                .join(format!("events.out.tfevents.{}.h.{i}.0", 1_700_000_000 + i)),
            b"",
        )
        .unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "--panel", "off", "--every", "0.2"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stdout read as it comes: the signal is sent once the walk is under way.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let (seen, mut out) = (seen.clone(), child.stdout.take().unwrap());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut out, &mut buf) {
                if n == 0 {
                    break;
                }
                seen.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    let progress = "of 3000 event files read, none holds a record yet";
    let deadline = Instant::now() + Duration::from_secs(60);
    while !seen.lock().unwrap().contains(progress) {
        assert!(
            Instant::now() < deadline,
            "no progress shown: {}",
            seen.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("watch kept running after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{}", seen.lock().unwrap());
}
