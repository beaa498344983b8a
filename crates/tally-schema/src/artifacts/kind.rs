//! The three artefact kinds tally validates, each with its own version namespace
//! (`docs/contract/schema.md`).

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
