"""A closed stdout is not a failed run (docs/contract/panel.md "A closed terminal"): under
`python train.py | head -1` the reader of the panel's output goes away; the panel stops, the run
goes on to `completed`, the process exits 0, and the loss of the panel is said once on stderr."""

import json
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import sys, time, tally
    with tally.Logger(algo="ppo", task="t", profile="onpolicy", log_dir=sys.argv[1], panel=sys.argv[2],
                      max_iterations=400) as log:
        for i in range(400):
            log.step(i, metrics={"Loss/value": float(i)}, iteration_time=0.002)
            if i % 100 == 0:
                # A status line is printed when it happens: the first one is what `head` reads,
                # the later ones meet the closed pipe.
                log.status(f"checkpoint {i}")
                time.sleep(0.3)
    """
)


def run_into_head(cmd, cwd):
    """``cmd | head -1``: the first line read, then the pipe's reading end closed."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    return proc.returncode, first, err.decode()


@pytest.mark.parametrize("panel", ["auto", "on"])
def test_a_logger_whose_stdout_closes_completes_and_exits_zero(tmp_path, panel):
    run = tmp_path / "run"
    code, first, err = run_into_head([sys.executable, "-c", SCRIPT, str(run), panel], tmp_path)
    summary = json.loads((run / "run_summary.json").read_text())
    assert (summary["status"], summary["completed_iterations"]) == ("completed", 399), err
    assert first, err  # the panel's output reached the pipe before it closed
    assert code == 0, err
    assert "TallyError" not in err, err
    assert err.count("tally: warning: panel") == 1, err


def test_tally_demo_into_head_exits_zero(tmp_path, tally_bin):
    code, first, err = run_into_head(
        [tally_bin, "demo", "--iterations", "200", "--panel", "on", f"training.log_root={tmp_path}"], tmp_path
    )
    assert first, err
    assert code == 0, err
    (summary,) = tmp_path.rglob("run_summary.json")
    assert json.loads(summary.read_text())["status"] == "completed"
