"""The health rules in a running tally.Logger (docs/contract/health.md "In the logger"):
`log.health.findings`, `on_health=`, `stop_on=` and `tally.HealthStop`, user rules from
`tally.health`, `health=False`, refusals at construction, findings in run_summary.json and in
the event file as text (read back with TensorBoard's EventAccumulator), and a stall found by a
timer while the loop sends no step."""

import json
import math
import sys
import time
from pathlib import Path

import pytest

import tally


def new_logger(tmp_path, **kw):
    return tally.Logger(algo="sac", task="health", panel="off", log_dir=tmp_path / "run", **kw)


def summary(log):
    return json.loads((Path(log.run_dir) / "run_summary.json").read_text())


def accumulator(run_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


def health_texts(run_dir):
    from tensorboard.util import tensor_util

    acc = accumulator(run_dir)
    if "tally/health/text_summary" not in acc.Tags()["tensors"]:
        return []
    return [(e.step, tensor_util.make_ndarray(e.tensor_proto)[0].decode()) for e in acc.Tensors("tally/health/text_summary")]


def test_a_nan_is_told_once_listed_summarised_and_shown_in_tensorboards_text_tab(tmp_path):
    told = []
    log = new_logger(tmp_path, on_health=told.append)
    for i in range(1, 5):
        log.step(i, metrics={"Loss/critic": 1.0})
    assert told == [] and log.health.findings == []
    log.step(5, metrics={"Loss/critic": math.nan})
    # Without stop_on the writer thread evaluates: flush() waits for it and tells on_health.
    log.flush()
    assert [(f.rule, f.tag, f.first_step) for f in told] == [("nonfinite", "Loss/critic", 5)]
    log.step(6, metrics={"Loss/critic": math.nan})
    log.step(7, metrics={"Loss/critic": 1.0})
    log.flush()
    assert len(told) == 1, "a finding is told once, however often it fires"
    (f,) = log.health.findings
    assert isinstance(f, tally.health.Finding)
    assert (f.rule, f.tag, f.first_step, f.last_step, f.count) == ("nonfinite", "Loss/critic", 5, 6, 2)
    assert math.isnan(f.last_value)
    log.close()
    (h,) = summary(log)["health"]
    assert h == {"rule": "nonfinite", "tag": "Loss/critic", "first_step": 5, "last_step": 6, "count": 2, "last_value": "NaN", "message": f.message}
    texts = health_texts(log.run_dir)
    assert len(texts) == 1 and texts[0][0] == 5, texts
    assert "nonfinite" in texts[0][1] and "Loss/critic" in texts[0][1]
    # The scalars are all there besides the text.
    assert [e.step for e in accumulator(log.run_dir).Scalars("Loss/critic")] == [1, 2, 3, 4, 5, 6, 7]
    # Readable after close too.
    assert [x.rule for x in log.health.findings] == ["nonfinite"]


def test_stop_on_raises_health_stop_from_the_next_step_and_close_keeps_everything(tmp_path):
    told = []
    log = new_logger(tmp_path, stop_on=["nonfinite"], on_health=told.append)
    log.step(1, metrics={"Loss/critic": 1.0})
    log.step(2, metrics={"Loss/critic": math.inf})
    # With stop_on the step's own thread evaluates: told from the step that made it.
    assert [f.first_step for f in told] == [2]
    with pytest.raises(tally.HealthStop) as e:
        log.step(3, metrics={"Loss/critic": 1.0})
    assert isinstance(e.value, tally.TallyError)
    assert (e.value.finding.rule, e.value.finding.first_step) == ("nonfinite", 2)
    assert "Loss/critic" in str(e.value)
    log.close(status="interrupted")
    s = summary(log)
    assert s["status"] == "interrupted" and s["completed_iterations"] == 2
    assert s["health"][0]["last_value"] == "Infinity"
    acc = accumulator(log.run_dir)
    assert [(e.step, e.value) for e in acc.Scalars("Loss/critic")] == [(1, 1.0), (2, math.inf)]
    assert [t[0] for t in health_texts(log.run_dir)] == [2]


def test_an_exception_in_on_health_is_reported_and_loses_nothing(tmp_path, monkeypatch):
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    told = []

    def callback(f):
        told.append(f.tag)
        raise RuntimeError("the user's callback failed")

    log = new_logger(tmp_path, on_health=callback)
    log.step(1, metrics={"Loss/critic": math.nan, "Loss/actor": math.nan})
    log.step(2, metrics={"Loss/critic": 1.0, "Loss/actor": 1.0})
    log.close()
    assert sorted(told) == ["Loss/actor", "Loss/critic"], "every finding is told despite the first raising"
    assert len(unraisable) == 2 and isinstance(unraisable[0].exc_value, RuntimeError)
    assert summary(log)["completed_iterations"] == 2
    assert len(summary(log)["health"]) == 2


def test_user_rules_and_turning_rules_off(tmp_path):
    log = new_logger(
        tmp_path / "a",
        health=[tally.health.above("charts/kl", 0.05), tally.health.below("Loss/actor", -10), tally.health.off("nonfinite")],
    )
    log.step(1, metrics={"charts/kl": 0.01, "Loss/actor": 1.0, "Loss/critic": math.nan})
    log.step(2, metrics={"charts/kl": 0.2, "Loss/actor": -20.0, "Loss/critic": 1.0})
    log.close()
    got = sorted((f.rule, f.tag, f.first_step) for f in log.health.findings)
    assert got == [("above", "charts/kl", 2), ("below", "Loss/actor", 2)]

    log = new_logger(tmp_path / "b", health=False)
    log.step(1, metrics={"Loss/critic": math.nan})
    log.close()
    assert log.health.findings == []
    assert "health" not in summary(log)

    log = new_logger(tmp_path / "c", health=[tally.health.nonfinite("charts/*"), tally.health.flat_for("charts/ret", for_values=3), tally.health.spike("charts/loss", z=5, window=10, min_history=5, for_values=1)])
    for i in range(1, 11):
        log.step(i, metrics={"charts/ret": 1.0 if i == 1 else 0.5, "charts/loss": 1.0 + 0.01 * (i % 3)})
    log.step(11, metrics={"charts/ret": 0.5, "charts/loss": 1000.0})
    log.close()
    assert {f.rule for f in log.health.findings} == {"flat_for", "divergence"}


@pytest.mark.parametrize(
    "kw, culprit, exc",
    [
        ({"health": [tally.health.above("charts/k?", 1.0)]}, "charts/k?", tally.ConfigError),
        ({"health": [tally.health.spike("Loss/*", window=-5)]}, "window", tally.ConfigError),
        ({"health": [tally.health.off("nan")]}, "nan", tally.ConfigError),
        ({"stop_on": ["nan"]}, "nan", tally.ConfigError),
        ({"health": False, "stop_on": ["stall"]}, "stall", tally.ConfigError),
        ({"health": ["above"]}, "health[0]", TypeError),
        ({"on_health": 3}, "on_health", tally.ConfigError),
    ],
)
def test_bad_health_input_is_refused_at_construction_naming_it(tmp_path, kw, culprit, exc):
    with pytest.raises(exc) as e:
        new_logger(tmp_path, **kw)
    assert culprit in str(e.value)
    assert not (tmp_path / "run").exists(), "nothing is created for a refused logger"


def test_a_loop_that_stops_stepping_gets_a_stall_without_a_step(tmp_path):
    told = []
    log = new_logger(tmp_path, health=[tally.health.stall(min_gap_s=0.3, min_history=3)], stop_on=["stall"], on_health=told.append)
    for i in range(1, 7):
        log.step(i, metrics={"Loss/critic": 1.0})
        time.sleep(0.01)
    deadline = time.monotonic() + 5
    while not log.health.findings:
        assert time.monotonic() < deadline, "no stall found while the loop slept"
        time.sleep(0.05)
    (f,) = log.health.findings
    assert (f.rule, f.tag, f.first_step) == ("stall", "", 6)
    assert f.last_value >= 0.3
    # The next step is refused, and on_health was told from it.
    with pytest.raises(tally.HealthStop):
        log.step(7, metrics={"Loss/critic": 1.0})
    assert [x.rule for x in told] == ["stall"]
    log.close(status="interrupted")
    assert summary(log)["health"][0]["rule"] == "stall"
    assert "tag" not in summary(log)["health"][0]
    assert [t[0] for t in health_texts(log.run_dir)] == [6]


def test_the_plain_output_prints_a_finding_once(tmp_path):
    import subprocess
    import textwrap

    script = textwrap.dedent(
        f"""
        import math, tally
        log = tally.Logger(algo="sac", task="health", panel="plain", log_dir={str(tmp_path / "run")!r})
        for i in range(1, 6):
            log.step(i, metrics={{"Loss/critic": math.nan if i >= 3 else 1.0}})
        log.close()
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = [l for l in (out.stdout + out.stderr).splitlines() if "health:" in l]
    assert len(lines) == 1, out.stdout + out.stderr
    assert "nonfinite on Loss/critic" in lines[0] and "step 3" in lines[0]


def test_the_logger_finds_what_tally_health_finds_in_its_files(tmp_path):
    # One evaluator, fed the values the event file holds (docs/contract/health.md "In the logger").
    import subprocess

    log = new_logger(tmp_path)
    for i in range(1, 80):
        log.step(i, metrics={"Loss/critic": math.nan if i in (30, 31) else 1.0 + 0.01 * (i % 5), "Loss/entropy": 0.0 if i > 40 else 0.5})
    log.close()
    mine = sorted((f.rule, f.tag, f.first_step, f.last_step, f.count) for f in log.health.findings)
    assert {m[0] for m in mine} == {"nonfinite", "collapse"}, mine
    out = subprocess.run([sys.executable, "-m", "tally", "health", str(log.run_dir), "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr
    (run,) = json.loads(out.stdout)["runs"]
    theirs = sorted((f["rule"], f["tag"], f["first_step"], f["last_step"], f["count"]) for f in run["findings"])
    assert mine == theirs
    # The text events leave the scalars as they were for every reader.
    rows = [r for r in tally.read(log.run_dir).to_pylist() if r["tag"] == "Loss/critic"]
    assert len(rows) == 79
