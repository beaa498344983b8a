//! The tally contract: canonical metric schema v1, legacy map, and run-artefact types. No I/O.
//!
//! The schema is a contract between producers (the logger) and consumers (extract, export,
//! validate): a closed registry of canonical tags with units, owners, roles and cross-rank
//! reductions, two open families, and a versioned evolution policy (`docs/contract/schema.md`).
//!
//! - [`registry`] (every canonical tag), [`types`] (the vocabularies a spec is written in),
//!   [`lookup`](mod@lookup) (a tag resolved or refused), [`legacy`] (pre-schema names), [`rft`] (Trinity's
//!   names), [`algo`] (the algorithm table), [`health`] (which tags the default health rules
//!   watch), [`render`] (`tally schema`, `docs/metrics.md`);
//! - [`artifacts`]: the JSON documents a run writes, typed, and the committed `schemas/*.json`;
//! - [`conformance`]: those documents checked fail-closed, every violation reported.

pub mod algo;
pub mod artifacts;
pub mod conformance;
pub mod health;
pub mod legacy;
pub mod lookup;
pub mod registry;
pub mod render;
pub mod rft;
pub mod types;

pub use algo::{Algo, AlgoSpec, ALGOS};
pub use health::{health_class, HealthClass, HealthTags, HEALTH_TAGS};
pub use legacy::{legacy_mapping, LegacyRow, RetiredName, LEGACY, RETIRED};
pub use lookup::{
    canonical_groups, in_canonical_group, input_spec, lookup, metric, metric_index, spec_index,
    validate_user_tag, SchemaError, TagRef, MAX_USER_TAG_LEN,
};
pub use registry::{FamilySpec, MetricSpec, ReservedTerm, FAMILIES, METRICS, METRIC_COUNT};
pub use types::{Input, Owner, Profile, Profiles, Reduction, Role, SummaryStat, Unit};

/// The TensorBoard / W&B metric schema version, stored at the top level of `run_summary.json`.
pub const METRIC_SCHEMA_VERSION: u32 = 1;

/// The runtime-manifest schema version (`runtime_manifest.schema_version`): an independent namespace.
pub const RUNTIME_MANIFEST_SCHEMA_VERSION: u32 = 1;

/// The soak-monitor artifact version: an independent namespace, and a string.
pub const SOAK_ARTIFACT_SCHEMA_VERSION: &str = "0.3.0";
