//! Pins run_config.json / run_summary.json: typed, atomic, no secrets, crash-safe.

use chrono::{TimeZone, Utc};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use tally::run::{
    initial_summary, run_identity, write_run_config, write_run_summary, RUN_CONFIG_FILE,
    RUN_SUMMARY_FILE,
};
use tally::schema::artifacts::{RunStatus, RunSummary, RuntimeManifest, WandbSettings};

fn identity(dir: &std::path::Path) -> tally::schema::artifacts::RunIdentity {
    let start = Utc.with_ymd_and_hms(2026, 3, 9, 10, 30, 0).unwrap();
    let wandb = WandbSettings {
        project: Some("unilab".into()),
        tags: vec!["sac".into()],
        ..Default::default()
    };
    run_identity("sac", "go2", "mujoco", dir, &start, wandb)
}

#[test]
fn run_config_has_identity_host_and_resolved_config_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"algo": {"lr": 3e-4}, "wandb": {"api_key": "sk-live-123", "project": "unilab"},
                        "list": [{"HF_TOKEN": "hf_abc"}], "db_password": "hunter2"});
    write_run_config(dir.path(), identity(dir.path()), &config, Vec::new()).unwrap();
    let text = std::fs::read_to_string(dir.path().join(RUN_CONFIG_FILE)).unwrap();
    for secret in ["sk-live-123", "hf_abc", "hunter2"] {
        assert!(
            !text.contains(secret),
            "secret {secret} leaked into run_config.json"
        );
    }
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["run"]["algo"], "sac");
    assert_eq!(
        v["run"]["start_time_utc"],
        "2026-03-09T10:30:00.000000+00:00"
    );
    assert!(!v["run"]["hostname"].as_str().unwrap().is_empty());
    assert!(
        v["run"]["hardware"]["cpu_total_cores"]
            .as_str()
            .unwrap()
            .parse::<u32>()
            .unwrap()
            >= 1
    );
    assert_eq!(v["run"]["wandb"]["project"], "unilab");
    assert_eq!(v["config"]["algo"]["lr"], 3e-4);
    assert_eq!(v["config"]["wandb"]["project"], "unilab");
    assert_eq!(v["config"]["wandb"]["api_key"], "<redacted>");
    assert!(text.ends_with("}\n"));
}

#[test]
fn run_summary_round_trips_with_schema_version_and_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = initial_summary(&identity(dir.path()));
    s.status = RunStatus::Completed;
    s.completed_iterations = 200;
    s.final_mean_reward = Some(12.5);
    let mut m = RuntimeManifest::v1();
    m.collector_backend_device = Some(None);
    m.inference_ring_capacity = Some(4);
    s.runtime_manifest = Some(m);
    write_run_summary(dir.path(), &s).unwrap();
    let text = std::fs::read_to_string(dir.path().join(RUN_SUMMARY_FILE)).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["metric_schema_version"], 1,
        "metric_schema_version = 1 at the top level (docs/contract/run-artifacts.md)"
    );
    assert!(v["metric_schema_version"].is_u64());
    assert_eq!(v["status"], "completed");
    assert_eq!(
        v["best_mean_reward"],
        Value::Null,
        "never logged → null, not 0"
    );
    assert_eq!(v["runtime_manifest"]["schema_version"], 1);
    assert!(v["runtime_manifest"]
        .as_object()
        .unwrap()
        .contains_key("collector_backend_device"));
    assert_eq!(
        v["runtime_manifest"]["collector_backend_device"],
        Value::Null
    );
    let back: RunSummary = serde_json::from_str(&text).unwrap();
    assert_eq!(back, s);
}

#[test]
fn rewriting_leaves_no_temp_files_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = initial_summary(&identity(dir.path()));
    for i in 0..5 {
        s.completed_iterations = i;
        write_run_summary(dir.path(), &s).unwrap();
    }
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [RUN_SUMMARY_FILE]);
}

/// Child half of `sigkill_during_summary_rewrites_never_leaves_half_a_file`.
#[test]
#[ignore = "spawned as a child process by sigkill_during_summary_rewrites_never_leaves_half_a_file"]
fn child_summary_writer() {
    let Some(dir) = std::env::var_os("TALLY_SUMMARY_CHILD_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let mut s = initial_summary(&identity(&dir));
    // A large extra payload makes each write span many syscalls.
    s.extra
        .insert("padding".into(), Value::String("x".repeat(256 * 1024)));
    let mut out = std::io::stdout();
    for i in 0.. {
        s.completed_iterations = i;
        write_run_summary(&dir, &s).unwrap();
        use std::io::Write;
        writeln!(out, "wrote {i}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn sigkill_during_summary_rewrites_never_leaves_half_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_summary_writer",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("TALLY_SUMMARY_CHILD_DIR", dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut last = 0u64;
    while last < 20 {
        let line = lines.next().expect("child exited early").unwrap();
        if let Some(n) = line.strip_prefix("wrote ") {
            last = n.parse().unwrap();
        }
    }
    child.kill().unwrap(); // SIGKILL, mid-rewrite with high probability
    child.wait().unwrap();
    let text = std::fs::read_to_string(dir.path().join(RUN_SUMMARY_FILE)).unwrap();
    let s: RunSummary =
        serde_json::from_str(&text).expect("run_summary.json is complete JSON after SIGKILL");
    assert!(
        s.completed_iterations >= last,
        "summary went backwards: {} < {last}",
        s.completed_iterations
    );
}
