//! `run_summary.json` rules: the metric schema stamp, the summary's typed members, and its
//! embedded runtime manifest, judged as completed when the summary's status is `completed`
//! (`docs/contract/run-artifacts.md`, `run_summary.json`).

use super::manifest::check_manifest;
use super::shape::Shape;
use super::stamps::{int_stamp, Stamp};
use super::{child, describe, Violation};
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
    let completed = obj.get("status").and_then(Value::as_str) == Some("completed");
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
