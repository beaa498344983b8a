//! Secrets kept out of every artefact a run writes (docs/contract/run-artifacts.md "Secrets"):
//! each leak a user reported, reproduced through the public writers and read back from disk.

use serde_json::{json, Value};
use std::sync::Arc;
use tally::run::{initial_summary, run_identity, write_run_config, write_run_summary};
use tally::schema::artifacts::{RunStatus, RuntimeManifest, WandbSettings};
use tally::sink::BackendStep;
use tally::trace::Tracer;
use tally::{Backend, Level, Logger, LoggerConfig, ManualClock, Sink, SinkError, StepInput};

const SECRETS: [&str; 9] = [
    "abcdefgh1234bearer",
    "wk-123",
    "pw-456",
    "sid-789",
    "dbpass-1",
    "argv-key-2",
    "cmd-key-3",
    "pair-key-4",
    "0123456789abcdef0123456789abcdef01234567",
];

fn leaky_config() -> Value {
    json!({
        "http": {"headers": ["Authorization: Bearer abcdefgh1234bearer"]},
        "wandb_key": "wk-123",
        "pwd": "pw-456",
        "cookie": "sid-789",
        "db_url": "postgresql://trainer:dbpass-1@db.internal:5432/runs",
        "argv": ["train.py", "--api-key", "argv-key-2", "--lr", "3e-4"],
        "command": "python train.py --api-key cmd-key-3 --seed 1",
        "env": [["api_key", "pair-key-4"], ["seed", "1"]],
        "note": "wandb login 0123456789abcdef0123456789abcdef01234567",
        "lr": 3e-4,
    })
}

fn assert_clean(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{s} leaked into {what}:\n{text}");
    }
}

fn identity(dir: &std::path::Path) -> tally::schema::artifacts::RunIdentity {
    let wandb = WandbSettings {
        notes: Some("resume with --api-key cmd-key-3".into()),
        ..Default::default()
    };
    let mut id = run_identity("sac", "go2", "mujoco", dir, &chrono::Utc::now(), wandb);
    id.extra
        .insert("launcher".into(), json!({"cookie": "sid-789"}));
    id
}

#[test]
fn run_config_keeps_its_shape_and_loses_every_reported_leak() {
    let dir = tempfile::tempdir().unwrap();
    let doc = write_run_config(
        dir.path(),
        identity(dir.path()),
        &leaky_config(),
        Vec::new(),
    )
    .unwrap();
    let text = std::fs::read_to_string(dir.path().join("run_config.json")).unwrap();
    assert_clean("run_config.json", &text);
    let v: Value = serde_json::from_str(&text).unwrap();
    let c = &v["config"];
    assert_eq!(
        c["db_url"],
        "postgresql://trainer:<redacted>@db.internal:5432/runs"
    );
    assert_eq!(
        c["argv"],
        json!(["train.py", "--api-key", "<redacted>", "--lr", "3e-4"])
    );
    assert_eq!(
        c["command"],
        "python train.py --api-key <redacted> --seed 1"
    );
    assert_eq!(c["env"], json!([["api_key", "<redacted>"], ["seed", "1"]]));
    assert_eq!(c["lr"], 3e-4);
    // The git commit is a 40-hex string too, and stays.
    if let Some(commit) = v["run"]["git"]["commit"].as_str() {
        assert_eq!(commit.len(), 40);
        assert!(!commit.contains("redacted"));
    }
    // The returned document (rewritten at close) is the redacted one.
    assert_clean(
        "the returned RunConfig",
        &serde_json::to_string(&doc).unwrap(),
    );
}

#[test]
fn run_summary_and_its_runtime_manifest_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = initial_summary(&identity(dir.path()));
    let mut m = RuntimeManifest::v1();
    m.collector_backend_device = Some(Some("cuda:0".into()));
    m.backend_diagnostics = Some(json!({"endpoint": "https://u:dbpass-1@grpc.example.com"}));
    m.shutdown = Some(leaky_config());
    s.runtime_manifest = Some(m);
    s.sink_errors
        .push("wandb sink failed: 401 for header Authorization: Bearer abcdefgh1234bearer".into());
    s.extra.insert("launch".into(), leaky_config());
    write_run_summary(dir.path(), &s).unwrap();
    let text = std::fs::read_to_string(dir.path().join("run_summary.json")).unwrap();
    assert_clean("run_summary.json", &text);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["runtime_manifest"]["collector_backend_device"], "cuda:0");
    assert_eq!(
        v["runtime_manifest"]["shutdown"]["argv"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(v["status"], "running");
}

fn config(dir: &std::path::Path) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "go2", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.backend = Backend::None;
    c.max_iterations = Some(10);
    c.trace = true;
    c.run_config = leaky_config();
    c
}

#[test]
fn a_logger_run_writes_no_secret_to_any_artefact_or_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::at(10.0));
    let mut log = Logger::with_sinks(config(dir.path()), vec![], clock).unwrap();
    log.status(Level::Info, "connecting with WANDB_API_KEY=wk-123");
    log.status(
        Level::Warning,
        "retrying postgresql://trainer:dbpass-1@db.internal/runs",
    );
    let messages = log.terminal().lock().unwrap().snapshot().messages;
    let shown: Vec<&str> = messages.iter().map(|m| m.text.as_str()).collect();
    assert_clean("the terminal", &shown.join("\n"));
    assert!(
        shown.contains(&"connecting with WANDB_API_KEY=<redacted>"),
        "{shown:?}"
    );
    let mut m = RuntimeManifest::v1();
    m.shutdown = Some(json!({"cmd": "python train.py --api-key cmd-key-3"}));
    log.set_runtime_manifest(m).unwrap();
    // An early manifest: the run stops before it could fill the completed-run members.
    log.close(RunStatus::Interrupted).unwrap();
    for f in [
        "run_config.json",
        "run_summary.json",
        tally::trace::TRACE_FILE,
    ] {
        let text = std::fs::read_to_string(log.run_dir().join(f)).unwrap();
        assert_clean(f, &text);
    }
}

#[test]
fn trace_process_and_thread_names_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::at(0.0));
    let path = dir.path().join("trace.json");
    let t = Tracer::start(
        &path,
        "train --api-key cmd-key-3",
        clock,
        Default::default(),
    )
    .unwrap();
    t.name_thread("worker token=pw-456");
    t.name_thread("worker token=pw-456");
    t.complete("learning", "learner", 0.0, 1.0);
    t.finish().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_clean("the trace", &text);
    let v: Value = serde_json::from_str(&text).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["train --api-key <redacted>", "worker token=<redacted>"]
    );
}

/// A sink whose SDK reports the endpoint, credentials and all, when it fails.
struct LeakySink;

impl Sink for LeakySink {
    fn name(&self) -> &str {
        "leaky"
    }
    fn write(&mut self, _step: &BackendStep) -> Result<(), SinkError> {
        Err("401 from https://trainer:dbpass-1@api.example.com (Authorization: Bearer abcdefgh1234bearer)".into())
    }
}

#[test]
fn a_sink_failure_text_is_redacted_on_the_terminal_and_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.trace = false;
    let clock = Arc::new(ManualClock::at(10.0));
    let mut log = Logger::with_sinks(c, vec![Box::new(LeakySink)], clock).unwrap();
    let step = StepInput::new(1)
        .env_steps(64)
        .metric("Loss/critic", 1.0)
        .iteration_time(0.01)
        .steps_this_iter(64.0);
    // The failure reaches the caller once, on this step or the flush after it (whichever
    // call finds it first).
    let reported = log.step(&step).is_err() || log.flush().is_err();
    assert!(reported, "the sink failure is reported");
    let messages = log.terminal().lock().unwrap().snapshot().messages;
    let shown: Vec<&str> = messages.iter().map(|m| m.text.as_str()).collect();
    assert!(
        shown
            .iter()
            .any(|m| m.contains("https://trainer:<redacted>@api.example.com")),
        "{shown:?}"
    );
    assert_clean("the terminal", &shown.join("\n"));
    let _ = log.close(RunStatus::Failed);
    let text = std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap();
    assert!(text.contains("leaky sink failed"), "{text}");
    assert_clean("run_summary.json", &text);
}
