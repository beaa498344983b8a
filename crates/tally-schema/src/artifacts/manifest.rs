//! Runtime manifest v1 and the `backend_diagnostics` shape it (or a PPO run summary) carries
//! (`docs/contract/manifest-and-soak.md`, runtime manifest v1).

use super::schema_transform::require_every_property;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Stable inference-flight counters of runtime manifest v1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct InferenceFlight {
    /// Requests queued at the last report.
    #[schemars(extend("x-unit" = "requests"))]
    pub queue_depth: u64,
    /// Ticks of publication lag at the last report.
    #[schemars(extend("x-unit" = "ticks"))]
    pub publication_lag: u64,
    /// Largest in-flight count since the previous successful report.
    #[schemars(extend("x-unit" = "requests"))]
    pub max_in_flight: u64,
    /// Largest publication lag since the previous successful report.
    #[schemars(extend("x-unit" = "ticks"))]
    pub max_publication_lag: u64,
    /// Experimental additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Stable replay-ingress counters of runtime manifest v1 (high water is run-cumulative).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct ReplayIngress {
    /// Configured ingress depth (slots).
    #[schemars(extend("x-unit" = "slots"))]
    pub ingress_depth: u64,
    /// Rows per ingress slot.
    #[schemars(extend("x-unit" = "rows"))]
    pub ingress_slot_rows: u64,
    /// Slots published.
    #[schemars(extend("x-unit" = "slots"))]
    pub published_sequence: u64,
    /// Slots released.
    #[schemars(extend("x-unit" = "slots"))]
    pub release_sequence: u64,
    /// Slots published and not released.
    #[schemars(extend("x-unit" = "slots"))]
    pub occupancy: u64,
    /// Highest occupancy of the whole run.
    #[schemars(extend("x-unit" = "slots"))]
    pub high_water_occupancy: u64,
    /// Times a writer waited on a full ingress.
    #[schemars(extend("x-unit" = "count"))]
    pub backpressure_waits: u64,
    /// Total seconds writers waited (finite, ≥ 0).
    #[schemars(range(min = 0.0), extend("x-unit" = "s"))]
    pub backpressure_wait_s: f64,
    /// Early returns.
    #[schemars(extend("x-unit" = "count"))]
    pub early_returns: u64,
    /// Dropped batches.
    #[schemars(extend("x-unit" = "count"))]
    pub dropped_batches: u64,
    /// Returns because the ingress was closed.
    #[schemars(extend("x-unit" = "count"))]
    pub closed_returns: u64,
    /// Returns because of a stop request.
    #[schemars(extend("x-unit" = "count"))]
    pub stop_returns: u64,
    /// Experimental additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The inference memory budget; only `ipc_event_count` is stable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct InferenceMemoryBudget {
    /// CUDA IPC events of the inference ring.
    #[schemars(extend("x-unit" = "count"))]
    pub ipc_event_count: u64,
    /// Experimental additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Runtime manifest v1 (`runtime_manifest` in `run_summary.json`).
///
/// Only `schema_version` is required (an early-failure manifest has nothing else); a
/// completed run's manifest must also carry the lifecycle fields (checked by the validator).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeManifest {
    /// Always [`crate::RUNTIME_MANIFEST_SCHEMA_VERSION`] for v1.
    #[schemars(range(min = 1, max = 1))]
    pub schema_version: u32,
    /// Inference ring capacity (positive when completed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1), extend("x-unit" = "slots"))]
    pub inference_ring_capacity: Option<u64>,
    /// Collector metric interval (positive when completed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1), extend("x-unit" = "ticks"))]
    pub collector_metrics_interval: Option<u64>,
    /// Device the collector backend is bound to. Absent = not reported; `Some(None)` = JSON
    /// null, allowed only when the backend needs no accelerator.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_present",
        deserialize_with = "de_present"
    )]
    #[schemars(with = "Option<String>")]
    pub collector_backend_device: Option<Option<String>>,
    /// Inference-flight counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_flight: Option<InferenceFlight>,
    /// Replay-ingress counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_ingress: Option<ReplayIngress>,
    /// Inference memory budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_memory_budget: Option<InferenceMemoryBudget>,
    /// Producer-owned backend diagnostics (shape validated, content opaque).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<BackendDiagnostics>")]
    pub backend_diagnostics: Option<Value>,
    /// Opaque shutdown diagnostics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown: Option<Value>,
    /// Experimental fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl RuntimeManifest {
    /// A v1 manifest with nothing but the version.
    pub fn v1() -> Self {
        RuntimeManifest {
            schema_version: crate::RUNTIME_MANIFEST_SCHEMA_VERSION,
            inference_ring_capacity: None,
            collector_metrics_interval: None,
            collector_backend_device: None,
            inference_flight: None,
            replay_ingress: None,
            inference_memory_budget: None,
            backend_diagnostics: None,
            shutdown: None,
            extra: Map::new(),
        }
    }
}

fn ser_present<S: Serializer>(v: &Option<Option<String>>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(inner) => inner.serialize(s),
        None => s.serialize_none(),
    }
}

fn de_present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// One backend optimisation in `backend_diagnostics.optimizations`: what was asked for, what
/// is in effect, and why not. Further members are the producer's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = require_every_property)]
pub struct BackendOptimization {
    /// Whether the configuration asked for the optimisation.
    pub requested: bool,
    /// Whether the optimisation is in effect.
    pub enabled: bool,
    /// Why a requested optimisation is not in effect; null when nothing was disabled.
    pub disable_reason: Option<String>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The shape tally requires of `backend_diagnostics` (in the runtime manifest, or at the top
/// level of a PPO `run_summary.json`): the physical backend's tensor-runtime snapshot.
///
/// Only the shape is the contract: an `optimizations` mapping from each optimisation's name
/// (CUDA graphs included) to its requested/enabled/disable_reason. The names, the values and
/// every other member belong to the producer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BackendDiagnostics {
    /// Each optimisation by name.
    pub optimizations: BTreeMap<String, BackendOptimization>,
    /// Producer additions.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
