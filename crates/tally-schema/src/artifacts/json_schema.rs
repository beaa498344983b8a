//! The committed `schemas/*.json`, derived from the typed artefacts.

use super::kind::ArtifactKind;
use super::manifest::RuntimeManifest;
use super::run_summary::RunSummary;
use super::soak::SoakArtifact;
use serde_json::{Map, Value};

/// The JSON Schema (draft 2020-12) of an artefact kind, generated from the typed artefacts.
///
/// Two additions the types cannot carry: a `$comment` marking the document as generated, and
/// (for `run_summary`) the optional top-level `backend_diagnostics` of the PPO path, which the
/// typed summary keeps among its producer additions. `x-unit` annotates a stable figure's unit.
/// The schema checks shapes and types; cross-field rules (a completed run's lifecycle fields,
/// the soak classification rules, the drain invariants) are [`crate::conformance`]'s.
pub fn json_schema(kind: ArtifactKind) -> Value {
    let schema = match kind {
        ArtifactKind::RunSummary => schemars::schema_for!(RunSummary),
        ArtifactKind::RuntimeManifest => schemars::schema_for!(RuntimeManifest),
        ArtifactKind::SoakArtifact => schemars::schema_for!(SoakArtifact),
    };
    let Value::Object(mut rest) = schema.to_value() else {
        unreachable!("a derived schema is an object")
    };
    // Header first, so a reader sees what the file is before its body.
    let mut out = Map::new();
    out.insert(
        "$schema".into(),
        rest.shift_remove("$schema").unwrap_or(Value::Null),
    );
    out.insert(
        "$comment".into(),
        Value::String(format!(
            "generated from crates/tally-schema/src/artifacts/; do not edit: regenerate \
             with `TALLY_BLESS=1 cargo test -p tally-schema --test json_schemas` \
             (file schemas/{})",
            kind.schema_file_name()
        )),
    );
    for key in ["title", "description"] {
        if let Some(v) = rest.shift_remove(key) {
            out.insert(key.into(), v);
        }
    }
    out.extend(rest);
    if kind == ArtifactKind::RunSummary {
        let diag = serde_json::json!({
            "description": "PPO path: the backend diagnostics the runtime manifest would carry \
                            (optional; shape validated, content the producer's).",
            "$ref": "#/$defs/BackendDiagnostics"
        });
        if let Some(Value::Object(props)) = out.get_mut("properties") {
            props.insert("backend_diagnostics".into(), diag);
        }
    }
    Value::Object(out)
}

/// [`json_schema`] as the committed file text: pretty JSON with a trailing newline.
pub fn json_schema_text(kind: ArtifactKind) -> String {
    let mut s =
        serde_json::to_string_pretty(&json_schema(kind)).expect("a JSON value always serialises");
    s.push('\n');
    s
}
