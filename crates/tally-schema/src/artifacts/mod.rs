//! Typed run artefacts: `run_config.json`, `run_summary.json`, runtime manifest v1, soak
//! artifact 0.3.0, and their JSON Schemas.
//!
//! Producers build these structs and serialise them; consumers that must report every
//! violation of an arbitrary file work on `serde_json::Value` instead ([`crate::conformance`]).
//! Field names are the contract's (`docs/contract/run-artifacts.md`,
//! `docs/contract/manifest-and-soak.md`). Every struct keeps unknown fields in `extra` so a
//! newer producer's optional additions survive a read-modify-write (additive evolution,
//! `docs/contract/schema.md`). [`json_schema`] derives the committed `schemas/*.json` from
//! these types; `x-unit` there names a figure's unit, which `tests/evolution.rs` holds stable.

mod manifest;
mod run_config;
mod run_summary;
mod soak;

pub use manifest::{
    BackendDiagnostics, BackendOptimization, InferenceFlight, InferenceMemoryBudget, ReplayIngress,
    RuntimeManifest,
};
pub use run_config::{
    GitInfo, Hardware, LoggerFacts, RunConfig, RunIdentity, UserMetric, WandbSettings,
};
pub use run_summary::{RemoteSinkProgress, ResumeSegment, RunSummary};
pub use soak::{
    FailureClassification, ShutdownCleanup, ShutdownException, ShutdownSnapshot, SoakArtifact,
    SoakContext, SoakEnvironment, SoakFdClasses, SoakGpuDevice, SoakGpuSample, SoakMonitorSettings,
    SoakPostShutdown, SoakProcessSample, SoakProgressSample, SoakResourceSummary, SoakSample,
    SoakSoftware, SoakSource, SoakStatus,
};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How a run ended (or that it has not yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still running: the summary is a periodic snapshot.
    Running,
    /// Reached its last iteration and closed cleanly.
    Completed,
    /// Stopped by an error in the training loop.
    Failed,
    /// The collector process died.
    CollectorDied,
    /// Stopped by the user (Ctrl-C) or a signal.
    Interrupted,
    /// Ended normally (completed or interrupted), but storage faults lost steps: the event file
    /// lacks `lost_iterations` records (docs/contract/run-artifacts.md "Storage faults").
    Degraded,
}

impl RunStatus {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::CollectorDied => "collector_died",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Degraded => "degraded",
        }
    }
}

impl std::str::FromStr for RunStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            RunStatus::Running,
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::CollectorDied,
            RunStatus::Interrupted,
            RunStatus::Degraded,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
        .ok_or_else(|| format!("unknown run status '{s}': expected running, completed, failed, collector_died, interrupted or degraded"))
    }
}

/// Schema transform: every declared property is required (a nullable one may be null, but
/// must be there), as the soak artifact and the optimisation entries demand.
fn require_every_property(schema: &mut schemars::Schema) {
    let keys: Vec<Value> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().map(Value::String).collect())
        .unwrap_or_default();
    schema.insert("required".into(), Value::Array(keys));
}

/// The three artefact kinds tally validates, each with its own version namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArtifactKind {
    /// `run_summary.json` (metric schema v1 stamped at its top level).
    RunSummary,
    /// A runtime manifest v1 on its own.
    RuntimeManifest,
    /// A soak-monitor artifact 0.3.0.
    SoakArtifact,
}

impl ArtifactKind {
    /// Every kind.
    pub const ALL: [ArtifactKind; 3] = [
        ArtifactKind::RunSummary,
        ArtifactKind::RuntimeManifest,
        ArtifactKind::SoakArtifact,
    ];

    /// A short name for messages: `run_summary`, `runtime_manifest`, `soak_artifact`.
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactKind::RunSummary => "run_summary",
            ArtifactKind::RuntimeManifest => "runtime_manifest",
            ArtifactKind::SoakArtifact => "soak_artifact",
        }
    }

    /// The file name of the kind's JSON Schema document under `schemas/`.
    pub fn schema_file_name(self) -> &'static str {
        match self {
            ArtifactKind::RunSummary => "run_summary.schema.json",
            ArtifactKind::RuntimeManifest => "runtime_manifest.v1.schema.json",
            ArtifactKind::SoakArtifact => "soak_artifact.0.3.0.schema.json",
        }
    }
}

/// The JSON Schema (draft 2020-12) of an artefact kind, generated from the types above.
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
