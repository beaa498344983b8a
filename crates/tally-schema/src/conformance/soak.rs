//! Soak artifact 0.3.0 rules (`docs/contract/manifest-and-soak.md`, soak artifact 0.3.0).
//!
//! After the shape: the top-level `shutdown` is the producer's raw
//! `runtime_manifest.shutdown`; a pass needs a clean exit, no residual process, a clean, owned
//! `normal_completion` shutdown snapshot and a completed, drained, valid run summary; a failure
//! needs a reason and the classification the precedence rules give (`soak_verdict.rs`: a
//! summary that is not an object, then one with a missing or unsupported schema, then
//! `normal_completion` on a run that did not complete, then a trusted producer classification,
//! which wins over the monitor's); a classification naming an owner needs that producer
//! classification.

use super::path::child;
use super::run_summary::check_run_summary;
use super::shape::Shape;
use super::soak_verdict::{summary_verdict, SummaryVerdict};
use super::stamps::{soak_stamp, Stamp};
use super::value::{is_int, non_empty_str};
use super::violation::{describe, quoted, Violation};
use crate::artifacts::{ArtifactKind, FailureClassification, NORMAL_COMPLETION};
use serde_json::{Map, Value};

pub(super) fn check_soak(v: &Value, out: &mut Vec<Violation>) {
    let Some(obj) = v.as_object() else {
        out.push(Violation::new(
            "$",
            "a soak artifact object",
            describe(Some(v)),
        ));
        return;
    };
    if soak_stamp(obj.get("schema_version"), "$.schema_version", out) == Stamp::Unsupported {
        return;
    }
    Shape::of(ArtifactKind::SoakArtifact).check_document(v, "$", &["schema_version"], out);

    let summary = obj.get("run_summary");
    let shutdown = obj.get("shutdown").filter(|s| !s.is_null());
    // The top-level shutdown is the producer's raw runtime_manifest.shutdown.
    if let (Some(top), Some(raw)) = (
        shutdown,
        summary
            .and_then(|s| s.get("runtime_manifest"))
            .and_then(|m| m.get("shutdown")),
    ) {
        if top != raw {
            out.push(Violation::new(
                "$.shutdown",
                "the run summary's runtime_manifest.shutdown, copied raw",
                "a different value",
            ));
        }
    }
    match obj.get("status").and_then(Value::as_str) {
        Some("passed") => check_soak_pass(obj, out),
        Some("failed") => check_soak_failure(obj, out),
        _ => {} // the shape check reported the status
    }
}

fn check_soak_pass(obj: &Map<String, Value>, out: &mut Vec<Violation>) {
    let passed = " (the soak passed)";
    for key in ["failure_classification", "failure_reason"] {
        let x = obj.get(key);
        // Missing is the shape check's to report.
        if x.is_some_and(|x| !x.is_null()) {
            out.push(Violation::new(
                child("$", key),
                format!("null{passed}"),
                describe(x),
            ));
        }
    }
    let rc = obj.get("returncode");
    if rc.and_then(Value::as_i64) != Some(0) && rc.is_some_and(|r| r.is_null() || is_int(r)) {
        out.push(Violation::new(
            "$.returncode",
            "0 (the soak passed, so its command exited cleanly)",
            describe(rc),
        ));
    }
    let min = obj
        .get("monitor")
        .and_then(|m| m.get("min_duration_s"))
        .and_then(Value::as_f64);
    if let (Some(min), Some(d)) = (min, obj.get("duration_s").and_then(Value::as_f64)) {
        if d < min {
            out.push(Violation::new(
                "$.duration_s",
                format!("at least monitor.min_duration_s = {min}{passed}"),
                describe(obj.get("duration_s")),
            ));
        }
    }
    let residual = obj
        .get("post_shutdown")
        .and_then(|p| p.get("residual_processes"))
        .and_then(Value::as_array);
    if residual.is_some_and(|r| !r.is_empty()) {
        out.push(Violation::new(
            "$.post_shutdown.residual_processes",
            "no residual process (the soak passed; leftovers are a resource_leak)",
            describe(
                obj.get("post_shutdown")
                    .and_then(|p| p.get("residual_processes")),
            ),
        ));
    }
    let count = obj
        .get("resource_summary")
        .and_then(|r| r.get("residual_process_count"));
    if count.and_then(Value::as_u64).is_some_and(|n| n > 0) {
        out.push(Violation::new(
            "$.resource_summary.residual_process_count",
            format!("0{passed}"),
            describe(count),
        ));
    }

    // The producer's shutdown snapshot: a clean, owned, normal completion.
    match obj.get("shutdown") {
        Some(s) if s.is_object() => {
            let c = s.get("classification");
            if c.and_then(Value::as_str) != Some(NORMAL_COMPLETION) {
                out.push(Violation::new(
                    "$.shutdown.classification",
                    format!("{}{passed}", quoted(NORMAL_COMPLETION)),
                    describe(c),
                ));
            }
            for key in ["owner", "phase"] {
                // A missing or non-string owner/phase is the shape check's to report.
                let x = s.get(key);
                if x.and_then(Value::as_str)
                    .is_some_and(|t| t.trim().is_empty())
                {
                    out.push(Violation::new(
                        child("$.shutdown", key),
                        format!("a non-empty string{passed}"),
                        describe(x),
                    ));
                }
            }
            let errors = s.get("cleanup").and_then(|c| c.get("errors"));
            if errors
                .and_then(Value::as_array)
                .is_some_and(|e| !e.is_empty())
            {
                out.push(Violation::new(
                    "$.shutdown.cleanup.errors",
                    format!("no cleanup error{passed}"),
                    describe(errors),
                ));
            }
        }
        None => {} // the shape check reports it missing
        other => out.push(Violation::new(
            "$.shutdown",
            format!("the producer's shutdown snapshot{passed}"),
            describe(other),
        )),
    }

    // The run summary: present, completed, drained, then valid on its own.
    let summary = obj.get("run_summary");
    let Some(s) = summary.filter(|s| s.is_object()) else {
        if summary.is_none() {
            return; // the shape check reports it missing
        }
        out.push(Violation::new(
            "$.run_summary",
            format!("the run's summary object{passed}"),
            describe(summary),
        ));
        return;
    };
    let status = s.get("status");
    if status.and_then(Value::as_str) != Some("completed") {
        out.push(Violation::new(
            "$.run_summary.status",
            format!("\"completed\"{passed}"),
            describe(status),
        ));
    } else {
        check_drained(s, out);
    }
    check_run_summary(s, "$.run_summary", true, out);
}

/// The invariants a completed run's replay ingress and inference flight hold: nothing left in
/// flight or queued, release ≤ published, occupancy = published − released = 0,
/// 0 < high water ≤ depth, no early return or dropped batch, and every slot of
/// `total_env_steps / ingress_slot_rows` published and released.
fn check_drained(summary: &Value, out: &mut Vec<Violation>) {
    let m = "$.run_summary.runtime_manifest";
    let Some(manifest) = summary.get("runtime_manifest") else {
        return;
    };
    let drained = "a completed run drains";
    if let Some(flight) = manifest.get("inference_flight") {
        for key in ["queue_depth", "publication_lag"] {
            let x = flight.get(key);
            if x.and_then(Value::as_u64).is_some_and(|n| n != 0) {
                out.push(Violation::new(
                    format!("{m}.inference_flight.{key}"),
                    format!("0 or absent ({drained} the inference flight)"),
                    describe(x),
                ));
            }
        }
    }
    let Some(ri) = manifest.get("replay_ingress").filter(|r| r.is_object()) else {
        return;
    };
    let p = format!("{m}.replay_ingress");
    let get = |k: &str| ri.get(k).filter(|x| is_int(x)).and_then(Value::as_u64);
    let mut bad = |key: &str, expected: String| {
        out.push(Violation::new(
            child(&p, key),
            expected,
            describe(ri.get(key)),
        ));
    };
    let depth = get("ingress_depth");
    let rows = get("ingress_slot_rows");
    let published = get("published_sequence");
    let released = get("release_sequence");
    let occupancy = get("occupancy");
    let high = get("high_water_occupancy");
    if depth == Some(0) {
        bad(
            "ingress_depth",
            "a positive integer (a completed run had an ingress)".into(),
        );
    }
    if rows == Some(0) {
        bad(
            "ingress_slot_rows",
            "a positive integer (a completed run wrote rows)".into(),
        );
    }
    let mut occupancy_reported = false;
    if let (Some(pu), Some(re)) = (published, released) {
        if re > pu {
            bad(
                "release_sequence",
                format!("at most published_sequence ({pu})"),
            );
        } else if occupancy.is_some_and(|o| o != pu - re) {
            bad(
                "occupancy",
                format!("published_sequence − release_sequence ({})", pu - re),
            );
            occupancy_reported = true;
        }
    }
    if !occupancy_reported && occupancy.is_some_and(|o| o != 0) {
        bad("occupancy", format!("0 ({drained} the replay ingress)"));
    }
    if let (Some(h), Some(d)) = (high, depth) {
        if h > d {
            bad(
                "high_water_occupancy",
                format!("at most ingress_depth ({d})"),
            );
        }
    }
    if let (Some(h), Some(o)) = (high, occupancy) {
        if h < o {
            bad("high_water_occupancy", format!("at least occupancy ({o})"));
        }
    }
    if high == Some(0) {
        bad(
            "high_water_occupancy",
            "a positive integer (a completed run used the ingress)".into(),
        );
    }
    for key in ["early_returns", "dropped_batches"] {
        if get(key).is_some_and(|n| n != 0) {
            bad(key, "0 on a completed run".into());
        }
    }
    if let (Some(c), Some(s), Some(e)) = (
        get("closed_returns"),
        get("stop_returns"),
        get("early_returns"),
    ) {
        if c + s != e {
            out.push(Violation::new(
                format!("{p}.closed_returns"),
                format!("closed_returns + stop_returns == early_returns ({e})"),
                format!("closed_returns + stop_returns = {}", c + s),
            ));
        }
    }
    let steps_v = summary.get("total_env_steps");
    let Some(steps) = steps_v.filter(|x| is_int(x)).and_then(Value::as_u64) else {
        return;
    };
    if steps == 0 {
        out.push(Violation::new(
            "$.run_summary.total_env_steps",
            "a positive integer (a completed run stepped)",
            describe(steps_v),
        ));
        return;
    }
    let Some(rows) = rows.filter(|r| *r > 0) else {
        return;
    };
    if steps % rows != 0 {
        out.push(Violation::new(
            "$.run_summary.total_env_steps",
            format!("a multiple of ingress_slot_rows ({rows})"),
            describe(steps_v),
        ));
        return;
    }
    let slots = steps / rows;
    for key in ["published_sequence", "release_sequence"] {
        if get(key).is_some_and(|n| n != slots) {
            out.push(Violation::new(
                child(&p, key),
                format!("total_env_steps / ingress_slot_rows ({slots})"),
                describe(ri.get(key)),
            ));
        }
    }
}

fn check_soak_failure(obj: &Map<String, Value>, out: &mut Vec<Violation>) {
    let failed = " (the soak failed)";
    let reason = obj.get("failure_reason");
    // Missing is the shape check's to report.
    if reason.is_some() && !non_empty_str(reason) {
        out.push(Violation::new(
            "$.failure_reason",
            format!("a non-empty string{failed}"),
            describe(obj.get("failure_reason")),
        ));
    }
    let fc = obj.get("failure_classification");
    let Some(have) = fc.and_then(Value::as_str) else {
        if matches!(fc, Some(Value::Null)) {
            out.push(Violation::new(
                "$.failure_classification",
                format!("a failure classification{failed}"),
                describe(fc),
            ));
        }
        return;
    };
    let Some(have_c) = FailureClassification::from_name(have) else {
        return; // the shape check reported the unknown name
    };
    let mut want = |expected: String| {
        out.push(Violation::new(
            "$.failure_classification",
            expected,
            describe(fc),
        ));
    };
    let Some(summary) = obj.get("run_summary").filter(|s| !s.is_null()) else {
        return;
    };
    // `returncode` null: the monitor ended the command (a timeout or a cancellation).
    let monitor_ended = obj.get("returncode").is_some_and(Value::is_null);
    let verdict = summary_verdict(summary, monitor_ended);
    if let Some(forced) = verdict.forced() {
        if have_c != forced {
            let why = match verdict {
                SummaryVerdict::NotAnObject => {
                    format!("run_summary is {}", describe(Some(summary)))
                }
                SummaryVerdict::UnsupportedSchema => {
                    "the run summary's metric or manifest schema is missing or unsupported".into()
                }
                SummaryVerdict::CompletionOnUnfinishedRun { status } => format!(
                    "normal_completion on a run whose summary status is {}",
                    quoted(status)
                ),
                _ => "the producer's shutdown classification wins over the monitor's".into(),
            };
            want(format!("{} ({why})", quoted(forced.as_str())));
        }
        return;
    }
    // No valid producer classification: one only a producer can make has no source.
    if names_an_owner(have_c) {
        want(format!(
            "a monitor classification or unknown_failure ({} names an owner, but the shutdown \
             snapshot carries no valid producer classification)",
            quoted(have)
        ));
    }
}

/// A classification only a producer can make: it names the component that failed.
fn names_an_owner(c: FailureClassification) -> bool {
    matches!(
        c,
        FailureClassification::LearnerFailure
            | FailureClassification::CollectorFailure
            | FailureClassification::BackendWorkerFailure
    )
}
