//! The JSON validators: run summary, runtime manifest v1, soak artifact 0.3.0 (fail-closed
//! conformance checks) and `run_config.json` (typed parsing).

use serde::de::DeserializeOwned;
use serde_json::Value;
use tally_schema::artifacts::{RunConfig, RunSummary, RuntimeManifest, SoakArtifact};
use tally_schema::conformance::{self, Violation};

/// Each violation names a JSONPath and says what it expected.
fn well_formed(violations: &[Violation]) {
    for v in violations {
        assert!(
            v.path.starts_with('$'),
            "path {:?} is not a JSONPath",
            v.path
        );
        assert!(
            !v.expected.is_empty() && !v.found.is_empty(),
            "empty message: {v:?}"
        );
    }
}

/// What the conformance checks pass, the typed artefact reads: the two layers share one shape.
fn typed_reads<T: DeserializeOwned>(v: &Value, what: &str) {
    if let Err(e) = serde_json::from_value::<T>(v.clone()) {
        panic!("{what} passed validation but does not parse as one: {e}");
    }
}

/// The document, if the input is JSON; and the kind-detecting entry point on it.
fn document(input: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(input).ok()?;
    let report = conformance::validate(&v);
    well_formed(&report.violations);
    assert_eq!(report.kind, conformance::detect_kind(&v));
    let _ = conformance::describe(Some(&v));
    Some(v)
}

/// Fuzz target `run_summary`.
pub fn run_summary(input: &[u8]) {
    let Some(v) = document(input) else { return };
    let violations = conformance::validate_run_summary(&v);
    well_formed(&violations);
    if violations.is_empty() {
        typed_reads::<RunSummary>(&v, "a run summary");
    }
}

/// Fuzz target `runtime_manifest`: checked both as an early-failure and a completed run's.
pub fn runtime_manifest(input: &[u8]) {
    let Some(v) = document(input) else { return };
    let early = conformance::validate_runtime_manifest(&v, false);
    let completed = conformance::validate_runtime_manifest(&v, true);
    well_formed(&early);
    well_formed(&completed);
    // A completed run's manifest obeys every rule an early-failure one does, and more.
    for e in &early {
        assert!(
            completed.contains(e),
            "{e} is not reported for a completed run"
        );
    }
    if early.is_empty() {
        typed_reads::<RuntimeManifest>(&v, "a runtime manifest");
    }
}

/// Fuzz target `soak`.
pub fn soak(input: &[u8]) {
    let Some(v) = document(input) else { return };
    let violations = conformance::validate_soak_artifact(&v);
    well_formed(&violations);
    if violations.is_empty() {
        typed_reads::<SoakArtifact>(&v, "a soak artifact");
    }
}

/// Fuzz target `run_config`: whatever parses as a `RunConfig` writes back to the same one.
pub fn run_config(input: &[u8]) {
    let Ok(config) = serde_json::from_slice::<RunConfig>(input) else {
        return;
    };
    let text = serde_json::to_string(&config).unwrap();
    let again: RunConfig = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("a written run_config does not read back: {e}\n{text}"));
    assert_eq!(again, config, "run_config changed on a write and read");
}
