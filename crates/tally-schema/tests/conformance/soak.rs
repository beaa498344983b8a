//! Soak artifact 0.3.0 rules: shape, pass and failure classification, the shutdown snapshot
//! and the drain invariants of a completed run (`docs/contract/manifest-and-soak.md`, soak
//! artifact 0.3.0).

/// Invalid soak fixtures → the rule each breaks (comment) and its violations.
pub(crate) const INVALID: &[(&str, &[(&str, &str)])] = &[
    // each context.gpu_devices entry has a uuid
    (
        "soak.context_gpu_uuid_missing",
        &[
            ("$.context.gpu_devices[0].uuid", "a string"),
        ],
    ),
    // on a completed run closed_returns + stop_returns == early_returns
    (
        "soak.drain_closed_plus_stop_not_early",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.closed_returns", "closed_returns + stop_returns == early_returns (0)"),
        ],
    ),
    // dropped_batches is 0 on a completed run
    (
        "soak.drain_dropped_batches",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.dropped_batches", "0 on a completed run"),
        ],
    ),
    // early_returns is 0 on a completed run
    (
        "soak.drain_early_returns",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.early_returns", "0 on a completed run"),
        ],
    ),
    // inference_flight.publication_lag is 0 or absent on a completed run
    (
        "soak.drain_flight_publication_lag",
        &[
            ("$.run_summary.runtime_manifest.inference_flight.publication_lag", "0 or absent (a completed run drains the inference flight)"),
        ],
    ),
    // inference_flight.queue_depth is 0 or absent on a completed run
    (
        "soak.drain_flight_queue_depth",
        &[
            ("$.run_summary.runtime_manifest.inference_flight.queue_depth", "0 or absent (a completed run drains the inference flight)"),
        ],
    ),
    // high_water_occupancy ≤ ingress_depth
    (
        "soak.drain_high_water_above_depth",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.high_water_occupancy", "at most ingress_depth (8)"),
        ],
    ),
    // high_water_occupancy ≥ occupancy (and a drained run has occupancy 0, high water > 0)
    (
        "soak.drain_high_water_below_occupancy",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.occupancy", "0 (a completed run drains the replay ingress)"),
            ("$.run_summary.runtime_manifest.replay_ingress.high_water_occupancy", "at least occupancy (1)"),
            ("$.run_summary.runtime_manifest.replay_ingress.high_water_occupancy", "a positive integer (a completed run used the ingress)"),
            ("$.run_summary.runtime_manifest.replay_ingress.published_sequence", "total_env_steps / ingress_slot_rows (20)"),
        ],
    ),
    // high_water_occupancy > 0 on a completed run
    (
        "soak.drain_high_water_zero",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.high_water_occupancy", "a positive integer (a completed run used the ingress)"),
        ],
    ),
    // ingress_depth > 0
    (
        "soak.drain_ingress_depth_zero",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.ingress_depth", "a positive integer (a completed run had an ingress)"),
            ("$.run_summary.runtime_manifest.replay_ingress.high_water_occupancy", "at most ingress_depth (0)"),
        ],
    ),
    // occupancy == published_sequence − release_sequence
    (
        "soak.drain_occupancy_not_published_minus_released",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.occupancy", "published_sequence − release_sequence (0)"),
        ],
    ),
    // occupancy == published − released == 0
    (
        "soak.drain_occupancy_not_zero",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.occupancy", "0 (a completed run drains the replay ingress)"),
            ("$.run_summary.runtime_manifest.replay_ingress.published_sequence", "total_env_steps / ingress_slot_rows (20)"),
        ],
    ),
    // release_sequence ≤ published_sequence
    (
        "soak.drain_release_above_published",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.release_sequence", "at most published_sequence (20)"),
            ("$.run_summary.runtime_manifest.replay_ingress.release_sequence", "total_env_steps / ingress_slot_rows (20)"),
        ],
    ),
    // published == released == total_env_steps / ingress_slot_rows
    (
        "soak.drain_sequences_not_total_over_rows",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.published_sequence", "total_env_steps / ingress_slot_rows (19)"),
            ("$.run_summary.runtime_manifest.replay_ingress.release_sequence", "total_env_steps / ingress_slot_rows (19)"),
        ],
    ),
    // ingress_slot_rows > 0
    (
        "soak.drain_slot_rows_zero",
        &[
            ("$.run_summary.runtime_manifest.replay_ingress.ingress_slot_rows", "a positive integer (a completed run wrote rows)"),
        ],
    ),
    // total_env_steps is a multiple of ingress_slot_rows
    (
        "soak.drain_total_env_steps_not_multiple",
        &[
            ("$.run_summary.total_env_steps", "a multiple of ingress_slot_rows (4096)"),
        ],
    ),
    // total_env_steps > 0
    (
        "soak.drain_total_env_steps_zero",
        &[
            ("$.run_summary.total_env_steps", "a positive integer (a completed run stepped)"),
        ],
    ),
    // a failed soak carries a classification
    (
        "soak.fail_classification_null",
        &[
            ("$.failure_classification", "a failure classification (the soak failed)"),
        ],
    ),
    // the classification is a producer or a monitor one
    (
        "soak.fail_classification_unknown",
        &[
            ("$.failure_classification", "one of \"learner_failure\", \"collector_failure\", \"backend_worker_failure\", \"timeout/stale_tick\", \"external_cancellation\", \"unknown_failure\", \"timeout/startup\", \"resource_leak\", \"monitor_failure\", \"missing_run_summary\", \"invalid_run_summary\", \"schema_violation\", \"shutdown_contract_violation\""),
        ],
    ),
    // a run summary that is not an object is invalid_run_summary
    (
        "soak.fail_invalid_run_summary_unclassified",
        &[
            ("$.failure_classification", "\"invalid_run_summary\" (run_summary is the string \"not json object\")"),
        ],
    ),
    // normal_completion on a failed run is a shutdown_contract_violation
    (
        "soak.fail_normal_completion_not_contract_violation",
        &[
            ("$.failure_classification", "\"shutdown_contract_violation\" (normal_completion on a run whose summary status is \"failed\")"),
        ],
    ),
    // a valid producer classification wins over the monitor's
    (
        "soak.fail_producer_classification_loses",
        &[
            ("$.failure_classification", "\"learner_failure\" (the producer's shutdown classification wins over the monitor's)"),
        ],
    ),
    // a classification naming an owner comes only from the producer's snapshot
    (
        "soak.fail_producer_only_classification_without_producer",
        &[
            ("$.failure_classification", "a monitor classification or unknown_failure (\"collector_failure\" names an owner, but the shutdown snapshot carries no valid producer classification)"),
        ],
    ),
    // a failed soak states its reason
    (
        "soak.fail_reason_empty",
        &[
            ("$.failure_reason", "a non-empty string (the soak failed)"),
        ],
    ),
    // a summary outside metric schema 1 / manifest schema 1 is a schema_violation
    (
        "soak.fail_schema_violation_unclassified",
        &[
            ("$.failure_classification", "\"schema_violation\" (the run summary's metric or manifest schema is missing or unsupported)"),
        ],
    ),
    // console_log is a member of the artifact
    (
        "soak.field_missing",
        &[
            ("$.console_log", "a string"),
        ],
    ),
    // monitor.sample_interval_s is a number
    (
        "soak.monitor_field_wrong_type",
        &[
            ("$.monitor.sample_interval_s", "a number ≥ 0"),
        ],
    ),
    // on a pass failure_classification is null
    (
        "soak.pass_failure_classification_set",
        &[
            ("$.failure_classification", "null (the soak passed)"),
        ],
    ),
    // only a failure sets the reason
    (
        "soak.pass_failure_reason_set",
        &[
            ("$.failure_reason", "null (the soak passed)"),
        ],
    ),
    // residual children are a resource_leak, so a pass counts none
    (
        "soak.pass_residual_process_count",
        &[
            ("$.resource_summary.residual_process_count", "0 (the soak passed)"),
        ],
    ),
    // residual children are a resource_leak, so a pass lists none
    (
        "soak.pass_residual_processes",
        &[
            ("$.post_shutdown.residual_processes", "no residual process (the soak passed; leftovers are a resource_leak)"),
        ],
    ),
    // a non-zero return code fails the soak
    (
        "soak.pass_returncode_nonzero",
        &[
            ("$.returncode", "0 (the soak passed, so its command exited cleanly)"),
        ],
    ),
    // a pass needs the summary's runtime manifest (a soak runs an off-policy job)
    (
        "soak.pass_run_summary_manifest_missing",
        &[
            ("$.run_summary.runtime_manifest", "a runtime manifest (a soak runs an off-policy job, which records one)"),
        ],
    ),
    // the embedded manifest's schema_version is an integer, not a bool
    (
        "soak.pass_run_summary_manifest_version_bool",
        &[
            ("$.run_summary.runtime_manifest.schema_version", "the integer 1 (runtime manifest schema version; a bool is not a version)"),
        ],
    ),
    // the soak accepts only metric schema 1
    (
        "soak.pass_run_summary_metric_version_2",
        &[
            ("$.run_summary.metric_schema_version", "a supported metric schema version (only 1)"),
        ],
    ),
    // a pass needs a completed run
    (
        "soak.pass_run_summary_not_completed",
        &[
            ("$.run_summary.status", "\"completed\" (the soak passed)"),
        ],
    ),
    // a missing summary fails the soak
    (
        "soak.pass_run_summary_null",
        &[
            ("$.run_summary", "the run's summary object (the soak passed)"),
        ],
    ),
    // a run shorter than monitor.min_duration_s fails the soak
    (
        "soak.pass_shorter_than_min_duration",
        &[
            ("$.duration_s", "at least monitor.min_duration_s = 60 (the soak passed)"),
        ],
    ),
    // on a pass the shutdown cleanup reports no error
    (
        "soak.pass_shutdown_cleanup_errors",
        &[
            ("$.shutdown.cleanup.errors", "no cleanup error (the soak passed)"),
        ],
    ),
    // shutdown.exception is null or {type, message}
    (
        "soak.pass_shutdown_exception_malformed",
        &[
            ("$.shutdown.exception.message", "a string"),
        ],
    ),
    // on a pass shutdown.classification is normal_completion
    (
        "soak.pass_shutdown_not_normal_completion",
        &[
            ("$.shutdown.classification", "\"normal_completion\" (the soak passed)"),
        ],
    ),
    // on a pass the producer's shutdown snapshot is there
    (
        "soak.pass_shutdown_null",
        &[
            ("$.shutdown", "the producer's shutdown snapshot (the soak passed)"),
        ],
    ),
    // shutdown.owner is a non-empty string
    (
        "soak.pass_shutdown_owner_empty",
        &[
            ("$.shutdown.owner", "a non-empty string (the soak passed)"),
        ],
    ),
    // shutdown.phase is a non-empty string
    (
        "soak.pass_shutdown_phase_missing",
        &[
            ("$.shutdown.phase", "a string"),
        ],
    ),
    // resource_summary carries max_eventfd_count
    (
        "soak.resource_summary_field_missing",
        &[
            ("$.resource_summary.max_eventfd_count", "an integer ≥ 0"),
        ],
    ),
    // samples[].process[].rss_kib is a count of KiB
    (
        "soak.sample_negative_rss",
        &[
            ("$.samples[0].process[0].rss_kib", "an integer ≥ 0"),
        ],
    ),
    // the top-level shutdown is the raw runtime_manifest.shutdown
    (
        "soak.shutdown_not_the_raw_copy",
        &[
            ("$.shutdown", "the run summary's runtime_manifest.shutdown, copied raw"),
        ],
    ),
    // status is passed or failed
    (
        "soak.status_unknown",
        &[
            ("$.status", "one of \"passed\", \"failed\""),
        ],
    ),
    // timestamps are %Y-%m-%dT%H:%M:%SZ
    (
        "soak.timestamp_format",
        &[
            ("$.started_at_utc", "a UTC time like 2026-01-31T12:00:00Z"),
        ],
    ),
    // the soak artifact version is a string
    (
        "soak.version_integer",
        &[
            ("$.schema_version", "the string \"0.3.0\" (soak artifact versions are strings)"),
        ],
    ),
    // a consumer rejects a missing version
    (
        "soak.version_missing",
        &[
            ("$.schema_version", "the string \"0.3.0\" (a consumer never guesses a missing version)"),
        ],
    ),
    // only soak artifact 0.3.0 is accepted
    (
        "soak.version_unsupported",
        &[
            ("$.schema_version", "a supported soak artifact version (only the string \"0.3.0\")"),
        ],
    ),
];
