//! Runtime manifest v1 rules, on a standalone manifest and on the one a run summary embeds
//! (`docs/contract/manifest-and-soak.md`, runtime manifest v1).

use crate::{fixture, show};
use serde_json::{json, Value};
use tally_schema::artifacts::RuntimeManifest;
use tally_schema::conformance::{
    accelerator_context, validate, validate_run_summary, validate_runtime_manifest,
};

/// Invalid fixtures breaking a manifest rule → the rule (comment) and its violations.
pub(crate) const INVALID: &[(&str, &[(&str, &str)])] = &[
    // backend_diagnostics shape: disable_reason is a string or null
    (
        "run_summary.manifest_backend_diagnostics_disable_reason_type",
        &[
            ("$.runtime_manifest.backend_diagnostics.optimizations.fused_reset.disable_reason", "a string or null"),
        ],
    ),
    // backend_diagnostics shape: the optimizations mapping exists
    (
        "run_summary.manifest_backend_diagnostics_no_optimizations",
        &[
            ("$.runtime_manifest.backend_diagnostics.optimizations", "an object mapping names to BackendOptimization objects"),
        ],
    ),
    // backend_diagnostics shape: each optimisation says whether it was requested
    (
        "run_summary.manifest_backend_diagnostics_requested_missing",
        &[
            ("$.runtime_manifest.backend_diagnostics.optimizations.fused_reset.requested", "a bool"),
        ],
    ),
    // replay_ingress.backpressure_wait_s is finite and ≥ 0
    (
        "run_summary.manifest_backpressure_wait_negative",
        &[
            ("$.runtime_manifest.replay_ingress.backpressure_wait_s", "a number ≥ 0"),
        ],
    ),
    // replay_ingress.backpressure_wait_s is a number
    (
        "run_summary.manifest_backpressure_wait_string",
        &[
            ("$.runtime_manifest.replay_ingress.backpressure_wait_s", "a number ≥ 0"),
        ],
    ),
    // collector_backend_device is a non-empty string or null
    (
        "run_summary.manifest_device_empty",
        &[
            ("$.runtime_manifest.collector_backend_device", "a non-empty device string, or null when the backend needs no accelerator"),
        ],
    ),
    // a completed run's manifest carries collector_backend_device
    (
        "run_summary.manifest_device_missing",
        &[
            ("$.runtime_manifest.collector_backend_device", "a non-empty device string, or null when the backend needs no accelerator (required when the run completed)"),
        ],
    ),
    // the device may be null only when the backend needs no accelerator
    (
        "run_summary.manifest_device_null_with_accelerator",
        &[
            ("$.runtime_manifest.collector_backend_device", "a non-empty device string (collector_accelerator_context \"cuda\" names an accelerator, so the backend needs one)"),
        ],
    ),
    // inference_flight.max_publication_lag is a stable non-negative integer
    (
        "run_summary.manifest_flight_field_missing",
        &[
            ("$.runtime_manifest.inference_flight.max_publication_lag", "an integer ≥ 0"),
        ],
    ),
    // a completed run's manifest carries the inference_flight mapping
    (
        "run_summary.manifest_flight_missing",
        &[
            ("$.runtime_manifest.inference_flight", "an inference_flight mapping (required when the run completed)"),
        ],
    ),
    // inference_flight.max_in_flight is a non-negative integer
    (
        "run_summary.manifest_flight_negative",
        &[
            ("$.runtime_manifest.inference_flight.max_in_flight", "an integer ≥ 0"),
        ],
    ),
    // inference_flight is a mapping
    (
        "run_summary.manifest_flight_not_mapping",
        &[
            ("$.runtime_manifest.inference_flight", "an object (InferenceFlight)"),
        ],
    ),
    // replay_ingress.dropped_batches is a non-negative integer
    (
        "run_summary.manifest_ingress_count_float",
        &[
            ("$.runtime_manifest.replay_ingress.dropped_batches", "an integer ≥ 0"),
        ],
    ),
    // a completed run's manifest carries the replay_ingress mapping
    (
        "run_summary.manifest_ingress_missing",
        &[
            ("$.runtime_manifest.replay_ingress", "a replay_ingress mapping (required when the run completed)"),
        ],
    ),
    // replay_ingress.occupancy is a non-negative integer
    (
        "run_summary.manifest_ingress_occupancy_string",
        &[
            ("$.runtime_manifest.replay_ingress.occupancy", "an integer ≥ 0"),
        ],
    ),
    // an inference_memory_budget carries ipc_event_count
    (
        "run_summary.manifest_ipc_event_count_missing",
        &[
            ("$.runtime_manifest.inference_memory_budget.ipc_event_count", "an integer ≥ 0"),
        ],
    ),
    // ipc_event_count is a non-negative integer
    (
        "run_summary.manifest_ipc_event_count_negative",
        &[
            ("$.runtime_manifest.inference_memory_budget.ipc_event_count", "an integer ≥ 0"),
        ],
    ),
    // collector_metrics_interval is a positive integer (a bool is not)
    (
        "run_summary.manifest_metrics_interval_bool",
        &[
            ("$.runtime_manifest.collector_metrics_interval", "a positive integer"),
        ],
    ),
    // a completed run's manifest carries collector_metrics_interval
    (
        "run_summary.manifest_metrics_interval_null",
        &[
            ("$.runtime_manifest.collector_metrics_interval", "a positive integer (required when the run completed)"),
        ],
    ),
    // a completed run's manifest carries inference_ring_capacity
    (
        "run_summary.manifest_ring_capacity_missing",
        &[
            ("$.runtime_manifest.inference_ring_capacity", "a positive integer (required when the run completed)"),
        ],
    ),
    // inference_ring_capacity is a positive integer
    (
        "run_summary.manifest_ring_capacity_zero",
        &[
            ("$.runtime_manifest.inference_ring_capacity", "a positive integer"),
        ],
    ),
    // present stable members are typed even in an early-failure manifest
    (
        "runtime_manifest.early_failure_ring_capacity_zero",
        &[
            ("$.inference_ring_capacity", "a positive integer"),
        ],
    ),
    // only runtime manifest schema 1 is accepted
    (
        "runtime_manifest.schema_version_2",
        &[
            ("$.schema_version", "a supported runtime manifest schema version (only 1)"),
        ],
    ),
    // schema_version is the integer 1: a bool is rejected
    (
        "runtime_manifest.schema_version_bool",
        &[
            ("$.schema_version", "the integer 1 (runtime manifest schema version; a bool is not a version)"),
        ],
    ),
    // schema_version is the integer 1: a float is rejected
    (
        "runtime_manifest.schema_version_float",
        &[
            ("$.schema_version", "the integer 1 (runtime manifest schema version; a float is not a version)"),
        ],
    ),
    // an early-failure manifest still needs schema_version
    (
        "runtime_manifest.schema_version_missing",
        &[
            ("$.schema_version", "the integer 1 (runtime manifest schema version; a consumer never guesses a missing version)"),
        ],
    ),
    // schema_version is the integer 1: a string is rejected
    (
        "runtime_manifest.schema_version_string",
        &[
            ("$.schema_version", "the integer 1 (runtime manifest schema version; a string is not a version)"),
        ],
    ),
];

#[test]
fn an_early_failure_manifest_needs_only_its_version_and_a_completed_one_its_lifecycle() {
    // An early-failure manifest needs only schema_version; a completed run's also needs the
    // ring capacity, metrics interval, backend device, inference_flight and replay_ingress.
    let early = json!({"schema_version": 1});
    assert!(validate_runtime_manifest(&early, false).is_empty());
    let got = validate_runtime_manifest(&early, true);
    let paths: Vec<&str> = got.iter().map(|x| x.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "$.inference_ring_capacity",
            "$.collector_metrics_interval",
            "$.collector_backend_device",
            "$.inference_flight",
            "$.replay_ingress",
        ],
        "{}",
        show(&got)
    );
    assert!(got
        .iter()
        .all(|x| x.expected.contains("required when the run completed")));
    let completed = fixture("valid", "runtime_manifest.completed");
    assert!(validate_runtime_manifest(&completed, true).is_empty());
    // The embedded manifest follows the summary's status.
    let mut failed = fixture("valid", "run_summary.failed_early_manifest");
    assert!(validate_run_summary(&failed).is_empty());
    failed["status"] = json!("completed");
    assert_eq!(validate_run_summary(&failed).len(), 5);
}

#[test]
fn a_null_device_is_accepted_only_without_an_accelerator_context() {
    // collector_backend_device may be null only when the backend needs no accelerator; the
    // manifest's collector_accelerator_context is the evidence.
    let mut m = fixture("valid", "runtime_manifest.completed");
    m["collector_backend_device"] = Value::Null;
    for (ctx, ok) in [
        (None, true),
        (Some(Value::Null), true),
        (Some(json!("none")), true),
        (Some(json!("CPU")), true),
        (Some(json!("")), true),
        (Some(json!("cuda")), false),
        (Some(json!("cuda:1")), false),
    ] {
        match &ctx {
            Some(c) => m["collector_accelerator_context"] = c.clone(),
            None => {
                m.as_object_mut()
                    .unwrap()
                    .remove("collector_accelerator_context");
            }
        }
        let got = validate_runtime_manifest(&m, true);
        assert_eq!(got.is_empty(), ok, "context {ctx:?}:{}", show(&got));
        assert_eq!(accelerator_context(&m).is_none(), ok);
    }
}

#[test]
fn a_standalone_manifest_is_checked_as_early_failure_by_default() {
    // Without word that the run completed, a manifest is checked as an early-failure one.
    let r = validate(&json!({"schema_version": 1}));
    assert!(r.is_ok(), "{}", show(&r.violations));
}

#[test]
fn the_producers_typed_manifest_passes_the_validator() {
    // What tally's own producer writes (RuntimeManifest::v1 and a demo-like completed one).
    let v = serde_json::to_value(RuntimeManifest::v1()).unwrap();
    assert!(validate_runtime_manifest(&v, false).is_empty());
    let m: RuntimeManifest =
        serde_json::from_value(fixture("valid", "runtime_manifest.completed")).unwrap();
    assert!(validate_runtime_manifest(&serde_json::to_value(&m).unwrap(), true).is_empty());
}
