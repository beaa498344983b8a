//! Whether a soak failed, why, and under which classification
//! (`docs/contract/manifest-and-soak.md` "A failed soak: classification" and "The soak monitor").
//!
//! Pure: what the monitor observed and the run summary as read go in, the verdict comes out.
//! The precedence is the contract's: what the run summary imposes
//! ([`tally_schema::conformance::summary_verdict`], the rule the artefact validator checks too),
//! then the monitor's own classification, then what the summary suggests. Every reason found is
//! kept, in that order, and the producer's description of the shutdown of a run that did not
//! complete is appended last.

use serde_json::Value;
use tally_schema::artifacts::{FailureClassification, ShutdownSnapshot};
use tally_schema::conformance::{summary_verdict, SummaryVerdict, Violation};

/// What the monitor saw of the command.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// The monitor's own classification when it ended the command (startup or stale timeout,
    /// cancellation) or could not go on (monitor failure), with its reason.
    pub monitor: Option<(FailureClassification, String)>,
    /// The command's exit code (negative: the signal that ended it); None when the monitor
    /// ended it.
    pub returncode: Option<i64>,
    /// Seconds the soak ran.
    pub duration_s: f64,
    /// `--min-duration-seconds`.
    pub min_duration_s: f64,
    /// Processes of the command's group alive after the grace period.
    pub residual: usize,
    /// `--post-shutdown-grace-seconds`.
    pub grace_s: f64,
}

/// `run_summary.json` as the monitor found it.
#[derive(Debug, Clone, PartialEq)]
pub enum SummaryRead {
    /// No file.
    Missing,
    /// A file that could not be read or is not JSON (the message says which).
    Unreadable(String),
    /// A JSON document (not necessarily an object).
    Json(Value),
}

/// A failed soak's classification and reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The classification.
    pub classification: FailureClassification,
    /// Every reason found, `; `-separated.
    pub reason: String,
}

/// The producer's shutdown snapshot of a summary (`runtime_manifest.shutdown`), when it has the
/// typed shape; None when absent or malformed.
pub fn producer_shutdown(summary: &Value) -> Option<ShutdownSnapshot> {
    let raw = summary.get("runtime_manifest")?.get("shutdown")?;
    serde_json::from_value(raw.clone()).ok()
}

/// How the producer described its shutdown, for the end of the reason.
fn describe_shutdown(s: &ShutdownSnapshot) -> String {
    let mut d = format!(
        "producer shutdown: {} (owner {}, phase {})",
        s.classification, s.owner, s.phase
    );
    if let Some(e) = &s.exception {
        d.push_str(&format!(": {}: {}", e.kind, e.message));
    }
    if !s.cleanup.errors.is_empty() {
        d.push_str(&format!(", {} cleanup error(s)", s.cleanup.errors.len()));
    }
    d
}

/// The verdict: None when every monitor check held and the summary describes a completed run
/// (the completed run's contract is checked next, on the artefact: [`contract_failure`]).
pub fn classify(o: &Observed, summary: &SummaryRead) -> Option<Failure> {
    use FailureClassification as C;
    let mut reasons: Vec<String> = Vec::new();
    let mut monitor = None;
    if let Some((c, r)) = &o.monitor {
        monitor = Some(*c);
        reasons.push(r.clone());
    }
    if o.residual > 0 {
        reasons.push(format!(
            "{} process(es) of the command's group still alive {}s after it ended (killed)",
            o.residual, o.grace_s
        ));
        monitor.get_or_insert(C::ResourceLeak);
    }
    match o.returncode {
        Some(rc) if rc < 0 => reasons.push(format!("command killed by signal {}", -rc)),
        Some(rc) if rc > 0 => reasons.push(format!("command exited with code {rc}")),
        _ => {}
    }
    if o.duration_s < o.min_duration_s {
        reasons.push(format!(
            "ran {:.1}s, shorter than --min-duration-seconds {}",
            o.duration_s, o.min_duration_s
        ));
    }

    // What the summary forces (it cannot be overridden), or suggests when nothing else did.
    let mut forced = None;
    let mut fallback = None;
    let mut producer_note = None;
    match summary {
        SummaryRead::Missing => {
            reasons.push("the run left no run_summary.json".into());
            fallback = Some(C::MissingRunSummary);
        }
        SummaryRead::Unreadable(msg) => {
            reasons.push(format!("run_summary.json is unreadable: {msg}"));
            forced = Some(C::InvalidRunSummary);
        }
        SummaryRead::Json(v) => {
            let verdict = summary_verdict(v, o.monitor.is_some());
            forced = verdict.forced();
            match verdict {
                SummaryVerdict::NotAnObject => {
                    reasons.push("run_summary.json is not a JSON object".into());
                }
                SummaryVerdict::NoManifest { status: "running" } => {
                    reasons.push(
                        "run_summary.json was never finalised (status running, no runtime \
                         manifest yet)"
                            .into(),
                    );
                    fallback = Some(C::UnknownFailure);
                }
                SummaryVerdict::NoManifest { status } => {
                    reasons.push(format!("the run's status is {status}"));
                    reasons.push(
                        "run_summary.json carries no runtime_manifest, so no producer \
                         classification: the monitor's stands"
                            .into(),
                    );
                    fallback = Some(C::UnknownFailure);
                }
                SummaryVerdict::UnsupportedSchema => reasons.push(
                    "run_summary.json needs metric_schema_version 1 and a runtime_manifest with \
                     schema_version 1 (the monitor reads nothing out of another schema)"
                        .into(),
                ),
                SummaryVerdict::CompletionOnUnfinishedRun { status }
                | SummaryVerdict::Producer { status, .. }
                | SummaryVerdict::NotCompleted { status } => {
                    reasons.push(format!("the run's status is {status}"));
                    if let SummaryVerdict::CompletionOnUnfinishedRun { .. } = verdict {
                        reasons.push(format!(
                            "the producer reports normal_completion on a run whose status is \
                             {status}"
                        ));
                    }
                    fallback = Some(C::UnknownFailure);
                    producer_note = producer_shutdown(v).as_ref().map(describe_shutdown);
                }
                SummaryVerdict::Completed => {}
            }
        }
    }
    let classification = forced
        .or(monitor)
        .or(fallback)
        .or((!reasons.is_empty()).then_some(C::UnknownFailure))?;
    reasons.extend(producer_note);
    Some(Failure {
        classification,
        reason: reasons.join("; "),
    })
}

/// A completed run whose soak artefact breaks the pass rules (`violations` of the artefact
/// validated as passed): a broken shutdown snapshot is a `shutdown_contract_violation`,
/// anything else (drain invariants, the summary's own validity) an `unknown_failure`. None
/// when there is no violation.
pub fn contract_failure(violations: &[Violation]) -> Option<Failure> {
    if violations.is_empty() {
        return None;
    }
    let shutdown = violations.iter().any(|v| {
        v.path.starts_with("$.shutdown")
            || v.path
                .starts_with("$.run_summary.runtime_manifest.shutdown")
    });
    let listed: Vec<String> = violations.iter().map(ToString::to_string).collect();
    Some(Failure {
        classification: if shutdown {
            FailureClassification::ShutdownContractViolation
        } else {
            FailureClassification::UnknownFailure
        },
        reason: format!(
            "the completed run breaks the soak contract: {}",
            listed.join("; ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use FailureClassification as C;

    fn clean() -> Observed {
        Observed {
            monitor: None,
            returncode: Some(0),
            duration_s: 10.0,
            min_duration_s: 0.0,
            residual: 0,
            grace_s: 5.0,
        }
    }

    fn summary(status: &str, shutdown: Option<Value>) -> SummaryRead {
        let mut m = json!({"schema_version": 1});
        if let Some(s) = shutdown {
            m["shutdown"] = s;
        }
        SummaryRead::Json(json!({
            "metric_schema_version": 1, "status": status, "runtime_manifest": m
        }))
    }

    fn snapshot(classification: &str) -> Value {
        json!({"classification": classification, "owner": "learner", "phase": "update",
               "exception": {"type": "RuntimeError", "message": "CUDA error"},
               "cleanup": {"errors": []}})
    }

    #[test]
    fn a_clean_completed_run_passes_these_checks() {
        assert_eq!(classify(&clean(), &summary("completed", None)), None);
    }

    #[test]
    fn monitor_classification_wins_over_a_missing_summary() {
        let mut o = clean();
        o.monitor = Some((C::TimeoutStaleTick, "progress unchanged for 1.2s".into()));
        o.returncode = None;
        let f = classify(&o, &SummaryRead::Missing).unwrap();
        assert_eq!(f.classification, C::TimeoutStaleTick);
        assert_eq!(
            f.reason,
            "progress unchanged for 1.2s; the run left no run_summary.json"
        );
    }

    #[test]
    fn residual_processes_are_a_resource_leak() {
        let mut o = clean();
        o.residual = 2;
        let f = classify(&o, &summary("completed", None)).unwrap();
        assert_eq!(f.classification, C::ResourceLeak);
        assert!(f.reason.starts_with("2 process(es)"), "{}", f.reason);
    }

    #[test]
    fn exit_code_only_sets_the_reason() {
        let mut o = clean();
        o.returncode = Some(3);
        let f = classify(&o, &SummaryRead::Missing).unwrap();
        assert_eq!(f.classification, C::MissingRunSummary);
        assert!(f.reason.starts_with("command exited with code 3"));
        let f = classify(&o, &summary("completed", None)).unwrap();
        assert_eq!(f.classification, C::UnknownFailure);
        o.returncode = Some(-9);
        let f = classify(&o, &summary("completed", None)).unwrap();
        assert_eq!(f.reason, "command killed by signal 9");
    }

    #[test]
    fn too_short_a_run_fails() {
        let mut o = clean();
        o.min_duration_s = 60.0;
        let f = classify(&o, &summary("completed", None)).unwrap();
        assert_eq!(f.classification, C::UnknownFailure);
        assert!(f.reason.contains("shorter than --min-duration-seconds 60"));
    }

    #[test]
    fn the_producer_classification_wins_and_its_description_comes_last() {
        let mut o = clean();
        o.monitor = Some((C::TimeoutStaleTick, "progress unchanged".into()));
        o.returncode = None;
        let f = classify(&o, &summary("failed", Some(snapshot("learner_failure")))).unwrap();
        assert_eq!(f.classification, C::LearnerFailure);
        assert_eq!(
            f.reason,
            "progress unchanged; the run's status is failed; producer shutdown: learner_failure \
             (owner learner, phase update): RuntimeError: CUDA error"
        );
    }

    #[test]
    fn the_producers_cancellation_by_the_monitor_does_not_hide_why_the_monitor_ended_it() {
        // The monitor's SIGTERM is what the producer records as external_cancellation.
        let mut o = clean();
        o.monitor = Some((C::TimeoutStaleTick, "progress unchanged".into()));
        o.returncode = None;
        let cancelled = summary("interrupted", Some(snapshot("external_cancellation")));
        let f = classify(&o, &cancelled).unwrap();
        assert_eq!(f.classification, C::TimeoutStaleTick);
        assert!(f.reason.starts_with("progress unchanged;"), "{}", f.reason);
        assert!(
            f.reason
                .contains("producer shutdown: external_cancellation"),
            "{}",
            f.reason
        );
        // Cancelled by someone else while the monitor saw nothing wrong: the producer's word.
        let f = classify(&clean(), &cancelled).unwrap();
        assert_eq!(f.classification, C::ExternalCancellation);
    }

    #[test]
    fn a_summary_left_running_by_a_run_the_monitor_ended_is_unfinished_not_a_schema_violation() {
        let mut o = clean();
        o.monitor = Some((C::TimeoutStaleTick, "progress unchanged".into()));
        o.returncode = None;
        let mut v =
            json!({"metric_schema_version": 1, "status": "running", "runtime_manifest": null});
        let f = classify(&o, &SummaryRead::Json(v.clone())).unwrap();
        assert_eq!(f.classification, C::TimeoutStaleTick);
        assert!(
            f.reason
                .ends_with("never finalised (status running, no runtime manifest yet)"),
            "{}",
            f.reason
        );
        // Without the monitor's own finding the same summary is what the contract says.
        let f = classify(&clean(), &SummaryRead::Json(v.clone())).unwrap();
        assert_eq!(f.classification, C::SchemaViolation);
        // Another metric schema stays a schema violation.
        v["metric_schema_version"] = json!(2);
        let f = classify(&o, &SummaryRead::Json(v)).unwrap();
        assert_eq!(f.classification, C::SchemaViolation);
    }

    #[test]
    fn a_stalled_run_whose_summary_has_no_manifest_keeps_the_monitors_classification() {
        // No runtime manifest, so no producer classification: the monitor's own is recorded,
        // the summary's problem added to the reason (manifest-and-soak.md, the classification).
        let mut o = clean();
        o.monitor = Some((C::TimeoutStaleTick, "progress unchanged for 130.0s".into()));
        o.returncode = None;
        for v in [
            json!({"metric_schema_version": 1, "status": "interrupted"}),
            json!({"metric_schema_version": 1, "status": "failed", "runtime_manifest": null}),
            json!({"metric_schema_version": 1}),
        ] {
            let f = classify(&o, &SummaryRead::Json(v.clone())).unwrap();
            assert_eq!(f.classification, C::TimeoutStaleTick, "{v}");
            assert!(
                f.reason.starts_with("progress unchanged for 130.0s; "),
                "{}",
                f.reason
            );
            assert!(
                f.reason.ends_with(
                    "run_summary.json carries no runtime_manifest, so no producer \
                     classification: the monitor's stands"
                ),
                "{}",
                f.reason
            );
        }
        let mut startup = o.clone();
        startup.monitor = Some((C::TimeoutStartup, "no progress".into()));
        let v = json!({"metric_schema_version": 1, "status": "interrupted"});
        let f = classify(&startup, &SummaryRead::Json(v.clone())).unwrap();
        assert_eq!(f.classification, C::TimeoutStartup);
        // A command that ended by itself with no manifest: the soak's job broke the contract.
        let mut exited = clean();
        exited.returncode = Some(1);
        let f = classify(&exited, &SummaryRead::Json(v)).unwrap();
        assert_eq!(f.classification, C::SchemaViolation);
        // A manifest of another schema is read as nothing, even when the monitor ended the run.
        let v = json!({"metric_schema_version": 1, "status": "interrupted",
                       "runtime_manifest": {"schema_version": 2}});
        let f = classify(&o, &SummaryRead::Json(v)).unwrap();
        assert_eq!(f.classification, C::SchemaViolation);
    }

    #[test]
    fn an_untrusted_snapshot_does_not_win() {
        let mut bad = snapshot("learner_failure");
        bad["owner"] = json!(" ");
        let f = classify(&clean(), &summary("failed", Some(bad))).unwrap();
        assert_eq!(f.classification, C::UnknownFailure);
        let f = classify(&clean(), &summary("failed", Some(json!("oops")))).unwrap();
        assert_eq!(f.classification, C::UnknownFailure);
    }

    #[test]
    fn normal_completion_on_a_failed_run_is_a_contract_violation() {
        let mut o = clean();
        o.monitor = Some((C::ExternalCancellation, "cancelled".into()));
        let f = classify(
            &o,
            &summary("interrupted", Some(snapshot("normal_completion"))),
        )
        .unwrap();
        assert_eq!(f.classification, C::ShutdownContractViolation);
    }

    #[test]
    fn summaries_the_monitor_cannot_read_force_their_classification() {
        let mut o = clean();
        o.monitor = Some((C::TimeoutStartup, "no progress".into()));
        let f = classify(&o, &SummaryRead::Json(json!([1]))).unwrap();
        assert_eq!(f.classification, C::InvalidRunSummary);
        let f = classify(&o, &SummaryRead::Unreadable("expected value".into())).unwrap();
        assert_eq!(f.classification, C::InvalidRunSummary);
        let v = json!({"metric_schema_version": 1.0, "status": "completed",
                       "runtime_manifest": {"schema_version": 1}});
        let f = classify(&clean(), &SummaryRead::Json(v)).unwrap();
        assert_eq!(f.classification, C::SchemaViolation);
        let v = json!({"metric_schema_version": 1, "status": "completed"});
        let f = classify(&clean(), &SummaryRead::Json(v)).unwrap();
        assert_eq!(f.classification, C::SchemaViolation);
    }

    #[test]
    fn contract_failures_name_the_shutdown_or_not() {
        assert_eq!(contract_failure(&[]), None);
        let v = |p: &str| Violation {
            path: p.into(),
            expected: "x".into(),
            found: "y".into(),
        };
        let f = contract_failure(&[v("$.run_summary.runtime_manifest.replay_ingress.occupancy")]);
        assert_eq!(f.unwrap().classification, C::UnknownFailure);
        let f = contract_failure(&[v("$.shutdown")]).unwrap();
        assert_eq!(f.classification, C::ShutdownContractViolation);
        assert_eq!(
            f.reason,
            "the completed run breaks the soak contract: $.shutdown: expected x, found y"
        );
    }
}
