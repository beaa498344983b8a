"""The committed JSON Schemas (schemas/*.json) validate real artefacts with the `jsonschema` package.

The schemas are generated from tally's artefact types (crates/tally-schema/src/artifacts/) and
describe shape: members, JSON types, ranges, enumerations. `tally validate` reads the same
schemas and adds the cross-field contract rules (a completed run's lifecycle members, the soak
classification rules, the drain invariants), so:

- every valid fixture and a real `tally demo` run summary pass both;
- every shape-breaking invalid fixture fails both;
- every contract-only invalid fixture passes the schema and fails `tally validate`.
"""

import json
import subprocess
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schemas"
FIXTURES = REPO / "testdata" / "artifacts"
SCHEMA_OF = {
    "run_summary": "run_summary.schema.json",
    "runtime_manifest": "runtime_manifest.v1.schema.json",
    "soak": "soak_artifact.0.3.0.schema.json",
}

# Invalid fixtures whose broken rule is one of shape, so the JSON Schema rejects them too.
SHAPE_BREAKS = {
    "run_summary.backend_diagnostics_enabled_missing",
    "run_summary.backend_diagnostics_not_object",
    "run_summary.field_missing",
    "run_summary.field_wrong_type",
    "run_summary.manifest_backend_diagnostics_disable_reason_type",
    "run_summary.manifest_backend_diagnostics_no_optimizations",
    "run_summary.manifest_backend_diagnostics_requested_missing",
    "run_summary.manifest_backpressure_wait_negative",
    "run_summary.manifest_backpressure_wait_string",
    "run_summary.manifest_flight_field_missing",
    "run_summary.manifest_flight_negative",
    "run_summary.manifest_flight_not_mapping",
    "run_summary.manifest_ingress_count_float",
    "run_summary.manifest_ingress_occupancy_string",
    "run_summary.manifest_ipc_event_count_missing",
    "run_summary.manifest_ipc_event_count_negative",
    "run_summary.manifest_metrics_interval_bool",
    "run_summary.manifest_ring_capacity_zero",
    "run_summary.metric_version_2",
    "run_summary.metric_version_bool",
    "run_summary.metric_version_missing",
    "run_summary.metric_version_string",
    "run_summary.nullable_field_wrong_type",
    "run_summary.remote_sink_pending_wrong_type",
    "run_summary.status_unknown",
    "runtime_manifest.early_failure_ring_capacity_zero",
    "runtime_manifest.schema_version_2",
    "runtime_manifest.schema_version_bool",
    "runtime_manifest.schema_version_missing",
    "runtime_manifest.schema_version_string",
    "soak.context_gpu_uuid_missing",
    "soak.fail_classification_unknown",
    "soak.field_missing",
    "soak.monitor_field_wrong_type",
    "soak.pass_shutdown_exception_malformed",
    "soak.pass_shutdown_phase_missing",
    "soak.resource_summary_field_missing",
    "soak.sample_negative_rss",
    "soak.status_unknown",
    "soak.timestamp_format",
    "soak.version_integer",
    "soak.version_missing",
    "soak.version_unsupported",
}

# JSON Schema's data model makes 1.0 the integer 1; tally validate does not (see below).
INTEGRAL_FLOATS = {
    "run_summary.metric_version_float",
    "runtime_manifest.schema_version_float",
}




def validator(prefix):
    schema = json.loads((SCHEMAS / SCHEMA_OF[prefix]).read_text())
    return Draft202012Validator(schema)


def fixtures(sub):
    return sorted((FIXTURES / sub).glob("*.json"))


def kind(path):
    return path.name.split(".")[0]


def errors(prefix, doc):
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(prefix).iter_errors(doc)]


@pytest.mark.parametrize("name", sorted(SCHEMA_OF.values()))
def test_each_committed_schema_is_a_valid_draft_2020_12_schema_marked_generated(name):
    schema = json.loads((SCHEMAS / name).read_text())
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "do not edit" in schema["$comment"]


def test_a_demo_run_summary_matches_the_schemas(tally_bin, tmp_path):
    demo = subprocess.run(
        [tally_bin, "demo", "--iterations", "20", "--panel", "off", f"training.log_root={tmp_path}"],
        capture_output=True,
        text=True,
        check=True,
    )
    [summary_path] = list(tmp_path.rglob("run_summary.json"))
    summary = json.loads(summary_path.read_text())
    assert errors("run_summary", summary) == []
    assert errors("runtime_manifest", summary["runtime_manifest"]) == []
    assert summary["metric_schema_version"] == 1, demo.stdout
    # The same file through tally's own validator.
    out = subprocess.run([tally_bin, "validate", summary_path.parent], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("path", fixtures("valid"), ids=lambda p: p.stem)
def test_every_valid_fixture_matches_its_schema(path):
    assert errors(kind(path), json.loads(path.read_text())) == []


@pytest.mark.parametrize("path", fixtures("valid"), ids=lambda p: p.stem)
def test_embedded_run_summaries_and_manifests_match_their_schemas(path):
    doc = json.loads(path.read_text())
    if kind(path) == "soak" and isinstance(doc.get("run_summary"), dict):
        summary = doc["run_summary"]
        if summary.get("metric_schema_version") == 1:
            assert errors("run_summary", summary) == []
    if kind(path) == "run_summary" and doc.get("runtime_manifest") is not None:
        assert errors("runtime_manifest", doc["runtime_manifest"]) == []


def test_the_shape_list_names_real_fixtures():
    on_disk = {p.stem for p in fixtures("invalid")}
    assert SHAPE_BREAKS <= on_disk, SHAPE_BREAKS - on_disk
    assert INTEGRAL_FLOATS <= on_disk, INTEGRAL_FLOATS - on_disk


@pytest.mark.parametrize("path", fixtures("invalid"), ids=lambda p: p.stem)
def test_invalid_fixtures_split_into_shape_and_contract_breaks(tally_bin, path):
    doc = json.loads(path.read_text())
    found = errors(kind(path), doc)
    if path.stem in SHAPE_BREAKS:
        assert found, f"{path.stem}: the JSON Schema should reject a shape break"
    else:
        # A cross-field contract rule (or an integral float): only tally validate sees it.
        assert found == [], f"{path.stem}: {found}"
    out = subprocess.run([tally_bin, "validate", path], capture_output=True, text=True)
    assert out.returncode == 1, out.stdout


def test_json_schema_cannot_tell_an_integral_float_from_an_integer_but_tally_validate_can(tally_bin):
    # JSON Schema: 1.0 is an integer. A version stamp must be the integer 1 and a float is
    # rejected (docs/contract/manifest-and-soak.md "Three version namespaces"). The schema
    # cannot express that; tally validate enforces it.
    path = FIXTURES / "invalid" / "run_summary.metric_version_float.json"
    doc = json.loads(path.read_text())
    assert isinstance(doc["metric_schema_version"], float)
    assert errors("run_summary", doc) == []
    out = subprocess.run([tally_bin, "validate", path], capture_output=True, text=True)
    assert out.returncode == 1
    assert "a float is not a version" in out.stdout
