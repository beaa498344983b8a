"""Ending a stalled run from Python (docs/contract/health.md "Ending a stalled run"): a real
child process whose loop sleeps instead of stepping is recorded `failed` with a status reason
naming the stall and exits with code 75 after `stall_exit_after`; a bad grace period is refused
naming it."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tally

CHILD = textwrap.dedent(
    """
    import sys, time
    import tally

    log = tally.Logger(
        algo="sac", task="stall", panel="off", log_dir=sys.argv[1],
        # A quick threshold so the test is short (docs/contract/health.md "Stall").
        health=[tally.health.stall(min_gap_s=0.5, min_history=3)],
        stop_on=["stall"], stall_exit_after=1.0,
    )
    for i in range(1, 21):
        log.step(i, metrics={"Loss/critic": 1.0})
        time.sleep(0.01)
    print("stalling", flush=True)
    time.sleep(3600)  # the loop hangs: no next step() can raise HealthStop
    """
)


def test_a_hung_loop_is_recorded_failed_and_the_process_exits_75(tmp_path):
    run = tmp_path / "run"
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(run)], capture_output=True, text=True, timeout=60, env=dict(os.environ)
    )
    assert child.returncode == 75, child.stderr
    assert "stalling" in child.stdout
    assert "tally: stalled: no step after step 20" in child.stderr
    s = json.loads((run / "run_summary.json").read_text())
    assert s["status"] == "failed"
    assert "stall_exit_after=1 s" in s["status_reason"] and "exit code 75" in s["status_reason"]
    assert [f["first_step"] for f in s["health"] if f["rule"] == "stall"] == [20]


@pytest.mark.parametrize("grace, says", [(-1.0, "stall_exit_after -1 must be"), (float("inf"), "stall_exit_after inf must be")])
def test_a_bad_grace_period_is_refused_naming_it(tmp_path, grace, says):
    with pytest.raises(tally.ConfigError, match=says):
        tally.Logger(algo="sac", task="stall", panel="off", log_dir=tmp_path / "run", stall_exit_after=grace)
    assert not (tmp_path / "run").exists()


def test_without_the_stall_rule_it_is_refused(tmp_path):
    with pytest.raises(tally.ConfigError, match="the stall rule is off"):
        tally.Logger(
            algo="sac", task="stall", panel="off", log_dir=tmp_path / "run",
            health=[tally.health.off("stall")], stall_exit_after=5,
        )
