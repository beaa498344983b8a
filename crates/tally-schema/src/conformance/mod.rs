//! Conformance of artefact documents to their contract: `run_summary.json`, runtime manifest v1
//! and soak artifact 0.3.0, checked on `serde_json::Value` with every violation reported.
//!
//! Two layers. The *shape* of each artefact (which members exist, their JSON types, ranges
//! and enumerations) is read from the JSON Schema generated from the typed artefacts
//! ([`crate::artifacts::json_schema`]) by `shape.rs`, so the committed schemas and these checks
//! cannot disagree on a type. On top of it, hand-written *contract* rules: the three version
//! stamps (`stamps.rs`: each wrong kind of value with its own message), a completed run's
//! lifecycle fields and the null-device rule (`manifest.rs`), the run summary's embedded
//! manifest (`run_summary.rs`), and the soak artifact's pass/failure classification and drain
//! invariants (`soak.rs`). The rules share a violation and its wording (`violation.rs`), a
//! member's JSONPath (`path.rs`) and what counts as an integer (`value.rs`). The rules:
//! `docs/contract/run-artifacts.md`, `docs/contract/manifest-and-soak.md`; versions and
//! evolution: `docs/contract/schema.md`.
//!
//! Two deliberate differences from a generic JSON Schema validator: an integer is a JSON
//! number written without a fraction or exponent (`1.0` is not the integer 1; JSON Schema says
//! it is), and an unsupported version stops the rules of that version namespace (refuse to
//! guess) while the other namespaces are still checked.

mod manifest;
mod path;
mod run_summary;
mod shape;
mod soak;
mod soak_verdict;
mod stamps;
mod value;
mod violation;

pub use manifest::accelerator_context;
pub use shape::{SHAPE_KEYWORDS, UTC_SECOND_PATTERN};
pub use soak_verdict::{summary_verdict, SummaryVerdict};
pub use violation::{describe, Violation};
// The shutdown classification vocabulary is the soak artefact's; also public here, its first home.
pub use crate::artifacts::{NORMAL_COMPLETION, SHUTDOWN_CLASSIFICATIONS};

use crate::artifacts::ArtifactKind;
use serde_json::Value;

/// The largest artefact file a validator reads: 16 MiB. Artefacts are kilobytes; parsing a
/// JSON document takes many times its size in memory, so the cap is what bounds it
/// (`docs/contract/consumers.md` "validate reads bounded input"). A soak reads the run summary
/// it embeds under the same cap.
pub const MAX_ARTIFACT_BYTES: u64 = 16 * 1024 * 1024;

/// The outcome of [`validate`]: the detected kind (None when it could not be told) and every
/// violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// What the document was taken for.
    pub kind: Option<ArtifactKind>,
    /// Every violation, in document order of the rules.
    pub violations: Vec<Violation>,
}

impl Report {
    /// Whether the document passed.
    pub fn is_ok(&self) -> bool {
        self.kind.is_some() && self.violations.is_empty()
    }
}

/// Tell an artefact's kind from its members.
///
/// A soak artifact has any of its own top-level members (`run_summary`, `monitor`,
/// `resource_summary`, ...) or a dotted string `schema_version`; a run summary has
/// `metric_schema_version`, `runtime_manifest`, `completed_iterations` or `total_env_steps`;
/// a runtime manifest has `schema_version` or one of its lifecycle members. None otherwise.
pub fn detect_kind(v: &Value) -> Option<ArtifactKind> {
    let obj = v.as_object()?;
    let has = |keys: &[&str]| keys.iter().any(|k| obj.contains_key(*k));
    let dotted_version = obj
        .get("schema_version")
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains('.'));
    if dotted_version
        || has(&[
            "run_summary",
            "monitor",
            "resource_summary",
            "samples",
            "post_shutdown",
            "failure_classification",
            "console_log",
        ])
    {
        return Some(ArtifactKind::SoakArtifact);
    }
    if has(&[
        "metric_schema_version",
        "runtime_manifest",
        "completed_iterations",
        "total_env_steps",
    ]) {
        return Some(ArtifactKind::RunSummary);
    }
    if has(&[
        "schema_version",
        "inference_ring_capacity",
        "collector_metrics_interval",
        "collector_backend_device",
        "inference_flight",
        "replay_ingress",
        "inference_memory_budget",
    ]) {
        return Some(ArtifactKind::RuntimeManifest);
    }
    None
}

/// Detect the kind and validate. A standalone runtime manifest is checked as not completed
/// (only `schema_version` required, present members typed), the default of
/// `docs/contract/manifest-and-soak.md`; use [`validate_runtime_manifest`] with `completed = true` for a completed run's.
pub fn validate(v: &Value) -> Report {
    match detect_kind(v) {
        Some(kind) => Report {
            kind: Some(kind),
            violations: validate_as(kind, v),
        },
        None => {
            let found = match v.as_object() {
                Some(obj) => {
                    let keys: Vec<&str> = obj.keys().take(6).map(String::as_str).collect();
                    if keys.is_empty() {
                        "an empty object".to_owned()
                    } else {
                        format!("an object with keys {}", keys.join(", "))
                    }
                }
                None => describe(Some(v)),
            };
            Report {
                kind: None,
                violations: vec![Violation::new(
                    "$",
                    "a run summary (metric_schema_version), a runtime manifest (schema_version) \
                     or a soak artifact (schema_version \"0.3.0\")",
                    found,
                )],
            }
        }
    }
}

/// Validate `v` as the given kind (a standalone runtime manifest as not completed).
pub fn validate_as(kind: ArtifactKind, v: &Value) -> Vec<Violation> {
    match kind {
        ArtifactKind::RunSummary => validate_run_summary(v),
        ArtifactKind::RuntimeManifest => validate_runtime_manifest(v, false),
        ArtifactKind::SoakArtifact => validate_soak_artifact(v),
    }
}

/// Validate a `run_summary.json`: the metric schema stamp (the integer 1), the summary's typed
/// members, the embedded runtime manifest with completed = (`status == "completed"`), and a
/// top-level `backend_diagnostics` (PPO path) for shape.
pub fn validate_run_summary(v: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    run_summary::check_run_summary(v, "$", false, &mut out);
    out
}

/// Validate a runtime manifest v1. `completed` adds the lifecycle members a completed run's
/// manifest must carry; an early-failure manifest needs only `schema_version`.
pub fn validate_runtime_manifest(v: &Value, completed: bool) -> Vec<Violation> {
    let mut out = Vec::new();
    manifest::check_manifest(v, "$", completed, &mut out);
    out
}

/// Validate a soak-monitor artifact 0.3.0: every member with its type
/// (`docs/contract/manifest-and-soak.md`), then
/// the pass or failure rules (classification precedence, shutdown contract, the embedded run
/// summary, and on a pass the replay-ingress / inference-flight drain invariants).
pub fn validate_soak_artifact(v: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    soak::check_soak(v, &mut out);
    out
}
