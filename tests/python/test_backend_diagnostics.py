"""What a runner records for run_summary.json beside its steps, from Python.

`set_runtime_manifest` and `set_backend_diagnostics` are checked when set, and a run closed
completed with a manifest that fails the completed-run check is recorded failed
(docs/contract/manifest-and-soak.md "Checked when recorded"). The written summaries are judged
by the committed JSON Schema through the `jsonschema` package and by `tally validate`.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

import tally

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "run_summary.schema.json").read_text())


def shape_errors(summary):
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in Draft202012Validator(SCHEMA).iter_errors(summary)]


def tally_validate(run_dir):
    return subprocess.run([sys.executable, "-m", "tally", "validate", str(run_dir)], capture_output=True, text=True)


def summary(run_dir):
    return json.loads((run_dir / "run_summary.json").read_text())


def logger(tmp_path, algo="sac", **kw):
    return tally.Logger(algo=algo, task="go2", sim="mujoco", max_iterations=3, log_root=tmp_path, panel="off", **kw)


def test_a_manifest_failing_v1_is_refused_naming_every_path(tmp_path):
    with logger(tmp_path) as log:
        with pytest.raises(tally.SchemaError) as e:
            log.set_runtime_manifest(
                {
                    "schema_version": 1,
                    "inference_ring_capacity": 0,
                    "inference_flight": {"queue_depth": -1},
                    "replay_ingress": "full",
                }
            )
        for path in ("$.inference_ring_capacity", "$.inference_flight.queue_depth", "$.replay_ingress"):
            assert path in str(e.value)
        with pytest.raises(tally.SchemaError, match=r"\$\.schema_version"):
            log.set_runtime_manifest({"schema_version": "1"})
        log.close("interrupted")
    assert summary(log.run_dir)["runtime_manifest"] is None


def test_closing_completed_with_an_early_manifest_records_the_run_failed(tmp_path):
    with pytest.raises(tally.SchemaError) as e:
        with logger(tmp_path) as log:
            log.set_runtime_manifest({"schema_version": 1})
            for i in (1, 2, 3):
                log.step(i, iteration_time=0.01)
    assert "$.runtime_manifest.replay_ingress" in str(e.value)
    s = summary(log.run_dir)
    assert s["status"] == "failed"
    assert "$.runtime_manifest.inference_ring_capacity" in s["status_reason"]
    assert s["completed_iterations"] == 3 and s["persisted_iterations"] == 3
    assert shape_errors(s) == []
    out = tally_validate(log.run_dir)
    assert out.returncode == 0, out.stdout + out.stderr


def test_ppo_backend_diagnostics_reach_the_summary_redacted(tmp_path):
    with logger(tmp_path, algo="ppo", profile="onpolicy") as log:
        log.set_backend_diagnostics(
            {
                "optimizations": {
                    "cuda_graph": {"requested": True, "enabled": False, "disable_reason": "capture failed", "auth_token": "tok-diag-1"},
                    "tf32": {"requested": False, "enabled": False, "disable_reason": None},
                },
                "cache": "https://user:diag-pass-2@cache.internal/x",
            }
        )
        for i in (0, 1, 2):
            log.step(i, iteration_time=0.01)
    text = (log.run_dir / "run_summary.json").read_text()
    assert "tok-diag-1" not in text and "diag-pass-2" not in text
    s = json.loads(text)
    assert s["backend_diagnostics"]["optimizations"]["cuda_graph"]["disable_reason"] == "capture failed"
    assert s["backend_diagnostics"]["optimizations"]["tf32"]["enabled"] is False
    assert shape_errors(s) == []


def test_malformed_backend_diagnostics_are_refused_naming_every_path(tmp_path):
    with logger(tmp_path, algo="ppo", profile="onpolicy") as log:
        with pytest.raises(tally.SchemaError) as e:
            log.set_backend_diagnostics({"optimizations": {"cuda_graph": {"requested": "yes", "enabled": True}}})
        assert "$.backend_diagnostics.optimizations.cuda_graph.requested" in str(e.value)
        assert "$.backend_diagnostics.optimizations.cuda_graph.disable_reason" in str(e.value)
        log.close("interrupted")
    assert "backend_diagnostics" not in summary(log.run_dir)


def test_backend_diagnostics_at_the_top_level_are_the_on_policy_path_only(tmp_path):
    with logger(tmp_path) as log:
        with pytest.raises(tally.ConfigError, match="runtime manifest"):
            log.set_backend_diagnostics({"optimizations": {}})
        log.close("interrupted")


def test_a_float_json_cannot_hold_is_refused_naming_its_path(tmp_path):
    with logger(tmp_path, algo="ppo", profile="onpolicy") as log:
        with pytest.raises(tally.SchemaError, match=r"\$\.replay_ingress\.backpressure_wait_s.*NaN"):
            log.set_runtime_manifest({"schema_version": 1, "replay_ingress": {"backpressure_wait_s": float("nan")}})
        with pytest.raises(tally.SchemaError, match=r"\$\.timings\[1\].*inf"):
            log.set_backend_diagnostics({"optimizations": {}, "timings": [1.0, float("inf")]})
        log.close("interrupted")
