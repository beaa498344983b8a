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

mod json_schema;
mod kind;
mod manifest;
mod run_config;
mod run_summary;
mod schema_transform;
mod soak;
mod status;

pub use json_schema::{json_schema, json_schema_text};
pub use kind::ArtifactKind;

pub use manifest::{
    BackendDiagnostics, BackendOptimization, InferenceFlight, InferenceMemoryBudget, ReplayIngress,
    RuntimeManifest,
};
pub use run_config::{
    GitInfo, Hardware, LoggerFacts, MlflowSettings, RunConfig, RunIdentity, TrackioSettings,
    UserMetric, WandbSettings,
};
pub use run_summary::{
    HealthFinding, HealthWebhookProgress, RemoteSinkProgress, ResumeSegment, RunSummary,
};
pub use soak::{
    FailureClassification, ShutdownCleanup, ShutdownException, ShutdownSnapshot, SoakArtifact,
    SoakContext, SoakEnvironment, SoakFdClasses, SoakGpuDevice, SoakGpuSample, SoakMonitorSettings,
    SoakPostShutdown, SoakProcessSample, SoakProgressSample, SoakResourceSummary, SoakSample,
    SoakSoftware, SoakSource, SoakStatus, NORMAL_COMPLETION, SHUTDOWN_CLASSIFICATIONS,
};
pub use status::RunStatus;
