"""Regenerate testdata/artifacts/invalid/: one fixture per rule, each a valid/ base with one edit.

Run `python3 testdata/artifacts/make_invalid.py` after changing a valid base; then
`cargo test -p tally-schema --test conformance` says which expected violations moved.
"""
import copy
import glob
import json
import os

os.chdir(os.path.dirname(os.path.abspath(__file__)))
V = {os.path.basename(p)[:-5]: json.load(open(p)) for p in glob.glob("valid/*.json")}
for p in glob.glob("invalid/*.json"):
    os.remove(p)

def get(d, path):
    for k in path[:-1]:
        d = d[k]
    return d, path[-1]

def mk(name, base, *edits):
    v = copy.deepcopy(V[base])
    for e in edits:
        op, path = e[0], e[1]
        d, k = get(v, path)
        if op == "set":
            d[k] = e[2]
        elif op == "del":
            del d[k]
    with open(f"invalid/{name}.json", "w") as f:
        json.dump(v, f, indent=2)
        f.write("\n")

RS, M = "run_summary.completed", "runtime_manifest.completed"
RM = ["runtime_manifest"]
# run summary
mk("run_summary.metric_version_missing", RS, ("del", ["metric_schema_version"]))
mk("run_summary.metric_version_bool", RS, ("set", ["metric_schema_version"], True))
mk("run_summary.metric_version_string", RS, ("set", ["metric_schema_version"], "1"))
mk("run_summary.metric_version_float", RS, ("set", ["metric_schema_version"], 1.0))
mk("run_summary.metric_version_2", RS, ("set", ["metric_schema_version"], 2))
mk("run_summary.status_unknown", RS, ("set", ["status"], "done"))
mk("run_summary.field_wrong_type", RS, ("set", ["completed_iterations"], "20"))
mk("run_summary.field_missing", RS, ("del", ["total_env_steps"]))
mk("run_summary.nullable_field_wrong_type", RS, ("set", ["final_mean_reward"], "n/a"))
mk("run_summary.backend_diagnostics_not_object", "run_summary.ppo_backend_diagnostics", ("set", ["backend_diagnostics"], []))
mk("run_summary.backend_diagnostics_enabled_missing", "run_summary.ppo_backend_diagnostics",
   ("del", ["backend_diagnostics", "optimizations", "cuda_graph", "enabled"]))
# runtime manifest, standalone
mk("runtime_manifest.schema_version_missing", M, ("del", ["schema_version"]))
mk("runtime_manifest.schema_version_bool", M, ("set", ["schema_version"], True))
mk("runtime_manifest.schema_version_string", M, ("set", ["schema_version"], "1"))
mk("runtime_manifest.schema_version_float", M, ("set", ["schema_version"], 1.0))
mk("runtime_manifest.schema_version_2", M, ("set", ["schema_version"], 2))
mk("runtime_manifest.early_failure_ring_capacity_zero", "runtime_manifest.early_failure", ("set", ["inference_ring_capacity"], 0))
# runtime manifest, embedded in a completed run summary
mk("run_summary.manifest_ring_capacity_missing", RS, ("del", RM + ["inference_ring_capacity"]))
mk("run_summary.manifest_ring_capacity_zero", RS, ("set", RM + ["inference_ring_capacity"], 0))
mk("run_summary.manifest_metrics_interval_bool", RS, ("set", RM + ["collector_metrics_interval"], True))
mk("run_summary.manifest_metrics_interval_null", RS, ("set", RM + ["collector_metrics_interval"], None))
mk("run_summary.manifest_device_missing", RS, ("del", RM + ["collector_backend_device"]))
mk("run_summary.manifest_device_empty", RS, ("set", RM + ["collector_backend_device"], ""))
mk("run_summary.manifest_device_null_with_accelerator", RS, ("set", RM + ["collector_backend_device"], None))
mk("run_summary.manifest_flight_missing", RS, ("del", RM + ["inference_flight"]))
mk("run_summary.manifest_flight_not_mapping", RS, ("set", RM + ["inference_flight"], [0, 0, 1, 1]))
mk("run_summary.manifest_flight_negative", RS, ("set", RM + ["inference_flight", "max_in_flight"], -1))
mk("run_summary.manifest_flight_field_missing", RS, ("del", RM + ["inference_flight", "max_publication_lag"]))
mk("run_summary.manifest_ingress_missing", RS, ("del", RM + ["replay_ingress"]))
mk("run_summary.manifest_ingress_occupancy_string", RS, ("set", RM + ["replay_ingress", "occupancy"], "0"))
mk("run_summary.manifest_ingress_count_float", RS, ("set", RM + ["replay_ingress", "dropped_batches"], 0.5))
mk("run_summary.manifest_backpressure_wait_negative", RS, ("set", RM + ["replay_ingress", "backpressure_wait_s"], -0.25))
mk("run_summary.manifest_backpressure_wait_string", RS, ("set", RM + ["replay_ingress", "backpressure_wait_s"], "0.0125"))
mk("run_summary.manifest_ipc_event_count_missing", RS, ("del", RM + ["inference_memory_budget", "ipc_event_count"]))
mk("run_summary.manifest_ipc_event_count_negative", RS, ("set", RM + ["inference_memory_budget", "ipc_event_count"], -4))
mk("run_summary.manifest_backend_diagnostics_no_optimizations", RS, ("del", RM + ["backend_diagnostics", "optimizations"]))
mk("run_summary.manifest_backend_diagnostics_requested_missing", RS,
   ("del", RM + ["backend_diagnostics", "optimizations", "fused_reset", "requested"]))
mk("run_summary.manifest_backend_diagnostics_disable_reason_type", RS,
   ("set", RM + ["backend_diagnostics", "optimizations", "fused_reset", "disable_reason"], 3))

# soak artifact
SP = "soak.passed"
SRM = ["run_summary", "runtime_manifest"]
RI = SRM + ["replay_ingress"]
mk("soak.version_missing", SP, ("del", ["schema_version"]))
mk("soak.version_integer", SP, ("set", ["schema_version"], 3))
mk("soak.version_unsupported", SP, ("set", ["schema_version"], "0.2.0"))
mk("soak.status_unknown", SP, ("set", ["status"], "ok"))
mk("soak.field_missing", SP, ("del", ["console_log"]))
mk("soak.monitor_field_wrong_type", SP, ("set", ["monitor", "sample_interval_s"], "5"))
mk("soak.resource_summary_field_missing", SP, ("del", ["resource_summary", "max_eventfd_count"]))
mk("soak.timestamp_format", SP, ("set", ["started_at_utc"], "2026-01-31T12:00:00+00:00"))
mk("soak.sample_negative_rss", SP, ("set", ["samples", 0, "process", 0, "rss_kib"], -5))
mk("soak.context_gpu_uuid_missing", SP, ("del", ["context", "gpu_devices", 0, "uuid"]))
mk("soak.pass_failure_classification_set", SP, ("set", ["failure_classification"], "resource_leak"))
mk("soak.pass_failure_reason_set", SP, ("set", ["failure_reason"], "command exited with 1"))
mk("soak.pass_returncode_nonzero", SP, ("set", ["returncode"], 1))
mk("soak.pass_shorter_than_min_duration", SP, ("set", ["duration_s"], 10.0))
mk("soak.pass_residual_processes", SP, ("set", ["post_shutdown", "residual_processes"], [{"pid": 4243, "command": "python -m unilab.collector"}]))
mk("soak.pass_residual_process_count", SP, ("set", ["resource_summary", "residual_process_count"], 1))
mk("soak.pass_shutdown_null", SP, ("set", ["shutdown"], None))
mk("soak.pass_shutdown_not_normal_completion", SP,
   ("set", ["shutdown", "classification"], "learner_failure"), ("set", SRM + ["shutdown", "classification"], "learner_failure"))
mk("soak.pass_shutdown_owner_empty", SP, ("set", ["shutdown", "owner"], ""), ("set", SRM + ["shutdown", "owner"], ""))
mk("soak.pass_shutdown_phase_missing", SP, ("del", ["shutdown", "phase"]), ("del", SRM + ["shutdown", "phase"]))
mk("soak.pass_shutdown_cleanup_errors", SP,
   ("set", ["shutdown", "cleanup", "errors"], ["replay ingress: close timed out"]),
   ("set", SRM + ["shutdown", "cleanup", "errors"], ["replay ingress: close timed out"]))
mk("soak.pass_shutdown_exception_malformed", SP,
   ("set", ["shutdown", "exception"], {"type": "RuntimeError"}), ("set", SRM + ["shutdown", "exception"], {"type": "RuntimeError"}))
mk("soak.shutdown_not_the_raw_copy", SP, ("set", ["shutdown", "iteration"], 19))
mk("soak.pass_run_summary_null", SP, ("set", ["run_summary"], None))
mk("soak.pass_run_summary_not_completed", SP, ("set", ["run_summary", "status"], "failed"))
mk("soak.pass_run_summary_metric_version_2", SP, ("set", ["run_summary", "metric_schema_version"], 2))
mk("soak.pass_run_summary_manifest_missing", SP, ("del", ["run_summary", "runtime_manifest"]))
mk("soak.pass_run_summary_manifest_version_bool", SP, ("set", SRM + ["schema_version"], True))
mk("soak.drain_flight_queue_depth", SP, ("set", SRM + ["inference_flight", "queue_depth"], 2))
mk("soak.drain_flight_publication_lag", SP, ("set", SRM + ["inference_flight", "publication_lag"], 1))
mk("soak.drain_ingress_depth_zero", SP, ("set", RI + ["ingress_depth"], 0))
mk("soak.drain_slot_rows_zero", SP, ("set", RI + ["ingress_slot_rows"], 0))
mk("soak.drain_release_above_published", SP, ("set", RI + ["release_sequence"], 21))
mk("soak.drain_occupancy_not_published_minus_released", SP, ("set", RI + ["occupancy"], 1))
mk("soak.drain_occupancy_not_zero", SP, ("set", RI + ["published_sequence"], 21), ("set", RI + ["occupancy"], 1))
mk("soak.drain_high_water_above_depth", SP, ("set", RI + ["high_water_occupancy"], 9))
mk("soak.drain_high_water_below_occupancy", SP,
   ("set", RI + ["published_sequence"], 21), ("set", RI + ["occupancy"], 1), ("set", RI + ["high_water_occupancy"], 0))
mk("soak.drain_high_water_zero", SP, ("set", RI + ["high_water_occupancy"], 0))
mk("soak.drain_early_returns", SP, ("set", RI + ["early_returns"], 1), ("set", RI + ["stop_returns"], 1))
mk("soak.drain_dropped_batches", SP, ("set", RI + ["dropped_batches"], 1))
mk("soak.drain_closed_plus_stop_not_early", SP, ("set", RI + ["closed_returns"], 1))
mk("soak.drain_total_env_steps_zero", SP, ("set", ["run_summary", "total_env_steps"], 0))
mk("soak.drain_total_env_steps_not_multiple", SP, ("set", ["run_summary", "total_env_steps"], 81921))
mk("soak.drain_sequences_not_total_over_rows", SP, ("set", ["run_summary", "total_env_steps"], 77824))
FP = "soak.failed_producer_classification"
mk("soak.fail_reason_empty", FP, ("set", ["failure_reason"], ""))
mk("soak.fail_classification_null", FP, ("set", ["failure_classification"], None))
mk("soak.fail_classification_unknown", FP, ("set", ["failure_classification"], "oom"))
mk("soak.fail_producer_classification_loses", FP, ("set", ["failure_classification"], "timeout/stale_tick"))
mk("soak.fail_normal_completion_not_contract_violation", "soak.failed_shutdown_contract_violation",
   ("set", ["failure_classification"], "unknown_failure"))
mk("soak.fail_invalid_run_summary_unclassified", FP, ("set", ["run_summary"], "not json object"))
mk("soak.fail_schema_violation_unclassified", "soak.failed_schema_violation", ("set", ["failure_classification"], "learner_failure"))
mk("soak.fail_producer_only_classification_without_producer", "soak.failed_monitor_stale_tick",
   ("set", ["failure_classification"], "collector_failure"))
print(len(glob.glob("invalid/*.json")), "invalid fixtures written")
