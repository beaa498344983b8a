//! Pins the artefact conformance checks: every valid fixture passes, every invalid fixture
//! breaks exactly its rule (`docs/contract/run-artifacts.md`,
//! `docs/contract/manifest-and-soak.md`).
//!
//! Fixtures live in `testdata/artifacts/` (see its README): `valid/` holds hand-written
//! artefacts following the contract, `invalid/<kind>.<rule>.json` is a valid one with one
//! edit. The tables in `run_summary.rs`, `manifest.rs` and `soak.rs` name, for each invalid
//! file, the rule it breaks and every violation it must produce (path and expected text), no
//! more and no fewer.

mod manifest;
mod run_summary;
mod soak;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tally_schema::artifacts::{ArtifactKind, RunSummary, RuntimeManifest, SoakArtifact};
use tally_schema::conformance::{
    detect_kind, validate, validate_as, validate_run_summary, validate_soak_artifact, Violation,
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

#[test]
fn every_invalid_fixture_breaks_exactly_its_rule() {
    let tables = [run_summary::INVALID, manifest::INVALID, soak::INVALID];
    let listed: Vec<&str> = tables
        .iter()
        .flat_map(|t| t.iter().map(|(n, _)| *n))
        .collect();
    let on_disk = stems("invalid");
    assert_eq!(
        on_disk,
        {
            let mut l: Vec<String> = listed.iter().map(|s| s.to_string()).collect();
            l.sort();
            l
        },
        "testdata/artifacts/invalid and the tables must list the same fixtures"
    );
    for (name, want) in tables.iter().flat_map(|t| t.iter()) {
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
fn all_violations_are_reported_not_just_the_first() {
    // Every violation is reported, each naming the JSON path, the expected and the found value
    // (docs/contract/manifest-and-soak.md, validation).
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
fn an_unsupported_version_stops_its_namespace_but_not_the_others() {
    // Three independent version namespaces; a consumer refuses to guess an unsupported one and
    // still checks the others (docs/contract/schema.md).
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
