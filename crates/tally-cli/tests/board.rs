//! `tally board` from the command line (`docs/contract/board.md`): it prints the URL to open,
//! serves the runs under its path there, and Ctrl-C ends it with exit 0.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tally_tfevents::{encode_scalar_event, RecordWriter};

#[test]
fn board_prints_its_url_serves_the_runs_and_ends_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("cartpole");
    std::fs::create_dir_all(&run).unwrap();
    let mut w = RecordWriter::new(Vec::new());
    for step in 0..5 {
        let mut buf = Vec::new();
        encode_scalar_event(
            step,
            100.0 + step as f64,
            &[("charts/return", 1.0)],
            &mut buf,
        );
        w.write_record(&buf).unwrap();
    }
    std::fs::write(run.join("events.out.tfevents.1.host"), w.into_inner()).unwrap();

    let (mut child, authority) = board(dir.path());
    assert!(authority.starts_with("127.0.0.1:"), "{authority}");
    let answer = get(&authority, "/api/runs");
    assert!(answer.contains("\"names\":[\"cartpole\"]"), "{answer}");

    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the board did not end on Ctrl-C");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
}

/// `tally board PATH --port 0`: the child and the address it serves.
fn board(path: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["board", "--port", "0"])
        .arg(path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("tally board: ")
        .expect(&line)
        .to_owned();
    let authority = url
        .strip_prefix("http://")
        .and_then(|u| u.strip_suffix('/'))
        .expect(&url)
        .to_owned();
    (child, authority)
}

/// The body of `GET target`.
fn get(authority: &str, target: &str) -> String {
    let mut s = TcpStream::connect(authority).unwrap();
    write!(s, "GET {target} HTTP/1.0\r\n\r\n").unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or(answer)
}

#[test]
fn a_tally_runs_summary_bottleneck_and_timeline_shares_are_served_as_the_cli_reads_them() {
    // A learner-bound demo run: the update is slowed, so Learning takes most of the iteration.
    let dir = tempfile::tempdir().unwrap();
    let log_root = format!("training.log_root={}", dir.path().display());
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args([
            "demo",
            "--panel",
            "off",
            "--iterations",
            "120",
            "--slow",
            "learning=6",
        ])
        .arg(&log_root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let run_dir = stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("run: "))
        .unwrap()
        .to_owned();
    let cli = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["diagnose", "--json", &run_dir])
        .output()
        .unwrap();
    let cli: Value = serde_json::from_slice(&cli.stdout).unwrap();

    let (mut child, authority) = board(dir.path());
    let runs: Value = serde_json::from_str(&get(&authority, "/api/runs")).unwrap();
    let name = runs["names"][0].as_str().unwrap().to_owned();
    let run: Value =
        serde_json::from_str(&get(&authority, &format!("/api/run?run={name}&width=10"))).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();

    assert_eq!(run["summary"]["status"], "completed", "{run}");
    assert_eq!(run["diagnosis"]["findings"], cli["findings"]);
    assert!(!cli["findings"].as_array().unwrap().is_empty(), "{cli}");
    // The timelines: Learning is the largest learner share in every bucket.
    let learner = run["timelines"]["learner"].as_array().unwrap();
    let buckets = run["timelines"]["steps"].as_array().unwrap().len();
    assert!((1..=10).contains(&buckets), "{run}");
    let share = |label: &str, i: usize| {
        learner
            .iter()
            .find(|b| b["label"] == label)
            .map_or(0.0, |b| b["pct"][i].as_f64().unwrap_or(0.0))
    };
    for i in 0..buckets {
        for band in learner.iter().filter(|b| b["label"] != "Learning") {
            assert!(
                share("Learning", i) > band["pct"][i].as_f64().unwrap_or(0.0),
                "{run}"
            );
        }
        let total: f64 = learner
            .iter()
            .map(|b| b["pct"][i].as_f64().unwrap_or(0.0))
            .sum();
        assert!(
            (total - 100.0).abs() < 1.0,
            "shares of bucket {i} add to {total}"
        );
    }
}
