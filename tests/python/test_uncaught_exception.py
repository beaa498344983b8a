"""A script that dies of an uncaught exception leaves its run `failed`, the exception named in
`status_reason`, whether the Logger or SummaryWriter was in a `with` block or not; `sys.exit`
and Ctrl-C keep their statuses, and the process ends as it would without tally
(docs/contract/run-artifacts.md "Status"). Each test runs the script in a subprocess."""

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, threading
    import tally

    root, writer, end = sys.argv[1], sys.argv[2], sys.argv[3]
    if writer == "logger":
        log = tally.Logger(algo="sac", task="t", sim="s", log_root=root, panel="off")
        run_dir = log.run_dir
        record = lambda i: log.step(i, metrics={"Loss/critic": i / 3}, iteration_time=0.01)
    else:
        run_dir = os.path.join(root, "writer_run")
        log = tally.SummaryWriter(run_dir)
        record = lambda i: log.add_scalar("Loss/critic", i / 3, i)
    print("run_dir", run_dir, flush=True)
    for i in range(1, 6):
        record(i)
    if end == "thread":
        # A worker thread's exception does not end the script.
        t = threading.Thread(target=lambda: 1 / 0)
        t.start()
        t.join()
        for i in range(6, 9):
            record(i)
    elif end == "raise":
        raise RuntimeError("boom")
    elif end == "raise_in_with":
        with log:
            raise RuntimeError("boom")
    elif end == "exit":
        sys.exit(0)
    elif end == "sigint":
        os.kill(os.getpid(), signal.SIGINT)
    """
)


def run(tmp_path, writer, end):
    p = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), writer, end],
        capture_output=True,
        text=True,
        timeout=120,
    )
    run_dir = Path(next(line for line in p.stdout.splitlines() if line.startswith("run_dir ")).split(" ", 1)[1])
    summary = run_dir / "run_summary.json"
    # A SummaryWriter writes a summary only for a run that failed.
    return p, json.loads(summary.read_text()) if summary.exists() else None


@pytest.mark.parametrize("end", ["raise", "raise_in_with"])
@pytest.mark.parametrize("writer", ["logger", "writer"])
def test_an_uncaught_exception_fails_the_run_and_names_the_exception(tmp_path, writer, end):
    p, s = run(tmp_path, writer, end)
    assert s["status"] == "failed"
    assert s["status_reason"] == "RuntimeError: boom"
    # Python's own ending: the traceback on stderr, exit status 1.
    assert p.returncode == 1
    assert "Traceback (most recent call last)" in p.stderr and "RuntimeError: boom" in p.stderr


@pytest.mark.parametrize("writer", ["logger", "writer"])
def test_sys_exit_zero_is_not_a_failure(tmp_path, writer):
    p, s = run(tmp_path, writer, "exit")
    assert p.returncode == 0, p.stderr
    if writer == "logger":
        assert s["status"] == "completed" and "status_reason" not in s
    else:
        assert s is None


@pytest.mark.parametrize("writer", ["logger", "writer"])
def test_ctrl_c_is_interrupted(tmp_path, writer):
    p, s = run(tmp_path, writer, "sigint")
    assert p.returncode in (-signal.SIGINT, 1)
    assert "KeyboardInterrupt" in p.stderr
    if writer == "logger":
        assert s["status"] == "interrupted" and "status_reason" not in s
    else:
        assert s is None


@pytest.mark.parametrize("writer", ["logger", "writer"])
def test_a_worker_threads_exception_does_not_fail_the_run(tmp_path, writer):
    p, s = run(tmp_path, writer, "thread")
    assert p.returncode == 0, p.stderr
    assert "ZeroDivisionError" in p.stderr
    assert s is None if writer == "writer" else s["status"] == "completed"
