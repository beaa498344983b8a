//! `tally demo ... training.trace_enabled=true` leaves a timeline of its real threads, and
//! `tally trace-stats` reports it, also after a SIGKILL (docs/contract/trace.md).

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const TRACE: &str = "perfetto_offpolicy_timeline.json";

fn tally() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tally"))
}

/// A traced demo run of `algo`; its run directory.
fn traced_demo(root: &Path, algo: &str, extra: &[&str]) -> PathBuf {
    let out = tally()
        .args([
            "demo",
            "--algo",
            algo,
            "--iterations",
            "40",
            "--num-envs",
            "64",
        ])
        .args(["--panel", "off", "training.trace_enabled=true"])
        .arg(format!("training.log_root={}", root.display()))
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    PathBuf::from(
        stdout
            .lines()
            .last()
            .unwrap()
            .strip_prefix("run: ")
            .unwrap(),
    )
}

fn events(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
        .as_array()
        .unwrap()
        .clone()
}

fn tid_named(ev: &[Value], name: &str) -> u64 {
    let tids: Vec<u64> = ev
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == name)
        .map(|e| e["tid"].as_u64().unwrap())
        .collect();
    assert_eq!(tids.len(), 1, "one thread named {name}");
    tids[0]
}

/// (start, end) in µs of every X span `name` on `tid`.
fn spans(ev: &[Value], name: &str, tid: u64) -> Vec<(f64, f64)> {
    ev.iter()
        .filter(|e| e["ph"] == "X" && e["name"] == name && e["tid"] == tid)
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            (ts, ts + e["dur"].as_f64().unwrap())
        })
        .collect()
}

fn overlap(a: &[(f64, f64)], b: &[(f64, f64)]) -> bool {
    a.iter().any(|x| b.iter().any(|y| x.0 < y.1 && y.0 < x.1))
}

fn stats(file: &Path) -> (Output, Value) {
    let out = tally()
        .args(["trace-stats", "--json"])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v = serde_json::from_slice(&out.stdout).unwrap();
    (out, v)
}

#[test]
fn a_sac_demo_trace_shows_learner_and_collector_threads_overlapping() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = traced_demo(tmp.path(), "sac", &["training.trace_cuda_events=true"]);
    let file = dir.join(TRACE);
    let ev = events(&file);
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run_summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["trace_path"], file.display().to_string());
    assert!(ev
        .iter()
        .any(|e| e["ph"] == "M" && e["name"] == "process_name"));
    let (learner, collector) = (tid_named(&ev, "learner"), tid_named(&ev, "collector"));
    assert_ne!(learner, collector);
    for phase in [
        "collector_wait",
        "inference",
        "inference_h2d",
        "inference_forward",
        "inference_d2h",
        "collector_release",
        "replay_batch_wait",
        "replay_sample",
        "learning",
        "logger/step",
    ] {
        assert_eq!(
            spans(&ev, phase, learner).len(),
            40,
            "{phase} once per iteration"
        );
    }
    for phase in [
        "inference_request",
        "learner_action_wait",
        "env_step",
        "env_step_action_validate",
        "env_step_apply_action",
        "env_step_backend",
        "env_step_update_state",
        "env_step_reset_done",
        "transition_extract",
        "replay_write",
        "metrics_publish",
    ] {
        assert!(
            spans(&ev, phase, collector).len() >= 40,
            "{phase} on the collector"
        );
    }
    // The collector steps environments while the learner learns.
    assert!(overlap(
        &spans(&ev, "env_step", collector),
        &spans(&ev, "learning", learner)
    ));
    // Sub-phases nest inside their phase.
    let steps = spans(&ev, "env_step", collector);
    for b in spans(&ev, "env_step_backend", collector) {
        assert!(
            steps.iter().any(|s| s.0 <= b.0 && b.1 <= s.1),
            "{b:?} nests"
        );
    }
    let gpu = tid_named(&ev, "gpu");
    assert_eq!(spans(&ev, "learning_kernels", gpu).len(), 40);
    let counters: Vec<_> = ev.iter().filter(|e| e["ph"] == "C").collect();
    assert!(counters.iter().any(|e| e["name"] == "replay_size"));
    assert!(counters.iter().any(|e| e["name"] == "ingress_depth"));

    // trace-stats agrees with the file.
    let (_, r) = stats(&file);
    assert_eq!(r["truncated"], false);
    assert_eq!(r["events"], ev.len());
    let mut durs: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["ph"] == "X") {
        durs.entry(e["name"].as_str().unwrap())
            .or_default()
            .push(e["dur"].as_f64().unwrap() / 1e3);
    }
    let rows = r["spans"].as_array().unwrap();
    assert_eq!(rows.len(), durs.len());
    for row in rows {
        let d = &durs[row["name"].as_str().unwrap()];
        assert_eq!(row["n"], d.len());
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        assert!(
            (row["mean_ms"].as_f64().unwrap() - mean).abs() < 1e-9,
            "{row}"
        );
        let mut s = d.clone();
        s.sort_by(f64::total_cmp);
        let (lo, hi) = (s[0], s[s.len() - 1]);
        let q: Vec<f64> = ["median_ms", "p90_ms", "p95_ms", "p99_ms"]
            .iter()
            .map(|k| row[*k].as_f64().unwrap())
            .collect();
        assert!(
            q.windows(2).all(|w| w[0] <= w[1]) && lo <= q[0] && q[3] <= hi,
            "{row}"
        );
        if s.len() % 2 == 1 {
            assert!((q[0] - s[s.len() / 2]).abs() < 1e-9, "{row}");
        } else {
            let m = (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0;
            assert!((q[0] - m).abs() < 1e-9, "{row}");
        }
    }
    let gaps = &r["iteration_gaps"];
    assert_eq!(
        gaps["n"], 39,
        "one interval between consecutive logger/step spans"
    );
    let mut starts: Vec<f64> = spans(&ev, "logger/step", learner)
        .iter()
        .map(|s| s.0)
        .collect();
    starts.sort_by(f64::total_cmp);
    let mean = (starts[39] - starts[0]) / 39.0 / 1e3;
    assert!((gaps["mean_ms"].as_f64().unwrap() - mean).abs() < 1e-6);
    let threads = r["threads"].as_array().unwrap();
    for name in ["learner", "collector", "gpu"] {
        let t = threads.iter().find(|t| t["name"] == name).unwrap();
        let share = t["busy_share"].as_f64().unwrap();
        assert!(share > 0.0 && share <= 1.0, "{t}");
    }
}

/// `training.trace_cuda_events` is the runner's switch for timing GPU work with CUDA events:
/// the demo has no GPU, so with it the SAC-family demo puts its stand-in kernels on a `gpu`
/// track, and without it there is no such track (docs/contract/trace.md "Options").
#[test]
fn a_demo_trace_has_a_gpu_track_only_when_cuda_events_are_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = traced_demo(tmp.path(), "sac", &[]);
    let ev = events(&dir.join(TRACE));
    assert!(
        !ev.iter()
            .any(|e| e["ph"] == "M" && e["args"]["name"] == "gpu"),
        "no gpu track without training.trace_cuda_events"
    );
    assert!(!ev.iter().any(|e| e["name"] == "learning_kernels"));
    let learner = tid_named(&ev, "learner");
    assert_eq!(spans(&ev, "learning", learner).len(), 40);
    let tmp = tempfile::tempdir().unwrap();
    let dir = traced_demo(tmp.path(), "sac", &["training.trace_cuda_events=true"]);
    let ev = events(&dir.join(TRACE));
    let gpu = tid_named(&ev, "gpu");
    assert_eq!(spans(&ev, "learning_kernels", gpu).len(), 40);
    assert_eq!(spans(&ev, "replay_ingress_h2d_submit", gpu).len(), 40);
}

#[test]
fn an_appo_demo_trace_has_the_rollout_on_its_collector() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("traces");
    let dir = traced_demo(
        tmp.path(),
        "appo",
        &[
            &format!("training.trace_output_dir={}", out.display()),
            "training.trace_thread_time=true",
        ],
    );
    assert!(!dir.join(TRACE).exists());
    let ev = events(&out.join(TRACE));
    let (learner, collector) = (tid_named(&ev, "learner"), tid_named(&ev, "collector"));
    for phase in [
        "collector_wait",
        "replay_stage",
        "replay_sample",
        "learning",
        "weight_publish",
    ] {
        assert_eq!(spans(&ev, phase, learner).len(), 40, "{phase}");
    }
    let rollouts = spans(&ev, "rollout", collector);
    assert!(rollouts.len() >= 40);
    assert!(spans(&ev, "env_step", collector).len() >= 16 * 40);
    assert!(overlap(&rollouts, &spans(&ev, "learning", learner)));
    assert!(
        ev.iter()
            .filter(|e| e["ph"] == "X")
            .all(|e| e["tdur"].as_f64().is_some()),
        "thread time on every span"
    );
}

#[test]
fn a_sigkilled_run_leaves_a_trace_that_trace_stats_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let mut child = tally()
        .args([
            "demo",
            "--iterations",
            "100000",
            "--num-envs",
            "64",
            "--panel",
            "off",
        ])
        .arg("training.trace_enabled=true")
        .arg(format!("training.log_root={}", root.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let find = || {
        walk(root)
            .into_iter()
            .find(|p| p.file_name().is_some_and(|n| n == TRACE))
    };
    let t0 = Instant::now();
    let file = loop {
        if let Some(f) = find().filter(|f| count_steps(f) >= 20) {
            break f;
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "no trace grew");
        std::thread::sleep(Duration::from_millis(100));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        serde_json::from_str::<Value>(&text).is_err(),
        "no closing ]"
    );
    let (out, r) = stats(&file);
    assert_eq!(r["truncated"], true);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("closing ']'"), "{stderr}");
    let steps = r["spans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "logger/step")
        .unwrap();
    assert!(steps["n"].as_u64().unwrap() >= 20);
}

#[test]
fn a_file_that_is_not_a_trace_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, "{\"not\": \"a trace\"}").unwrap();
    let out = tally().arg("trace-stats").arg(&bad).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.json") && stderr.contains("traceEvents"),
        "{stderr}"
    );
    let x = tmp.path().join("x.json");
    std::fs::write(&x, "[{\"name\": \"s\", \"ph\": \"X\", \"ts\": 1}]").unwrap();
    let out = tally().arg("trace-stats").arg(&x).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("event #0") && stderr.contains("dur"),
        "{stderr}"
    );
}

fn count_steps(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .map(|t| t.matches("\"logger/step\"").count())
        .unwrap_or(0)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn an_on_policy_demo_trace_shows_rollout_and_learning_taking_turns() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = traced_demo(tmp.path(), "ppo", &[]);
    let ev = events(&dir.join(TRACE));
    let (learner, collector) = (tid_named(&ev, "learner"), tid_named(&ev, "collector"));
    let (learning, rollouts) = (
        spans(&ev, "learning", learner),
        spans(&ev, "rollout", collector),
    );
    assert_eq!((learning.len(), rollouts.len()), (40, 40));
    // The learner asks for a rollout and waits for it: the threads never work at once.
    assert!(!overlap(&learning, &rollouts));
}
