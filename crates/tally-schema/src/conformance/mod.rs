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
//! invariants (`soak.rs`). The rules: `docs/contract/run-artifacts.md`,
//! `docs/contract/manifest-and-soak.md`; versions and evolution: `docs/contract/schema.md`.
//!
//! Two deliberate differences from a generic JSON Schema validator: an integer is a JSON
//! number written without a fraction or exponent (`1.0` is not the integer 1; JSON Schema says
//! it is), and an unsupported version stops the rules of that version namespace (refuse to
//! guess) while the other namespaces are still checked.

mod manifest;
mod run_summary;
mod shape;
mod soak;
mod soak_verdict;
mod stamps;

pub use manifest::accelerator_context;
pub use shape::{SHAPE_KEYWORDS, UTC_SECOND_PATTERN};
pub use soak_verdict::{summary_verdict, SummaryVerdict};
// The shutdown classification vocabulary is the soak artefact's; also public here, its first home.
pub use crate::artifacts::{NORMAL_COMPLETION, SHUTDOWN_CLASSIFICATIONS};

use crate::artifacts::ArtifactKind;
use serde_json::Value;
use std::fmt;

/// One broken rule: where, what the contract expects there, and what the file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSONPath of the offending member, e.g. `$.runtime_manifest.replay_ingress.occupancy`.
    pub path: String,
    /// What the rule expects.
    pub expected: String,
    /// What was found (`missing` when the member is absent).
    pub found: String,
}

impl Violation {
    fn new(path: impl Into<String>, expected: impl Into<String>, found: impl Into<String>) -> Self {
        Violation {
            path: path.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: expected {}, found {}",
            self.path, self.expected, self.found
        )
    }
}

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

/// How a violation names a found value: `missing`, `null`, `the bool true`, `the integer 2`,
/// `the float 1.0`, `the string "1"`, `an array of 3 items`, `an object`.
pub fn describe(v: Option<&Value>) -> String {
    match v {
        None => "missing".to_owned(),
        Some(Value::Null) => "null".to_owned(),
        Some(Value::Bool(b)) => format!("the bool {b}"),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => format!("the integer {n}"),
        Some(Value::Number(n)) => format!("the float {:?}", n.as_f64().unwrap_or(f64::NAN)),
        Some(Value::String(s)) => {
            let shown: String = s.chars().take(60).collect();
            let more = if shown.len() < s.len() { "…" } else { "" };
            format!(
                "the string {}{more}",
                serde_json::to_string(&shown).unwrap_or_default()
            )
        }
        Some(Value::Array(a)) => match a.len() {
            1 => "an array of 1 item".to_owned(),
            n => format!("an array of {n} items"),
        },
        Some(Value::Object(o)) if o.is_empty() => "an empty object".to_owned(),
        Some(Value::Object(_)) => "an object".to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// Paths and small readers the rules share.

/// The JSONPath of member `key` under `path`: `$.a.b`, or `$.a["x/y"]` for a key that is not
/// an identifier.
fn child(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", serde_json::to_string(key).unwrap_or_default())
    }
}

/// Whether `v` is a JSON integer (written without a fraction or exponent).
fn is_int(v: &Value) -> bool {
    v.as_number().is_some_and(|n| n.is_i64() || n.is_u64())
}

/// Whether `v` is a string with something other than whitespace.
fn non_empty_str(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

/// `s` as a JSON string literal.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describe_names_each_json_type_distinctly() {
        assert_eq!(describe(None), "missing");
        assert_eq!(describe(Some(&json!(true))), "the bool true");
        assert_eq!(describe(Some(&json!(1))), "the integer 1");
        assert_eq!(describe(Some(&json!(1.0))), "the float 1.0");
        assert_eq!(describe(Some(&json!("1"))), "the string \"1\"");
        assert_eq!(describe(Some(&json!([1]))), "an array of 1 item");
    }

    #[test]
    fn child_paths_quote_keys_that_are_not_identifiers() {
        assert_eq!(child("$", "replay_ingress"), "$.replay_ingress");
        assert_eq!(
            child("$.context.environment", "CUDA_VISIBLE_DEVICES"),
            "$.context.environment.CUDA_VISIBLE_DEVICES"
        );
        assert_eq!(
            child("$.x", "timeout/stale_tick"),
            "$.x[\"timeout/stale_tick\"]"
        );
    }
}
