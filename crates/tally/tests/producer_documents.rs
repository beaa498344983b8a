//! The documents a runner records for `run_summary.json` beside its steps — the runtime
//! manifest and PPO's top-level `backend_diagnostics` — are checked when set, and a run closed
//! `completed` with a manifest that fails the completed-run check is recorded `failed`
//! (docs/contract/manifest-and-soak.md "Checked when recorded"). Every outcome is judged by the
//! same validator `tally validate` runs.

use serde_json::{json, Value};
use std::sync::Arc;
use tally::schema::artifacts::{InferenceFlight, ReplayIngress, RuntimeManifest};
use tally::schema::conformance::validate_run_summary;
use tally::{Error, Logger, LoggerConfig, ManualClock, Profile, RunStatus, StepInput};

fn logger(dir: &std::path::Path, profile: Profile) -> Logger {
    let algo = if profile == Profile::OnPolicy {
        "ppo"
    } else {
        "sac"
    };
    let mut c = LoggerConfig::new(algo, "task", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.profile = profile;
    c.max_iterations = Some(3);
    Logger::with_sinks(c, vec![], Arc::new(ManualClock::at(100.0))).unwrap()
}

fn summary(log: &Logger) -> Value {
    let text = std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A manifest with every member a completed run's needs.
fn complete_manifest() -> RuntimeManifest {
    let mut m = RuntimeManifest::v1();
    m.inference_ring_capacity = Some(4);
    m.collector_metrics_interval = Some(1);
    m.collector_backend_device = Some(Some("cuda:0".into()));
    m.inference_flight = Some(InferenceFlight::default());
    m.replay_ingress = Some(ReplayIngress {
        ingress_depth: 8,
        ingress_slot_rows: 64,
        ..Default::default()
    });
    m
}

fn steps(log: &mut Logger, first: u64, n: u64) {
    for i in first..first + n {
        log.step(&StepInput::new(i).iteration_time(0.5)).unwrap();
    }
}

/// The `$` paths an error lists.
fn violation_paths(e: &Error) -> Vec<String> {
    match e {
        Error::Document { violations, .. } => violations.iter().map(|v| v.path.clone()).collect(),
        other => panic!("expected a document error, got {other}"),
    }
}

#[test]
fn a_manifest_failing_v1_is_refused_naming_every_path() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path(), Profile::SacFamily);
    let mut m = RuntimeManifest::v1();
    m.inference_ring_capacity = Some(0);
    m.collector_backend_device = Some(Some("  ".into()));
    m.replay_ingress = Some(ReplayIngress {
        backpressure_wait_s: f64::NAN,
        ..Default::default()
    });
    let e = log.set_runtime_manifest(m).unwrap_err();
    let paths = violation_paths(&e);
    for p in [
        "$.inference_ring_capacity",
        "$.collector_backend_device",
        "$.replay_ingress.backpressure_wait_s",
    ] {
        assert!(paths.iter().any(|x| x == p), "{p} not in {paths:?}");
        assert!(e.to_string().contains(p), "{e}");
    }
    assert!(
        e.to_string().contains("NaN"),
        "the found value is named: {e}"
    );
    steps(&mut log, 1, 3);
    log.close(RunStatus::Completed).unwrap();
    let s = summary(&log);
    assert!(s["runtime_manifest"].is_null(), "nothing of it recorded");
    assert_eq!(s["status"], "completed");
}

#[test]
fn a_refused_manifest_keeps_the_one_recorded_before() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path(), Profile::SacFamily);
    log.set_runtime_manifest(complete_manifest()).unwrap();
    let mut bad = complete_manifest();
    bad.collector_metrics_interval = Some(0);
    let e = log.set_runtime_manifest(bad).unwrap_err();
    assert_eq!(violation_paths(&e), ["$.collector_metrics_interval"]);
    steps(&mut log, 1, 3);
    log.close(RunStatus::Completed).unwrap();
    let s = summary(&log);
    assert_eq!(s["runtime_manifest"]["collector_metrics_interval"], 1);
    assert!(validate_run_summary(&s).is_empty());
}

#[test]
fn a_json_manifest_gets_every_violation_not_just_the_first_type_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path(), Profile::SacFamily);
    let e = log
        .set_runtime_manifest_json(json!({
            "schema_version": 1,
            "inference_flight": {"queue_depth": -1},
            "replay_ingress": "full",
            "collector_metrics_interval": 2.5,
        }))
        .unwrap_err();
    let paths = violation_paths(&e);
    for p in [
        "$.inference_flight.queue_depth",
        "$.replay_ingress",
        "$.collector_metrics_interval",
    ] {
        assert!(paths.iter().any(|x| x == p), "{p} not in {paths:?}");
    }
    let e = log
        .set_runtime_manifest_json(json!({"schema_version": 2}))
        .unwrap_err();
    assert_eq!(violation_paths(&e), ["$.schema_version"]);
    log.set_runtime_manifest_json(json!({"schema_version": 1, "experimental": {"x": 1}}))
        .unwrap();
    log.close(RunStatus::Interrupted).unwrap();
    assert_eq!(summary(&log)["runtime_manifest"]["experimental"]["x"], 1);
}

#[test]
fn closing_completed_with_an_early_manifest_records_the_run_failed() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path(), Profile::SacFamily);
    // Valid while the run goes: an early manifest needs only schema_version.
    log.set_runtime_manifest(RuntimeManifest::v1()).unwrap();
    steps(&mut log, 1, 3);
    let e = log.close(RunStatus::Completed).unwrap_err();
    let paths = violation_paths(&e);
    for p in [
        "$.runtime_manifest.inference_ring_capacity",
        "$.runtime_manifest.collector_metrics_interval",
        "$.runtime_manifest.collector_backend_device",
        "$.runtime_manifest.inference_flight",
        "$.runtime_manifest.replay_ingress",
    ] {
        assert!(paths.iter().any(|x| x == p), "{p} not in {paths:?}");
    }
    assert!(log.is_closed());
    let s = summary(&log);
    assert_eq!(s["status"], "failed");
    assert!(
        s["status_reason"]
            .as_str()
            .is_some_and(|r| r.contains("$.runtime_manifest.replay_ingress")),
        "{s}"
    );
    // Nothing logged is lost, and the summary is valid as what it says it is.
    assert_eq!(s["completed_iterations"], 3);
    assert_eq!(s["persisted_iterations"], 3);
    assert_eq!(validate_run_summary(&s), vec![]);
    // Had it said completed, the validator would refuse it: the check is the validator's.
    let mut claimed = s.clone();
    claimed["status"] = json!("completed");
    assert!(!validate_run_summary(&claimed).is_empty());
}

#[test]
fn closing_completed_with_a_complete_manifest_stays_completed() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path(), Profile::SacFamily);
    log.set_runtime_manifest(complete_manifest()).unwrap();
    steps(&mut log, 1, 3);
    log.close(RunStatus::Completed).unwrap();
    let s = summary(&log);
    assert_eq!(s["status"], "completed");
    assert!(s.get("status_reason").is_none());
    assert_eq!(validate_run_summary(&s), vec![]);
}

#[test]
fn an_interrupted_run_keeps_its_early_manifest_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path(), Profile::SacFamily);
    log.set_runtime_manifest(RuntimeManifest::v1()).unwrap();
    steps(&mut log, 1, 2);
    log.close(RunStatus::Interrupted).unwrap();
    let s = summary(&log);
    assert_eq!(s["status"], "interrupted");
    assert_eq!(validate_run_summary(&s), vec![]);
}

#[test]
fn ppo_backend_diagnostics_reach_the_summary_redacted_and_valid() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path(), Profile::OnPolicy);
    log.set_backend_diagnostics(json!({
        "optimizations": {
            "cuda_graph": {"requested": true, "enabled": false,
                            "disable_reason": "capture failed", "api_key": "sk-diag-secret-1"},
            "tf32": {"requested": false, "enabled": false, "disable_reason": null},
        },
        "endpoint": "https://user:diag-pass-2@cache.internal/x",
    }))
    .unwrap();
    steps(&mut log, 0, 3);
    log.close(RunStatus::Completed).unwrap();
    let s = summary(&log);
    let d = &s["backend_diagnostics"];
    assert_eq!(d["optimizations"]["cuda_graph"]["enabled"], false);
    assert_eq!(
        d["optimizations"]["cuda_graph"]["disable_reason"],
        "capture failed"
    );
    let text = s.to_string();
    assert!(!text.contains("sk-diag-secret-1"), "{text}");
    assert!(!text.contains("diag-pass-2"), "{text}");
    assert_eq!(validate_run_summary(&s), vec![]);
}

#[test]
fn malformed_backend_diagnostics_are_refused_naming_every_path() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path(), Profile::OnPolicy);
    let e = log
        .set_backend_diagnostics(json!({
            "optimizations": {"cuda_graph": {"requested": "yes", "enabled": true}},
        }))
        .unwrap_err();
    let paths = violation_paths(&e);
    for p in [
        "$.backend_diagnostics.optimizations.cuda_graph.requested",
        "$.backend_diagnostics.optimizations.cuda_graph.disable_reason",
    ] {
        assert!(paths.iter().any(|x| x == p), "{p} not in {paths:?}");
    }
    let e = log.set_backend_diagnostics(json!([1, 2])).unwrap_err();
    assert_eq!(violation_paths(&e), ["$.backend_diagnostics"]);
    log.close(RunStatus::Interrupted).unwrap();
    assert!(summary(&log).get("backend_diagnostics").is_none());
}

#[test]
fn backend_diagnostics_at_the_top_level_are_the_on_policy_path_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path(), Profile::SacFamily);
    let e = log
        .set_backend_diagnostics(json!({"optimizations": {}}))
        .unwrap_err();
    assert!(matches!(e, Error::Config(_)), "{e}");
    assert!(e.to_string().contains("runtime manifest"), "{e}");
}

#[test]
fn setters_after_close_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path(), Profile::OnPolicy);
    log.close(RunStatus::Interrupted).unwrap();
    assert!(matches!(
        log.set_runtime_manifest(RuntimeManifest::v1()),
        Err(Error::Closed)
    ));
    assert!(matches!(
        log.set_backend_diagnostics(json!({"optimizations": {}})),
        Err(Error::Closed)
    ));
}
