"""The W&B sink follows the event file on its own thread (docs/contract/remote-sinks.md): a W&B
that hangs never slows the training loop, `close()` keeps its deadline and records what is
pending, and `tally sync` sends the rest exactly once. W&B runs offline; its `log` is wrapped
to block, a network that stopped answering as seen from the SDK's boundary."""

import json
import os
import statistics
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from tensorboard.backend.event_processing import event_accumulator

import tally

wandb = pytest.importorskip("wandb")
from wandb.sdk.wandb_run import Run  # noqa: E402

from test_wandb import history_rows, offline, wandb_records  # noqa: E402,F401 - offline: autouse fixture

N = 10_000


@pytest.fixture
def gate(monkeypatch):
    """While the gate is closed, `Run.log` blocks before reaching the SDK."""
    opened = threading.Event()
    original = Run.log

    def log(self, *a, **kw):
        opened.wait()
        return original(self, *a, **kw)

    monkeypatch.setattr(Run, "log", log)
    yield opened
    opened.set()  # let an abandoned call return, so its thread ends


def event_rows(run_dir):
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    rows = {}
    for tag in acc.Tags()["scalars"]:
        for e in acc.Scalars(tag):
            rows.setdefault(e.step, {})[tag] = e.value
    return rows


def wandb_rows(run_dir):
    """Every history row of the run's offline `.wandb` files, in file then row order."""
    files = sorted(Path(run_dir, "wandb").rglob("run-*.wandb"), key=lambda p: p.stat().st_mtime)
    return [r for f in files for r in history_rows(f)]


def wait_for_exit_records(run_dir, timeout=30.0):
    deadline = time.monotonic() + timeout
    for f in Path(run_dir, "wandb").rglob("run-*.wandb"):
        while not any(r.WhichOneof("record_type") == "exit" for r in wandb_records(f)):
            assert time.monotonic() < deadline, f"{f}: no exit record"
            time.sleep(0.05)


def assert_rows_equal_the_event_file(run_dir, rows):
    steps = [r["tally/step"] for r in rows]
    assert steps == sorted(set(steps)), "every row exactly once, in step order"
    sent = {r["tally/step"]: {k: v for k, v in r.items() if not k.startswith(("_", "tally/"))} for r in rows}
    expected = event_rows(run_dir)
    assert sent.keys() == expected.keys()
    for step, values in expected.items():
        assert sent[step] == pytest.approx(values, rel=0, abs=0), step


def timed_run(tmp_path, name, n, **kw):
    per_step = []
    log = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / name, panel="off", max_iterations=n, **kw)
    for i in range(1, n + 1):
        t0 = time.perf_counter()
        log.step(i, env_steps=64 * i, metrics={"Loss/critic": 1.0 / i}, rewards={"alive": 0.5})
        per_step.append(time.perf_counter() - t0)
    return log, per_step


def test_a_hung_wandb_never_slows_the_loop_and_gets_every_row_once_when_released(tmp_path, gate):
    baseline, base_times = timed_run(tmp_path, "baseline", N)
    baseline.close()
    log, times = timed_run(tmp_path, "hung", N, logger="wandb", remote_finish_timeout=300)
    # A loose bound on a ratio of medians: the loop does not wait on W&B at all.
    ratio = statistics.median(times) / statistics.median(base_times)
    print(f"per-step median with a hung W&B: {ratio:.2f}x the run without W&B")
    assert ratio < 2.0, f"per-step median {ratio:.2f}x the run without W&B"
    assert len(event_rows(log.run_dir)) == N  # the event file is complete while W&B hangs
    gate.set()
    log.close()
    wait_for_exit_records(log.run_dir)
    rows = wandb_rows(log.run_dir)
    assert len(rows) == N
    assert_rows_equal_the_event_file(log.run_dir, rows)
    summary = json.loads((log.run_dir / "run_summary.json").read_text())
    assert summary["remote_sinks"] == [{"name": "wandb", "sent_through_step": 64 * N, "pending": 0}]


def sync(*args, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "tally", "sync", *map(str, args)],
        capture_output=True, text=True, timeout=timeout, env=dict(os.environ),
    )


def test_close_keeps_its_deadline_with_a_hung_sink_and_tally_sync_completes_the_run(tmp_path, gate, capfd):
    log = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", logger="wandb",
                       max_iterations=300, remote_finish_timeout=1.0)
    for i in range(1, 301):
        log.step(i, env_steps=64 * i, metrics={"Loss/critic": 1.0 / i})
    t0 = time.monotonic()
    log.close()
    # Sending and wandb.finish() each wait at most the timeout; the bound is loose for a busy box.
    assert time.monotonic() - t0 < 15.0
    err = capfd.readouterr().err
    assert f"tally sync {log.run_dir} --to wandb" in err
    # Nothing reached W&B: said in words, not as a step named "none".
    assert "wandb has 300 rows of this run still to receive (none sent yet)" in err, err
    summary = json.loads((log.run_dir / "run_summary.json").read_text())
    assert summary["status"] == "completed"
    assert summary["remote_sinks"] == [{"name": "wandb", "sent_through_step": None, "pending": 300}]
    gate.set()  # the abandoned call returns into a finished run; its thread stops there
    time.sleep(0.5)
    proc = sync(log.run_dir, "--to", "wandb")
    assert proc.returncode == 0, proc.stderr
    assert "sent 300 rows to wandb (through step 19200)" in proc.stdout
    summary = json.loads((log.run_dir / "run_summary.json").read_text())
    assert summary["remote_sinks"] == [{"name": "wandb", "sent_through_step": 19200, "pending": 0}]
    wait_for_exit_records(log.run_dir)
    rows = wandb_rows(log.run_dir)
    assert_rows_equal_the_event_file(log.run_dir, rows)
    assert len(rows) == 300
    # Both offline files belong to one W&B run: sync continued the logger's run.
    ids = {r.run.run_id for f in Path(log.run_dir, "wandb").rglob("run-*.wandb")
           for r in wandb_records(f) if r.WhichOneof("record_type") == "run"}
    assert ids == {(log.run_dir / "wandb_run_id").read_text().strip()}


def test_a_hung_wandb_finish_never_keeps_the_process_alive(tmp_path):
    code = textwrap.dedent(
        """
        import threading, tally
        from wandb.sdk.wandb_run import Run
        Run.finish = lambda self, *a, **kw: threading.Event().wait()
        log = tally.Logger(algo='sac', task='go2', log_dir='run', panel='off', logger='wandb',
                           max_iterations=5, remote_finish_timeout=1.0)
        for i in range(1, 6):
            log.step(i, env_steps=8 * i, metrics={'Loss/critic': float(i)})
        log.close()
        print('closed')
        """
    )
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "closed"
    assert "wandb.finish() did not return within 1 s" in proc.stderr
    summary = json.loads((tmp_path / "run" / "run_summary.json").read_text())
    assert summary["remote_sinks"][0]["pending"] == 0


def test_remote_finish_timeout_must_be_a_finite_non_negative_number(tmp_path):
    with pytest.raises(tally.ConfigError, match="remote_finish_timeout -1"):
        tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", remote_finish_timeout=-1.0)


def test_logger_none_refuses_the_wandb_sink_by_name(tmp_path):
    with pytest.raises(tally.ConfigError, match="wandb sink is fed from the run's event file"):
        tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", logger="none",
                     sinks=[tally.WandbSink({"project": "t"})])


def test_rows_wandb_took_before_a_failure_are_not_duplicated_when_sent_again(tmp_path, monkeypatch):
    # The call reaches W&B and then fails (a reply lost on the way back): the follower sends
    # the row again from its cursor, under the same W&B step, which W&B does not repeat.
    original, calls = Run.log, []

    def log(self, *a, **kw):
        calls.append(kw.get("step"))
        original(self, *a, **kw)
        if len(calls) in (5, 9, 10):
            raise ConnectionError("connection reset by peer")

    monkeypatch.setattr(Run, "log", log)
    log_ = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", logger="wandb",
                        max_iterations=40, remote_finish_timeout=60)
    for i in range(1, 41):
        log_.step(i, env_steps=64 * i, metrics={"Loss/critic": 1.0 / i})
    log_.close()
    wait_for_exit_records(log_.run_dir)
    rows = wandb_rows(log_.run_dir)
    assert len(rows) == 40
    assert_rows_equal_the_event_file(log_.run_dir, rows)
    assert len(calls) > 40  # rows were sent again
    summary = json.loads((log_.run_dir / "run_summary.json").read_text())
    assert summary["remote_sinks"] == [{"name": "wandb", "sent_through_step": 64 * 40, "pending": 0}]
