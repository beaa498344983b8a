//! The soak artifact 0.3.0 a soak writes: its resource summary (peaks over the samples and the
//! run's final manifest figures), the verdict, and the self-check against the validator that
//! `tally validate` runs, so a pass is only written when the contract holds.

use super::classify::{contract_failure, Failure};
use super::samples::Peaks;
use serde_json::{Map, Value};
use tally_schema::artifacts::{
    ShutdownSnapshot, SoakArtifact, SoakContext, SoakMonitorSettings, SoakPostShutdown,
    SoakProcessSample, SoakResourceSummary, SoakSample, SoakStatus,
};
use tally_schema::conformance::{validate_soak_artifact, Violation};

/// Everything the artifact is made of but the verdict.
pub struct Parts {
    /// The monitored command line.
    pub command: Vec<String>,
    /// Where and on what it ran.
    pub context: SoakContext,
    /// Start and end, `%Y-%m-%dT%H:%M:%SZ`.
    pub started_at_utc: String,
    /// End.
    pub ended_at_utc: String,
    /// Seconds the soak ran.
    pub duration_s: f64,
    /// The command's return code; None when the monitor ended it.
    pub returncode: Option<i64>,
    /// Settings, the sample count included.
    pub monitor: SoakMonitorSettings,
    /// The kept samples.
    pub samples: Vec<SoakSample>,
    /// Peaks over every sample taken.
    pub peaks: Peaks,
    /// Processes left after the grace period.
    pub residual: Vec<SoakProcessSample>,
    /// `run_summary.json` as read: the document, its text when it is not JSON, or None.
    pub run_summary: Option<Value>,
    /// Path of the console log.
    pub console_log: String,
}

/// Build the artifact for `failure` (None: passed). The top-level `shutdown` is the summary's
/// raw `runtime_manifest.shutdown` when it has the typed shape, null otherwise.
pub fn build(p: &Parts, failure: Option<&Failure>) -> SoakArtifact {
    let shutdown: Option<ShutdownSnapshot> = p
        .run_summary
        .as_ref()
        .and_then(super::classify::producer_shutdown);
    SoakArtifact {
        schema_version: tally_schema::SOAK_ARTIFACT_SCHEMA_VERSION.to_owned(),
        status: if failure.is_some() {
            SoakStatus::Failed
        } else {
            SoakStatus::Passed
        },
        failure_reason: failure.map(|f| f.reason.clone()),
        failure_classification: failure.map(|f| f.classification),
        command: p.command.clone(),
        context: p.context.clone(),
        started_at_utc: p.started_at_utc.clone(),
        ended_at_utc: p.ended_at_utc.clone(),
        duration_s: p.duration_s,
        returncode: p.returncode,
        monitor: p.monitor.clone(),
        samples: p.samples.clone(),
        resource_summary: resource_summary(
            &p.peaks,
            p.monitor.sample_count,
            p.residual.len(),
            p.run_summary.as_ref(),
        ),
        shutdown,
        post_shutdown: SoakPostShutdown {
            residual_processes: p
                .residual
                .iter()
                .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
                .collect(),
            extra: Map::new(),
        },
        run_summary: p.run_summary.clone(),
        console_log: p.console_log.clone(),
        extra: Map::new(),
    }
}

/// The artifact with its final verdict: `failure` when the monitor or the summary found one;
/// otherwise the pass is checked against the validator, and a completed run that breaks the
/// contract fails with the violations as its reason. Returns the artifact and the violations
/// the validator still finds in it (none unless the monitor itself is wrong).
pub fn decide(p: &Parts, failure: Option<Failure>) -> (SoakArtifact, Vec<Violation>) {
    let mut failure = failure;
    if failure.is_none() {
        let pass = build(p, None);
        let violations = validate_soak_artifact(&to_value(&pass));
        failure = contract_failure(&violations);
        if failure.is_none() {
            return (pass, violations);
        }
    }
    let a = build(p, failure.as_ref());
    let violations = validate_soak_artifact(&to_value(&a));
    (a, violations)
}

/// The artifact as JSON.
pub fn to_value(a: &SoakArtifact) -> Value {
    serde_json::to_value(a).unwrap_or(Value::Null)
}

/// The peaks over every sample taken, the residual count, and the final figures of the
/// summary's runtime manifest (null where it has none).
pub fn resource_summary(
    peaks: &Peaks,
    sample_count: u64,
    residual: usize,
    summary: Option<&Value>,
) -> SoakResourceSummary {
    let m = summary.and_then(|s| s.get("runtime_manifest"));
    let get = |section: &str, key: &str| m.and_then(|m| m.get(section)).and_then(|x| x.get(key));
    let int = |section: &str, key: &str| get(section, key).and_then(Value::as_u64);
    let ri = |key: &str| int("replay_ingress", key);
    SoakResourceSummary {
        sample_count,
        max_process_count: peaks.process_count,
        max_process_rss_kib: peaks.process_rss_kib,
        max_gpu_used_memory_mib: peaks.gpu_used_memory_mib,
        max_eventfd_count: peaks.eventfd_count,
        max_shared_memory_fd_count: peaks.shared_memory_fd_count,
        max_progress_bytes: peaks.progress_bytes,
        residual_process_count: residual as u64,
        ipc_event_count: int("inference_memory_budget", "ipc_event_count"),
        max_in_flight: int("inference_flight", "max_in_flight"),
        max_publication_lag: int("inference_flight", "max_publication_lag"),
        replay_ingress_depth: ri("ingress_depth"),
        replay_ingress_slot_rows: ri("ingress_slot_rows"),
        replay_ingress_high_water_occupancy: ri("high_water_occupancy"),
        replay_ingress_final_occupancy: ri("occupancy"),
        replay_ingress_backpressure_waits: ri("backpressure_waits"),
        replay_ingress_backpressure_wait_s: get("replay_ingress", "backpressure_wait_s")
            .and_then(Value::as_f64)
            .filter(|x| x.is_finite() && *x >= 0.0),
        replay_ingress_early_returns: ri("early_returns"),
        replay_ingress_dropped_batches: ri("dropped_batches"),
        extra: Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn manifest_figures_are_read_and_absent_ones_null() {
        let s = json!({"runtime_manifest": {
            "schema_version": 1,
            "inference_flight": {"max_in_flight": 2, "max_publication_lag": 1},
            "replay_ingress": {"ingress_depth": 8, "occupancy": 0, "backpressure_wait_s": 0.5}
        }});
        let r = resource_summary(&Peaks::default(), 0, 3, Some(&s));
        assert_eq!(r.residual_process_count, 3);
        assert_eq!((r.max_in_flight, r.max_publication_lag), (Some(2), Some(1)));
        assert_eq!(r.replay_ingress_depth, Some(8));
        assert_eq!(r.replay_ingress_final_occupancy, Some(0));
        assert_eq!(r.replay_ingress_backpressure_wait_s, Some(0.5));
        assert_eq!(r.replay_ingress_slot_rows, None);
        assert_eq!(r.ipc_event_count, None);
        let none = resource_summary(&Peaks::default(), 0, 0, None);
        assert_eq!((none.sample_count, none.max_in_flight), (0, None));
    }
}
