//! `run_summary.json` rules: the metric schema stamp and the summary's own members
//! (`docs/contract/run-artifacts.md`, `run_summary.json`; the version stamp:
//! `docs/contract/schema.md`). The embedded manifest's rules are in `manifest.rs`.

use crate::{fixture, show};
use serde_json::{json, Value};
use tally_schema::conformance::validate_run_summary;

/// Invalid run-summary fixtures → the rule each breaks (comment) and its violations.
pub(crate) const INVALID: &[(&str, &[(&str, &str)])] = &[
    // a closed run keeps no step pending (docs/contract/run-artifacts.md "Storage faults")
    (
        "run_summary.closed_with_pending_steps",
        &[(
            "$.pending_iterations",
            "0 once the run is closed (kept steps are written or counted lost at close)",
        )],
    ),
    // a completed run lost no step: one that did is degraded
    (
        "run_summary.completed_with_lost_steps",
        &[(
            "$.lost_iterations",
            "0 in a completed run (a run that lost steps is degraded)",
        )],
    ),
    // a degraded run lost at least one step
    (
        "run_summary.degraded_without_lost_steps",
        &[("$.lost_iterations", "at least 1 in a degraded run")],
    ),
    // the event file never holds more iterations than were completed (one more for a runner
    // counting from 0: testdata/artifacts/valid/run_summary.zero_based_iterations.json)
    (
        "run_summary.persisted_past_completed",
        &[(
            "$.persisted_iterations",
            "at most completed_iterations + 1 (21: a runner may count from 0)",
        )],
    ),
    // a top-level backend_diagnostics (PPO path) is checked for shape: each optimisation says whether it is enabled
    (
        "run_summary.backend_diagnostics_enabled_missing",
        &[(
            "$.backend_diagnostics.optimizations.cuda_graph.enabled",
            "a bool",
        )],
    ),
    // a top-level backend_diagnostics (PPO path) is a mapping
    (
        "run_summary.backend_diagnostics_not_object",
        &[("$.backend_diagnostics", "an object (BackendDiagnostics)")],
    ),
    // total_env_steps is a stable member
    (
        "run_summary.field_missing",
        &[("$.total_env_steps", "an integer ≥ 0")],
    ),
    // completed_iterations is an integer
    (
        "run_summary.field_wrong_type",
        &[("$.completed_iterations", "an integer ≥ 0")],
    ),
    // only metric schema 1 is accepted
    (
        "run_summary.metric_version_2",
        &[(
            "$.metric_schema_version",
            "a supported metric schema version (only 1)",
        )],
    ),
    // metric_schema_version is the integer 1: a bool is rejected
    (
        "run_summary.metric_version_bool",
        &[(
            "$.metric_schema_version",
            "the integer 1 (metric schema version; a bool is not a version)",
        )],
    ),
    // metric_schema_version is the integer 1: a float is rejected
    (
        "run_summary.metric_version_float",
        &[(
            "$.metric_schema_version",
            "the integer 1 (metric schema version; a float is not a version)",
        )],
    ),
    // a consumer rejects a missing version
    (
        "run_summary.metric_version_missing",
        &[(
            "$.metric_schema_version",
            "the integer 1 (metric schema version; a consumer never guesses a missing version)",
        )],
    ),
    // metric_schema_version is the integer 1: the string "1" is rejected
    (
        "run_summary.metric_version_string",
        &[(
            "$.metric_schema_version",
            "the integer 1 (metric schema version; a string is not a version)",
        )],
    ),
    // final_mean_reward is a number, or null when no reward was logged
    (
        "run_summary.nullable_field_wrong_type",
        &[("$.final_mean_reward", "a number or null")],
    ),
    // a remote sink's pending rows are a count (docs/contract/remote-sinks.md)
    (
        "run_summary.remote_sink_pending_wrong_type",
        &[("$.remote_sinks[0].pending", "an integer ≥ 0")],
    ),
    // status is one of the run statuses
    (
        "run_summary.status_unknown",
        &[(
            "$.status",
            "one of \"running\", \"completed\", \"failed\", \"collector_died\", \"interrupted\", \"degraded\"",
        )],
    ),
];

#[test]
fn each_wrong_metric_stamp_has_its_own_message() {
    // metric_schema_version is present and the integer 1; a bool, the string "1", a float and
    // 2 are each rejected, each with a message of its own (docs/contract/schema.md).
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
