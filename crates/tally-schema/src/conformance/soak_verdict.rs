//! What a soak's run summary decides of its failure classification
//! (`docs/contract/manifest-and-soak.md` "A failed soak: classification"): the precedence stated
//! once, applied by the soak monitor when it classifies and checked by the artefact validator
//! on an artefact someone else may have written.

use serde_json::Value;

use super::value::non_empty_str;
use crate::artifacts::{FailureClassification, NORMAL_COMPLETION, SHUTDOWN_CLASSIFICATIONS};

/// What the run summary says of a failed soak, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryVerdict<'a> {
    /// Not a JSON object: `invalid_run_summary`, whatever else happened.
    NotAnObject,
    /// Metric schema 1 without a runtime manifest (absent or null), on a run the monitor ended
    /// (a summary left `running`, or one the producer closed without a manifest): no producer
    /// classification, so it classifies nothing and the monitor's own stands.
    NoManifest {
        /// The summary's status (`missing` when absent).
        status: &'a str,
    },
    /// A missing or unsupported metric or manifest schema: `schema_violation` (nothing is read
    /// out of another schema).
    UnsupportedSchema,
    /// `normal_completion` on a run whose status is not `completed`:
    /// `shutdown_contract_violation`.
    CompletionOnUnfinishedRun {
        /// The summary's status (`missing` when absent).
        status: &'a str,
    },
    /// A trusted producer classification on a run that did not complete: it wins over the
    /// monitor's.
    Producer {
        /// The summary's status (`missing` when absent).
        status: &'a str,
        /// The producer's classification.
        classification: FailureClassification,
    },
    /// A run that did not complete with no producer classification that counts (none, an
    /// untrusted snapshot, or the `external_cancellation` the monitor's own signal caused).
    NotCompleted {
        /// The summary's status (`missing` when absent).
        status: &'a str,
    },
    /// A completed run: its own contract is checked on the artefact.
    Completed,
}

impl SummaryVerdict<'_> {
    /// The classification the summary imposes, which no finding of the monitor overrides.
    pub fn forced(self) -> Option<FailureClassification> {
        match self {
            SummaryVerdict::NotAnObject => Some(FailureClassification::InvalidRunSummary),
            SummaryVerdict::UnsupportedSchema => Some(FailureClassification::SchemaViolation),
            SummaryVerdict::CompletionOnUnfinishedRun { .. } => {
                Some(FailureClassification::ShutdownContractViolation)
            }
            SummaryVerdict::Producer { classification, .. } => Some(classification),
            SummaryVerdict::NoManifest { .. }
            | SummaryVerdict::NotCompleted { .. }
            | SummaryVerdict::Completed => None,
        }
    }
}

/// The verdict of `summary`. `monitor_ended`: the monitor ended the command (a timeout or a
/// cancellation), so the producer's `external_cancellation` is the monitor's own signal and says
/// nothing about why.
pub fn summary_verdict(summary: &Value, monitor_ended: bool) -> SummaryVerdict<'_> {
    if !summary.is_object() {
        return SummaryVerdict::NotAnObject;
    }
    let status = summary
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("missing");
    let manifest = summary.get("runtime_manifest");
    let metric_v1 = is_one(summary.get("metric_schema_version"));
    if monitor_ended && metric_v1 && manifest.is_none_or(Value::is_null) {
        return SummaryVerdict::NoManifest { status };
    }
    let manifest = manifest.filter(|m| m.is_object());
    if !metric_v1 || !manifest.is_some_and(|m| is_one(m.get("schema_version"))) {
        return SummaryVerdict::UnsupportedSchema;
    }
    if status == "completed" {
        return SummaryVerdict::Completed;
    }
    let shutdown = manifest
        .and_then(|m| m.get("shutdown"))
        .filter(|s| s.is_object());
    let named = shutdown
        .and_then(|s| s.get("classification"))
        .and_then(Value::as_str);
    if named == Some(NORMAL_COMPLETION) {
        return SummaryVerdict::CompletionOnUnfinishedRun { status };
    }
    let producer = named
        .filter(|_| shutdown.is_some_and(trusted))
        .and_then(FailureClassification::from_name)
        .filter(|c| c.is_producer())
        .filter(|&c| !(monitor_ended && c == FailureClassification::ExternalCancellation));
    match producer {
        Some(classification) => SummaryVerdict::Producer {
            status,
            classification,
        },
        None => SummaryVerdict::NotCompleted { status },
    }
}

/// A shutdown snapshot whose classification may be trusted: a known classification, an
/// exception that is null or `{type, message}`, a `cleanup.errors` list, and a non-empty owner
/// and phase.
pub(super) fn trusted(s: &Value) -> bool {
    let class_ok = s
        .get("classification")
        .and_then(Value::as_str)
        .is_some_and(|c| SHUTDOWN_CLASSIFICATIONS.contains(&c));
    let exception_ok = match s.get("exception") {
        None | Some(Value::Null) => true,
        Some(e) => {
            e.get("type").is_some_and(Value::is_string)
                && e.get("message").is_some_and(Value::is_string)
        }
    };
    let cleanup_ok = s
        .get("cleanup")
        .and_then(|c| c.get("errors"))
        .is_some_and(Value::is_array);
    class_ok
        && exception_ok
        && cleanup_ok
        && non_empty_str(s.get("owner"))
        && non_empty_str(s.get("phase"))
}

/// Whether `v` is exactly the integer 1.
fn is_one(v: Option<&Value>) -> bool {
    v.is_some_and(|x| x.as_u64() == Some(1))
}
