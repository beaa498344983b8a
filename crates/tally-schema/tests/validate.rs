//! Pins the artefact validators: every valid fixture passes, every invalid fixture breaks exactly its rule.
//!
//! Fixtures live in `testdata/artifacts/` (see its README): `valid/` holds hand-written
//! artefacts following the reference rules, `invalid/<kind>.<rule>.json` is a valid one with
//! one edit. The table below names, for each invalid file, the rule it breaks and every
//! violation it must produce (path and expected text), no more and no fewer.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tally_schema::artifacts::{ArtifactKind, RunSummary, RuntimeManifest, SoakArtifact};
use tally_schema::conformance::{
    accelerator_context, detect_kind, validate, validate_as, validate_run_summary,
    validate_runtime_manifest, validate_soak_artifact, Violation,
};

fn fixtures(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/artifacts")
        .join(sub)
}

fn load(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fixture(sub: &str, name: &str) -> Value {
    load(&fixtures(sub).join(format!("{name}.json")))
}

fn stems(sub: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(fixtures(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// The kind a fixture's file name announces (`run_summary.*`, `runtime_manifest.*`, `soak.*`).
fn named_kind(stem: &str) -> ArtifactKind {
    match stem.split('.').next().unwrap() {
        "run_summary" => ArtifactKind::RunSummary,
        "runtime_manifest" => ArtifactKind::RuntimeManifest,
        "soak" => ArtifactKind::SoakArtifact,
        other => panic!("fixture {stem}: unknown kind prefix {other}"),
    }
}

fn show(vs: &[Violation]) -> String {
    vs.iter().map(|v| format!("\n  {v}")).collect()
}

#[test]
fn every_valid_fixture_is_detected_and_passes() {
    let names = stems("valid");
    assert!(names.len() >= 12, "{names:?}");
    for name in names {
        let v = fixture("valid", &name);
        let report = validate(&v);
        assert_eq!(
            report.kind,
            Some(named_kind(&name)),
            "{name}: detected kind"
        );
        assert!(report.is_ok(), "{name}:{}", show(&report.violations));
    }
}

#[test]
fn valid_fixtures_deserialise_into_the_typed_artifacts() {
    // The schema documents are generated from these types: the fixtures must be their instances.
    for name in stems("valid") {
        let v = fixture("valid", &name);
        let back = match named_kind(&name) {
            ArtifactKind::RunSummary => {
                serde_json::to_value(serde_json::from_value::<RunSummary>(v.clone()).unwrap())
            }
            ArtifactKind::RuntimeManifest => {
                serde_json::to_value(serde_json::from_value::<RuntimeManifest>(v.clone()).unwrap())
            }
            ArtifactKind::SoakArtifact => {
                serde_json::to_value(serde_json::from_value::<SoakArtifact>(v.clone()).unwrap())
            }
        }
        .unwrap();
        assert_eq!(back, v, "{name}: the typed round trip changed the document");
    }
}

/// Invalid fixture → the rule it breaks (comment) and its violations (path, expected).
const INVALID: &[(&str, &[(&str, &str)])] = &[
    // seed 000: top-level backend_diagnostics (PPO path) is fail-closed for shape: each optimisation's enabled
    (
        "run_summary.backend_diagnostics_enabled_missing",
        &[
            ("$.backend_diagnostics.optimizations.cuda_graph.enabled", "a bool"),
        ],
    ),
    // seed 000: top-level backend_diagnostics (PPO path) must be a mapping
    (
        "run_summary.backend_diagnostics_not_object",
        &[
            ("$.backend_diagnostics", "an object (BackendDiagnostics)"),
        ],
    ),
    // reference §3: total_env_steps is a stable run_summary field
    (
        "run_summary.field_missing",
        &[
            ("$.total_env_steps", "an integer ≥ 0"),
        ],
    ),
    // reference §3: completed_iterations is an integer
    (
        "run_summary.field_wrong_type",
        &[
            ("$.completed_iterations", "an integer ≥ 0"),
        ],
    ),
    // seed 000: backend_diagnostics shape: disable_reason is a string or null
    (
        "run_summary.manifest_backend_diagnostics_disable_reason_type",
        &[
            ("$.runtime_manifest.backend_diagnostics.optimizations.fused_reset.disable_reason", "a string or null"),
        ],
    ),
    // seed 000: backend_diagnostics shape: the optimisations mapping must exist
    (
        "run_summary.manifest_backend_diagnostics_no_optimizations",
        &[
            ("$.runtime_manifest.backend_diagnostics.optimizations", "an object mapping names to BackendOptimization objects"),
        ],
    ),
    // seed 000: backend_diagnostics shape: each optimisation's requested
    (
        "run_summary.manifest_backend_diagnostics_requested_missing",
        &[
            ("$.runtime_manifest.backend_diagnostics.optimizations.fused_reset.requested", "a bool"),
        ],
    ),
    // reference §7: replay_ingress.backpressure_wait_s finite and >= 0
    (
        "run_summary.manifest_backpressure_wait_negative",
        &[
            ("$.runtime_manifest.replay_ingress.backpressure_wait_s", "a number ≥ 0"),
        ],
    ),
    // reference §7: replay_ingress.backpressure_wait_s is a number
    (
        "run_summary.manifest_backpressure_wait_string",
        &[
            ("$.runtime_manifest.replay_ingress.backpressure_wait_s", "a number ≥ 0"),
        ],
    ),
    // seed 000: collector_backend_device is a non-empty string or null
    (
        "run_summary.manifest_device_empty",
        &[
            ("$.runtime_manifest.collector_backend_device", "a non-empty device string, or null when the backend needs no accelerator"),
        ],
    ),
    // seed 000: collector_backend_device is required in a completed manifest
    (
        "run_summary.manifest_device_missing",
        &[
            ("$.runtime_manifest.collector_backend_device", "a non-empty device string, or null when the backend needs no accelerator (required when the run completed)"),
        ],
    ),
    // seed 000: null device only when the backend needs no accelerator
    (
        "run_summary.manifest_device_null_with_accelerator",
        &[
            ("$.runtime_manifest.collector_backend_device", "a non-empty device string (collector_accelerator_context \"cuda\" names an accelerator, so the backend needs one)"),
        ],
    ),
    // reference §7: inference_flight.max_publication_lag is a stable non-negative int
    (
        "run_summary.manifest_flight_field_missing",
        &[
            ("$.runtime_manifest.inference_flight.max_publication_lag", "an integer ≥ 0"),
        ],
    ),
    // reference §7: a completed manifest needs the inference_flight mapping
    (
        "run_summary.manifest_flight_missing",
        &[
            ("$.runtime_manifest.inference_flight", "an inference_flight mapping (required when the run completed)"),
        ],
    ),
    // reference §7: inference_flight.max_in_flight is a non-negative int
    (
        "run_summary.manifest_flight_negative",
        &[
            ("$.runtime_manifest.inference_flight.max_in_flight", "an integer ≥ 0"),
        ],
    ),
    // reference §7: inference_flight must be a mapping
    (
        "run_summary.manifest_flight_not_mapping",
        &[
            ("$.runtime_manifest.inference_flight", "an object (InferenceFlight)"),
        ],
    ),
    // reference §7: replay_ingress.dropped_batches is a non-negative int
    (
        "run_summary.manifest_ingress_count_float",
        &[
            ("$.runtime_manifest.replay_ingress.dropped_batches", "an integer ≥ 0"),
        ],
    ),
    // reference §7: a completed manifest needs the replay_ingress mapping
    (
        "run_summary.manifest_ingress_missing",
        &[
            ("$.runtime_manifest.replay_ingress", "a replay_ingress mapping (required when the run completed)"),
        ],
    ),
    // reference §7: replay_ingress.occupancy is a non-negative int
    (
        "run_summary.manifest_ingress_occupancy_string",
        &[
            ("$.runtime_manifest.replay_ingress.occupancy", "an integer ≥ 0"),
        ],
    ),
    // reference §7: inference_memory_budget.ipc_event_count when the budget exists
    (
        "run_summary.manifest_ipc_event_count_missing",
        &[
            ("$.runtime_manifest.inference_memory_budget.ipc_event_count", "an integer ≥ 0"),
        ],
    ),
    // reference §7: ipc_event_count is a non-negative int
    (
        "run_summary.manifest_ipc_event_count_negative",
        &[
            ("$.runtime_manifest.inference_memory_budget.ipc_event_count", "an integer ≥ 0"),
        ],
    ),
    // reference §7: collector_metrics_interval is a positive int (a bool is not)
    (
        "run_summary.manifest_metrics_interval_bool",
        &[
            ("$.runtime_manifest.collector_metrics_interval", "a positive integer"),
        ],
    ),
    // reference §7: a completed manifest needs collector_metrics_interval
    (
        "run_summary.manifest_metrics_interval_null",
        &[
            ("$.runtime_manifest.collector_metrics_interval", "a positive integer (required when the run completed)"),
        ],
    ),
    // reference §7: a completed manifest needs inference_ring_capacity
    (
        "run_summary.manifest_ring_capacity_missing",
        &[
            ("$.runtime_manifest.inference_ring_capacity", "a positive integer (required when the run completed)"),
        ],
    ),
    // reference §7: inference_ring_capacity is a positive int
    (
        "run_summary.manifest_ring_capacity_zero",
        &[
            ("$.runtime_manifest.inference_ring_capacity", "a positive integer"),
        ],
    ),
    // seed 000: only metric schema 1 is accepted
    (
        "run_summary.metric_version_2",
        &[
            ("$.metric_schema_version", "a supported metric schema version (only 1)"),
        ],
    ),
    // seed 000: metric_schema_version is the integer 1, a bool is rejected
    (
        "run_summary.metric_version_bool",
        &[
            ("$.metric_schema_version", "the integer 1 (metric schema version; a bool is not a version)"),
        ],
    ),
    // seed 000: metric_schema_version is the integer 1, a float is rejected
    (
        "run_summary.metric_version_float",
        &[
            ("$.metric_schema_version", "the integer 1 (metric schema version; a float is not a version)"),
        ],
    ),
    // seed 000: consumers reject a missing version
    (
        "run_summary.metric_version_missing",
        &[
            ("$.metric_schema_version", "the integer 1 (metric schema version; a consumer never guesses a missing version)"),
        ],
    ),
    // seed 000: metric_schema_version is the integer 1, the string "1" is rejected
    (
        "run_summary.metric_version_string",
        &[
            ("$.metric_schema_version", "the integer 1 (metric schema version; a string is not a version)"),
        ],
    ),
    // reference §3: final_mean_reward is a number, or null when no reward was logged
    (
        "run_summary.nullable_field_wrong_type",
        &[
            ("$.final_mean_reward", "a number or null"),
        ],
    ),
    // reference §3: status is one of the run statuses
    (
        "run_summary.status_unknown",
        &[
            ("$.status", "one of \"running\", \"completed\", \"failed\", \"collector_died\", \"interrupted\""),
        ],
    ),
    // reference §7: present stable fields are typed even in an early-failure manifest
    (
        "runtime_manifest.early_failure_ring_capacity_zero",
        &[
            ("$.inference_ring_capacity", "a positive integer"),
        ],
    ),
    // seed 000: only runtime manifest schema 1 is accepted
    (
        "runtime_manifest.schema_version_2",
        &[
            ("$.schema_version", "a supported runtime manifest schema version (only 1)"),
        ],
    ),
    // reference §7: schema_version must be an int (not bool) equal to 1
    (
        "runtime_manifest.schema_version_bool",
        &[
            ("$.schema_version", "the integer 1 (runtime manifest schema version; a bool is not a version)"),
        ],
    ),
    // reference §7: schema_version must be an int equal to 1 (a float is rejected)
    (
        "runtime_manifest.schema_version_float",
        &[
            ("$.schema_version", "the integer 1 (runtime manifest schema version; a float is not a version)"),
        ],
    ),
    // reference §7: an early-failure manifest still needs schema_version
    (
        "runtime_manifest.schema_version_missing",
        &[
            ("$.schema_version", "the integer 1 (runtime manifest schema version; a consumer never guesses a missing version)"),
        ],
    ),
    // reference §7: schema_version must be an int equal to 1 (a string is rejected)
    (
        "runtime_manifest.schema_version_string",
        &[
            ("$.schema_version", "the integer 1 (runtime manifest schema version; a string is not a version)"),
        ],
    ),
    // reference §7: context.gpu_devices[].uuid
    (
        "soak.context_gpu_uuid_missing",
        &[
            ("$.context.gpu_devices[0].uuid", "a string"),
        ],
    ),
    // reference §7: closed + stop == early_returns on a completed run
    (
        "soak.drain_closed_plus_stop_not_early",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.closed_returns", "closed_returns + stop_returns == early_returns (0)"),
        ],
    ),
    // reference §7: dropped_batches == 0 on a completed run
    (
        "soak.drain_dropped_batches",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.dropped_batches", "0 on a completed run"),
        ],
    ),
    // reference §7: early_returns == 0 on a completed run
    (
        "soak.drain_early_returns",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.early_returns", "0 on a completed run"),
        ],
    ),
    // reference §7: inference_flight publication_lag is 0/absent on a completed run
    (
        "soak.drain_flight_publication_lag",
        &[
            ("$.run_summary.runtime_manifest.inference_flight.publication_lag", "0 or absent (a completed run drains the inference flight)"),
        ],
    ),
    // reference §7: inference_flight queue_depth is 0/absent on a completed run
    (
        "soak.drain_flight_queue_depth",
        &[
            ("$.run_summary.runtime_manifest.inference_flight.queue_depth", "0 or absent (a completed run drains the inference flight)"),
        ],
    ),
    // reference §7: high_water <= depth
    (
        "soak.drain_high_water_above_depth",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.high_water_occupancy", "at most ingress_depth (8)"),
        ],
    ),
    // reference §7: high_water >= occupancy (and occupancy 0, high_water > 0)
    (
        "soak.drain_high_water_below_occupancy",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.occupancy", "0 (a completed run drains the replay ingress)"),
            ("$.run_summary.runtime_manifest.replay_ingress.high_water_occupancy", "at least occupancy (1)"),
            ("$.run_summary.runtime_manifest.replay_ingress.high_water_occupancy", "a positive integer (a completed run used the ingress)"),
            ("$.run_summary.runtime_manifest.replay_ingress.published_sequence", "total_env_steps / ingress_slot_rows (20)"),
        ],
    ),
    // reference §7: high_water > 0 on a completed run
    (
        "soak.drain_high_water_zero",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.high_water_occupancy", "a positive integer (a completed run used the ingress)"),
        ],
    ),
    // reference §7: ingress depth > 0
    (
        "soak.drain_ingress_depth_zero",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.ingress_depth", "a positive integer (a completed run had an ingress)"),
            ("$.run_summary.runtime_manifest.replay_ingress.high_water_occupancy", "at most ingress_depth (0)"),
        ],
    ),
    // reference §7: occupancy == published - release
    (
        "soak.drain_occupancy_not_published_minus_released",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.occupancy", "published_sequence − release_sequence (0)"),
        ],
    ),
    // reference §7: occupancy == published - release == 0
    (
        "soak.drain_occupancy_not_zero",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.occupancy", "0 (a completed run drains the replay ingress)"),
            ("$.run_summary.runtime_manifest.replay_ingress.published_sequence", "total_env_steps / ingress_slot_rows (20)"),
        ],
    ),
    // reference §7: release <= published
    (
        "soak.drain_release_above_published",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.release_sequence", "at most published_sequence (20)"),
            ("$.run_summary.runtime_manifest.replay_ingress.release_sequence", "total_env_steps / ingress_slot_rows (20)"),
        ],
    ),
    // reference §7: published == release == total_env_steps / slot_rows
    (
        "soak.drain_sequences_not_total_over_rows",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.published_sequence", "total_env_steps / ingress_slot_rows (19)"),
            ("$.run_summary.runtime_manifest.replay_ingress.release_sequence", "total_env_steps / ingress_slot_rows (19)"),
        ],
    ),
    // reference §7: slot_rows > 0
    (
        "soak.drain_slot_rows_zero",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.ingress_slot_rows", "a positive integer (a completed run wrote rows)"),
        ],
    ),
    // reference §7: total_env_steps divisible by slot_rows
    (
        "soak.drain_total_env_steps_not_multiple",
        &[
            ("$.run_summary.total_env_steps", "a multiple of ingress_slot_rows (4096)"),
        ],
    ),
    // reference §7: total_env_steps > 0
    (
        "soak.drain_total_env_steps_zero",
        &[
            ("$.run_summary.total_env_steps", "a positive integer (a completed run stepped)"),
        ],
    ),
    // seed 000: a failed soak carries a classification
    (
        "soak.fail_classification_null",
        &[
            ("$.failure_classification", "a failure classification (the soak failed)"),
        ],
    ),
    // reference §7: the classification is a producer or monitor one
    (
        "soak.fail_classification_unknown",
        &[
            ("$.failure_classification", "one of \"learner_failure\", \"collector_failure\", \"backend_worker_failure\", \"timeout/stale_tick\", \"external_cancellation\", \"unknown_failure\", \"timeout/startup\", \"resource_leak\", \"monitor_failure\", \"missing_run_summary\", \"invalid_run_summary\", \"schema_violation\", \"shutdown_contract_violation\""),
        ],
    ),
    // reference §7: a summary that is not an object is invalid_run_summary
    (
        "soak.fail_invalid_run_summary_unclassified",
        &[
            ("$.failure_classification", "\"invalid_run_summary\" (run_summary is the string \"not json object\")"),
        ],
    ),
    // seed 000: normal_completion on a failed run is a shutdown_contract_violation
    (
        "soak.fail_normal_completion_not_contract_violation",
        &[
            ("$.failure_classification", "\"shutdown_contract_violation\" (normal_completion on a run whose summary status is \"failed\")"),
        ],
    ),
    // seed 000: a valid producer classification wins over the monitor's
    (
        "soak.fail_producer_classification_loses",
        &[
            ("$.failure_classification", "\"learner_failure\" (the producer's shutdown classification wins over the monitor's)"),
        ],
    ),
    // seed 000: owner classifications come from the producer's snapshot
    (
        "soak.fail_producer_only_classification_without_producer",
        &[
            ("$.failure_classification", "a monitor classification or unknown_failure (\"collector_failure\" names an owner, but the shutdown snapshot carries no valid producer classification)"),
        ],
    ),
    // reference §7: a failed soak states its reason
    (
        "soak.fail_reason_empty",
        &[
            ("$.failure_reason", "a non-empty string (the soak failed)"),
        ],
    ),
    // reference §7: a summary outside metric 1 / manifest 1 is a schema_violation
    (
        "soak.fail_schema_violation_unclassified",
        &[
            ("$.failure_classification", "\"schema_violation\" (the run summary's metric or manifest schema is missing or unsupported)"),
        ],
    ),
    // reference §7: console_log is an artifact key
    (
        "soak.field_missing",
        &[
            ("$.console_log", "a string"),
        ],
    ),
    // reference §7: monitor.sample_interval_s is a number
    (
        "soak.monitor_field_wrong_type",
        &[
            ("$.monitor.sample_interval_s", "a number ≥ 0"),
        ],
    ),
    // seed 000: on pass failure_classification is null
    (
        "soak.pass_failure_classification_set",
        &[
            ("$.failure_classification", "null (the soak passed)"),
        ],
    ),
    // reference §7: only a failure sets the reason
    (
        "soak.pass_failure_reason_set",
        &[
            ("$.failure_reason", "null (the soak passed)"),
        ],
    ),
    // reference §7: residual children are a resource_leak
    (
        "soak.pass_residual_process_count",
        &[
            ("$.resource_summary.residual_process_count", "0 (the soak passed)"),
        ],
    ),
    // reference §7: residual children are a resource_leak
    (
        "soak.pass_residual_processes",
        &[
            ("$.post_shutdown.residual_processes", "no residual process (the soak passed; leftovers are a resource_leak)"),
        ],
    ),
    // reference §7: a non-zero return code fails the soak
    (
        "soak.pass_returncode_nonzero",
        &[
            ("$.returncode", "0 (the soak passed, so its command exited cleanly)"),
        ],
    ),
    // reference §7: summary checks need manifest schema 1
    (
        "soak.pass_run_summary_manifest_missing",
        &[
            ("$.run_summary.runtime_manifest", "a runtime manifest (a soak runs an off-policy job, which records one)"),
        ],
    ),
    // reference §7: embedded manifest schema_version is an int, not a bool
    (
        "soak.pass_run_summary_manifest_version_bool",
        &[
            ("$.run_summary.runtime_manifest.schema_version", "the integer 1 (runtime manifest schema version; a bool is not a version)"),
        ],
    ),
    // seed 000: the soak accepts only metric schema 1
    (
        "soak.pass_run_summary_metric_version_2",
        &[
            ("$.run_summary.metric_schema_version", "a supported metric schema version (only 1)"),
        ],
    ),
    // reference §7: a pass needs a completed run
    (
        "soak.pass_run_summary_not_completed",
        &[
            ("$.run_summary.status", "\"completed\" (the soak passed)"),
        ],
    ),
    // reference §7: a missing summary fails the soak
    (
        "soak.pass_run_summary_null",
        &[
            ("$.run_summary", "the run's summary object (the soak passed)"),
        ],
    ),
    // reference §7: a run shorter than min_duration fails the soak
    (
        "soak.pass_shorter_than_min_duration",
        &[
            ("$.duration_s", "at least monitor.min_duration_s = 60 (the soak passed)"),
        ],
    ),
    // seed 000: on pass cleanup reports no error
    (
        "soak.pass_shutdown_cleanup_errors",
        &[
            ("$.shutdown.cleanup.errors", "no cleanup error (the soak passed)"),
        ],
    ),
    // reference §7: exception is null or {type, message}
    (
        "soak.pass_shutdown_exception_malformed",
        &[
            ("$.shutdown.exception.message", "a string"),
        ],
    ),
    // seed 000: on pass shutdown.classification == normal_completion
    (
        "soak.pass_shutdown_not_normal_completion",
        &[
            ("$.shutdown.classification", "\"normal_completion\" (the soak passed)"),
        ],
    ),
    // seed 000: on pass the shutdown snapshot says normal_completion
    (
        "soak.pass_shutdown_null",
        &[
            ("$.shutdown", "the producer's shutdown snapshot (the soak passed)"),
        ],
    ),
    // seed 000: owner is a non-empty string
    (
        "soak.pass_shutdown_owner_empty",
        &[
            ("$.shutdown.owner", "a non-empty string (the soak passed)"),
        ],
    ),
    // seed 000: phase is a non-empty string
    (
        "soak.pass_shutdown_phase_missing",
        &[
            ("$.shutdown.phase", "a string"),
        ],
    ),
    // reference §7: resource_summary.max_eventfd_count
    (
        "soak.resource_summary_field_missing",
        &[
            ("$.resource_summary.max_eventfd_count", "an integer ≥ 0"),
        ],
    ),
    // reference §7: samples[].process[].rss_kib is a count of KiB
    (
        "soak.sample_negative_rss",
        &[
            ("$.samples[0].process[0].rss_kib", "an integer ≥ 0"),
        ],
    ),
    // seed 000: top-level shutdown is the raw runtime_manifest.shutdown
    (
        "soak.shutdown_not_the_raw_copy",
        &[
            ("$.shutdown", "the run summary's runtime_manifest.shutdown, copied raw"),
        ],
    ),
    // reference §7: status is passed or failed
    (
        "soak.status_unknown",
        &[
            ("$.status", "one of \"passed\", \"failed\""),
        ],
    ),
    // reference §7: timestamps are %Y-%m-%dT%H:%M:%SZ
    (
        "soak.timestamp_format",
        &[
            ("$.started_at_utc", "a UTC time like 2026-01-31T12:00:00Z"),
        ],
    ),
    // seed 000: the soak artifact version is a string
    (
        "soak.version_integer",
        &[
            ("$.schema_version", "the string \"0.3.0\" (soak artifact versions are strings)"),
        ],
    ),
    // seed 000: consumers reject a missing version
    (
        "soak.version_missing",
        &[
            ("$.schema_version", "the string \"0.3.0\" (a consumer never guesses a missing version)"),
        ],
    ),
    // seed 000: only soak artifact 0.3.0 is accepted
    (
        "soak.version_unsupported",
        &[
            ("$.schema_version", "a supported soak artifact version (only the string \"0.3.0\")"),
        ],
    ),
];

#[test]
fn every_invalid_fixture_breaks_exactly_its_rule() {
    let listed: Vec<&str> = INVALID.iter().map(|(n, _)| *n).collect();
    let on_disk = stems("invalid");
    assert_eq!(
        on_disk,
        {
            let mut l: Vec<String> = listed.iter().map(|s| s.to_string()).collect();
            l.sort();
            l
        },
        "testdata/artifacts/invalid and the table must list the same fixtures"
    );
    for (name, want) in INVALID {
        let v = fixture("invalid", name);
        let kind = named_kind(name);
        assert_eq!(detect_kind(&v), Some(kind), "{name}: detected kind");
        let got = validate_as(kind, &v);
        let got_pairs: Vec<(&str, &str)> = got
            .iter()
            .map(|x| (x.path.as_str(), x.expected.as_str()))
            .collect();
        assert_eq!(&got_pairs, want, "{name}:{}", show(&got));
    }
}

#[test]
fn each_wrong_metric_stamp_has_its_own_message() {
    // seed 000: metric_schema_version present and the integer 1; a bool, the string "1", a float
    // and 2 are each rejected, each with a message of its own.
    let mut seen = std::collections::HashSet::new();
    for stamp in [json!(true), json!("1"), json!(1.0), json!(2), Value::Null] {
        let mut v = fixture("valid", "run_summary.completed");
        v["metric_schema_version"] = stamp.clone();
        let got = validate_run_summary(&v);
        assert_eq!(got.len(), 1, "{stamp}:{}", show(&got));
        assert_eq!(got[0].path, "$.metric_schema_version");
        assert!(
            seen.insert(got[0].to_string()),
            "{stamp}: message not distinct"
        );
    }
    let mut v = fixture("valid", "run_summary.completed");
    v.as_object_mut().unwrap().remove("metric_schema_version");
    assert!(seen.insert(validate_run_summary(&v)[0].to_string()));
}

#[test]
fn all_violations_are_reported_not_just_the_first() {
    // issue 6: every violation names the JSON path, the expected and the found value.
    let mut v = fixture("valid", "run_summary.completed");
    v["metric_schema_version"] = json!("1");
    v["runtime_manifest"]["inference_ring_capacity"] = json!(0);
    v["runtime_manifest"]["replay_ingress"]["occupancy"] = json!("0");
    v["runtime_manifest"]["inference_memory_budget"]["ipc_event_count"] = json!(-1);
    let got = validate_run_summary(&v);
    let paths: Vec<&str> = got.iter().map(|x| x.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "$.metric_schema_version",
            "$.runtime_manifest.inference_ring_capacity",
            "$.runtime_manifest.replay_ingress.occupancy",
            "$.runtime_manifest.inference_memory_budget.ipc_event_count",
        ],
        "{}",
        show(&got)
    );
    assert_eq!(
        got[2].to_string(),
        "$.runtime_manifest.replay_ingress.occupancy: expected an integer ≥ 0, found the string \"0\""
    );
}

#[test]
fn an_early_failure_manifest_needs_only_its_version_and_a_completed_one_its_lifecycle() {
    // reference §7: an early failure manifest needs only schema_version; when completed,
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
    // seed 000: collector_backend_device may be null only when the backend needs no
    // accelerator; the manifest's collector_accelerator_context is the evidence.
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
fn an_unsupported_version_stops_its_namespace_but_not_the_others() {
    // seed 000: three independent namespaces; consumers refuse to guess an unsupported one.
    let mut v = fixture("valid", "run_summary.completed");
    v["runtime_manifest"]["schema_version"] = json!(2);
    v["runtime_manifest"]["inference_ring_capacity"] = json!(0); // a v1 rule: not applied to v2
    v["completed_iterations"] = json!("x"); // the summary's own rules still run
    let got = validate_run_summary(&v);
    let paths: Vec<&str> = got.iter().map(|x| x.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "$.completed_iterations",
            "$.runtime_manifest.schema_version"
        ],
        "{}",
        show(&got)
    );

    let mut v = fixture("valid", "run_summary.completed");
    v["metric_schema_version"] = json!(2);
    v["completed_iterations"] = json!("x"); // metric v2's summary: not judged by v1 types
    v["runtime_manifest"]["inference_ring_capacity"] = json!(0); // manifest v1 still checked
    let got = validate_run_summary(&v);
    let paths: Vec<&str> = got.iter().map(|x| x.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "$.metric_schema_version",
            "$.runtime_manifest.inference_ring_capacity"
        ],
        "{}",
        show(&got)
    );

    let mut s = fixture("valid", "soak.passed");
    s["schema_version"] = json!("0.4.0");
    s["status"] = json!("ok");
    let got = validate_soak_artifact(&s);
    assert_eq!(got.len(), 1, "{}", show(&got));
}

#[test]
fn kinds_are_told_apart_by_their_members() {
    assert_eq!(
        detect_kind(&json!({"metric_schema_version": 1})),
        Some(ArtifactKind::RunSummary)
    );
    assert_eq!(
        detect_kind(&json!({"schema_version": 1})),
        Some(ArtifactKind::RuntimeManifest)
    );
    assert_eq!(
        detect_kind(&json!({"schema_version": "1"})),
        Some(ArtifactKind::RuntimeManifest)
    );
    assert_eq!(
        detect_kind(&json!({"schema_version": "0.3.0"})),
        Some(ArtifactKind::SoakArtifact)
    );
    assert_eq!(
        detect_kind(&json!({"schema_version": 1, "run_summary": null})),
        Some(ArtifactKind::SoakArtifact)
    );
    assert_eq!(detect_kind(&json!({"wall_time_sec": 1})), None);
    assert_eq!(detect_kind(&json!([1])), None);
    let r = validate(&json!({"hello": 1}));
    assert!(!r.is_ok());
    assert_eq!(r.violations.len(), 1);
    assert_eq!(r.violations[0].path, "$");
    assert!(
        r.violations[0].found.contains("hello"),
        "{}",
        r.violations[0]
    );
}

#[test]
fn a_standalone_manifest_is_checked_as_early_failure_by_default() {
    // reference §7: validate_runtime_manifest(m, completed=False) is the default.
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

#[test]
fn an_integral_float_is_not_an_integer_here() {
    // JSON Schema calls 1.0 an integer; a stable count written as 3.0 still fails here.
    let mut v = fixture("valid", "run_summary.completed");
    v["runtime_manifest"]["replay_ingress"]["high_water_occupancy"] = json!(3.0);
    let got = validate_run_summary(&v);
    assert_eq!(got.len(), 1, "{}", show(&got));
    assert_eq!(got[0].found, "the float 3.0");
}

#[test]
fn violations_render_as_path_expected_found() {
    let v = Violation {
        path: "$.a".into(),
        expected: "the integer 1".into(),
        found: "the bool true".into(),
    };
    assert_eq!(
        v.to_string(),
        "$.a: expected the integer 1, found the bool true"
    );
}
