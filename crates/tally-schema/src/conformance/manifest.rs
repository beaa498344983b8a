//! Runtime manifest v1 rules (`docs/contract/manifest-and-soak.md`, runtime manifest v1).
//!
//! An early-failure manifest needs only `schema_version`; present stable members are typed. A
//! completed run's manifest must also carry a positive `inference_ring_capacity` and
//! `collector_metrics_interval`, a `collector_backend_device`, and the `inference_flight` and
//! `replay_ingress` mappings.
//!
//! `collector_backend_device: null` is accepted only when the manifest does not say the
//! collector backend needs an accelerator: the manifest's own (experimental, optional)
//! `collector_accelerator_context` is the evidence. A context naming an accelerator (any
//! non-empty string other than `none` or `cpu`) makes null a violation; an absent, null,
//! `none` or `cpu` context leaves null accepted, as runtime manifest v1 allows it.

use super::path::child;
use super::shape::Shape;
use super::stamps::{int_stamp, Stamp};
use super::value::is_int;
use super::violation::{describe, quoted, Violation};
use crate::artifacts::ArtifactKind;
use serde_json::{Map, Value};

/// Whether the manifest says its collector backend needs an accelerator: the
/// `collector_accelerator_context` when it names one (a non-empty string other than `none` or
/// `cpu`, compared case-insensitively).
pub fn accelerator_context(manifest: &Value) -> Option<&str> {
    let ctx = manifest.get("collector_accelerator_context")?.as_str()?;
    let t = ctx.trim();
    let none = t.is_empty() || t.eq_ignore_ascii_case("none") || t.eq_ignore_ascii_case("cpu");
    (!none).then_some(ctx)
}

pub(super) fn check_manifest(v: &Value, path: &str, completed: bool, out: &mut Vec<Violation>) {
    let Some(obj) = v.as_object() else {
        out.push(Violation::new(
            path,
            "a runtime manifest object",
            describe(Some(v)),
        ));
        return;
    };
    let stamp = int_stamp(
        obj.get("schema_version"),
        &child(path, "schema_version"),
        "runtime manifest schema version",
        out,
    );
    if stamp == Stamp::Unsupported {
        return;
    }
    let when = " (required when the run completed)";
    for key in ["inference_ring_capacity", "collector_metrics_interval"] {
        let x = obj.get(key);
        let ok = x.is_some_and(|x| is_int(x) && x.as_u64().is_some_and(|n| n > 0));
        let absent = matches!(x, None | Some(Value::Null));
        if ok || (absent && !completed) {
            continue;
        }
        let expected = if absent {
            format!("a positive integer{when}")
        } else {
            "a positive integer".to_owned()
        };
        out.push(Violation::new(child(path, key), expected, describe(x)));
    }
    check_device(obj, v, path, completed, out);
    Shape::of(ArtifactKind::RuntimeManifest).check_document(
        v,
        path,
        &[
            "schema_version",
            "inference_ring_capacity",
            "collector_metrics_interval",
            "collector_backend_device",
        ],
        out,
    );
    if completed {
        for key in ["inference_flight", "replay_ingress"] {
            let x = obj.get(key);
            if matches!(x, None | Some(Value::Null)) {
                out.push(Violation::new(
                    child(path, key),
                    format!(
                        "{} {key} mapping{when}",
                        if key.starts_with('i') { "an" } else { "a" }
                    ),
                    describe(x),
                ));
            }
        }
    }
}

fn check_device(
    obj: &Map<String, Value>,
    v: &Value,
    path: &str,
    completed: bool,
    out: &mut Vec<Violation>,
) {
    let key = "collector_backend_device";
    let x = obj.get(key);
    let rule = "a non-empty device string, or null when the backend needs no accelerator";
    match x {
        None if completed => out.push(Violation::new(
            child(path, key),
            format!("{rule} (required when the run completed)"),
            "missing",
        )),
        None => {}
        Some(Value::String(s)) if !s.trim().is_empty() => {}
        Some(Value::Null) => {
            if let Some(ctx) = accelerator_context(v) {
                out.push(Violation::new(
                    child(path, key),
                    format!(
                        "a non-empty device string (collector_accelerator_context {} names an \
                         accelerator, so the backend needs one)",
                        quoted(ctx)
                    ),
                    "null",
                ));
            }
        }
        Some(other) => out.push(Violation::new(
            child(path, key),
            rule,
            describe(Some(other)),
        )),
    }
}
