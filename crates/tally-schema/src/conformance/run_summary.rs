//! `run_summary.json` rules: the metric schema stamp, the summary's typed members, its storage
//! counts against its status (`docs/contract/run-artifacts.md` "Storage faults"), and its
//! embedded runtime manifest, judged as completed when the summary's status is `completed`
//! (`docs/contract/run-artifacts.md`, `run_summary.json`).

use super::manifest::check_manifest;
use super::path::child;
use super::shape::Shape;
use super::stamps::{int_stamp, Stamp};
use super::violation::{describe, Violation};
use crate::artifacts::ArtifactKind;
use serde_json::Value;

/// `soak`: the summary is embedded in a passing soak artifact, which needs a runtime manifest
/// (the soak runs an off-policy job).
pub(super) fn check_run_summary(v: &Value, path: &str, soak: bool, out: &mut Vec<Violation>) {
    let Some(obj) = v.as_object() else {
        out.push(Violation::new(
            path,
            "a run summary object",
            describe(Some(v)),
        ));
        return;
    };
    let stamp = int_stamp(
        obj.get("metric_schema_version"),
        &child(path, "metric_schema_version"),
        "metric schema version",
        out,
    );
    if stamp != Stamp::Unsupported {
        Shape::of(ArtifactKind::RunSummary).check_document(
            v,
            path,
            &["metric_schema_version", "runtime_manifest"],
            out,
        );
    }
    let status = obj.get("status").and_then(Value::as_str);
    check_storage_counts(obj, status, path, out);
    let completed = status == Some("completed");
    let mpath = child(path, "runtime_manifest");
    match obj.get("runtime_manifest") {
        Some(Value::Null) | None if soak => out.push(Violation::new(
            mpath,
            "a runtime manifest (a soak runs an off-policy job, which records one)",
            describe(obj.get("runtime_manifest")),
        )),
        Some(Value::Null) | None => {}
        Some(m) => check_manifest(m, &mpath, completed, out),
    }
}

/// The storage counts never contradict the status: a closed run keeps nothing pending, a
/// `completed` run lost nothing (it would be `degraded`), a `degraded` one lost something, and
/// the file never holds more iterations than were completed. Absent counts (older summaries)
/// are not judged.
fn check_storage_counts(
    obj: &serde_json::Map<String, Value>,
    status: Option<&str>,
    path: &str,
    out: &mut Vec<Violation>,
) {
    let count = |k: &str| obj.get(k).and_then(Value::as_u64);
    let closed = status.is_some_and(|s| s != "running");
    if let Some(p) = count("pending_iterations").filter(|&p| closed && p > 0) {
        out.push(Violation::new(
            child(path, "pending_iterations"),
            "0 once the run is closed (kept steps are written or counted lost at close)",
            describe(Some(&Value::from(p))),
        ));
    }
    match (status, count("lost_iterations")) {
        (Some("completed"), Some(l)) if l > 0 => out.push(Violation::new(
            child(path, "lost_iterations"),
            "0 in a completed run (a run that lost steps is degraded)",
            describe(Some(&Value::from(l))),
        )),
        (Some("degraded"), Some(0)) => out.push(Violation::new(
            child(path, "lost_iterations"),
            "at least 1 in a degraded run",
            "the integer 0".to_owned(),
        )),
        _ => {}
    }
    // `completed_iterations` is the last step's iteration; a runner counting from 0 (on-policy)
    // has logged one step more than that (docs/contract/run-artifacts.md "Storage faults").
    if let (Some(p), Some(c)) = (count("persisted_iterations"), count("completed_iterations")) {
        let most = c.saturating_add(1);
        if p > most {
            out.push(Violation::new(
                child(path, "persisted_iterations"),
                format!("at most completed_iterations + 1 ({most}: a runner may count from 0)"),
                describe(Some(&Value::from(p))),
            ));
        }
    }
}
