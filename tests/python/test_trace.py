"""The Perfetto trace from Python (docs/contract/trace.md): spans on the Python threads that ran
them, counters, externally timed spans on their own track, and a file that still reads after
the process is killed.

Perfetto's own trace processor (the `perfetto` PyPI package) downloads its binary at first use,
which this machine cannot do, so the file is checked with `json` and `tally trace-stats`."""

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import tally


def new_logger(tmp_path, **kw):
    args = dict(algo="sac", task="go2", sim="mujoco", max_iterations=10, num_envs=4, log_root=tmp_path / "logs", panel="off", logger="none")
    args.update(kw)
    return tally.Logger(**args)


def trace_file(log):
    return log.run_dir / "perfetto_offpolicy_timeline.json"


def thread_names(events):
    return {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}


def spans(events, name):
    return [e for e in events if e.get("ph") == "X" and e["name"] == name]


def test_spans_from_a_python_thread_and_the_main_thread_land_on_their_own_tids_and_overlap(tmp_path):
    both_inside = threading.Barrier(2)

    def collector(log):
        with log.span("env_step", cat="collector"):
            both_inside.wait(timeout=10)
            time.sleep(0.02)

    with new_logger(tmp_path, trace=True) as log:
        worker = threading.Thread(target=collector, args=(log,), name="collector-py")
        worker.start()
        with log.span("learning", cat="learner") as s:
            assert (s.name, s.cat) == ("learning", "learner")
            both_inside.wait(timeout=10)
            time.sleep(0.02)
        worker.join()
        with log.phase("replay_sample"):
            time.sleep(0.001)
        log.step(1)
    events = json.loads(trace_file(log).read_text())
    assert isinstance(events, list) and events[0]["name"] == "process_name"
    names = thread_names(events)
    (learning,) = spans(events, "learning")
    (env_step,) = spans(events, "env_step")
    assert names[learning["tid"]] == "MainThread" and learning["cat"] == "learner"
    assert names[env_step["tid"]] == "collector-py" and env_step["cat"] == "collector"
    assert learning["tid"] == threading.get_native_id()
    assert learning["ts"] < env_step["ts"] + env_step["dur"] and env_step["ts"] < learning["ts"] + learning["dur"]
    assert learning["dur"] >= 20_000 and env_step["dur"] >= 20_000
    # A phase timer and the logger's own step land on the thread that ran them.
    assert [e["tid"] for e in spans(events, "replay_sample") + spans(events, "logger/step")] == [learning["tid"]] * 2
    summary = json.loads((log.run_dir / "run_summary.json").read_text())
    assert summary["trace_path"] == str(trace_file(log))


def test_counters_and_cuda_timed_spans_on_the_gpu_track(tmp_path):
    with new_logger(tmp_path, trace=True, trace_cuda_events=True) as log:
        assert log.trace_cuda_events
        log.counter("replay_size", 128)
        log.counter("replay_size", 256.0)
        with log.span("around"):
            time.sleep(0.005)
            start = time.perf_counter()
            time.sleep(0.005)
        log.add_span("forward", "gpu", start, 0.003)
        log.add_span("h2d", "copy", start, 0.001, track="copy engine")
        with pytest.raises(ValueError, match="duration=-1"):
            log.add_span("bad", "gpu", start, -1.0)
        with pytest.raises(ValueError, match="replay_size=NaN"):
            log.counter("replay_size", math.nan)
        log.step(1)
    events = json.loads(trace_file(log).read_text())
    assert [e["args"]["value"] for e in events if e.get("ph") == "C" and e["name"] == "replay_size"] == [128, 256]
    names = thread_names(events)
    (fwd,), (h2d,), (around,) = spans(events, "forward"), spans(events, "h2d"), spans(events, "around")
    assert names[fwd["tid"]] == "gpu" and names[h2d["tid"]] == "copy engine"
    assert len({fwd["tid"], h2d["tid"], around["tid"]}) == 3
    assert fwd["dur"] == pytest.approx(3000)
    # `start` was read inside "around", 5 ms after it began: the clocks are joined.
    assert around["ts"] + 4000 <= fwd["ts"] <= around["ts"] + around["dur"]
    assert not spans(events, "bad")


def test_thread_time_and_the_output_dir(tmp_path):
    out = tmp_path / "traces"
    with new_logger(tmp_path, trace=True, trace_thread_time=True, trace_output_dir=out) as log:
        with log.span("spin"):
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < 0.02:
                pass
        log.step(1)
    assert not trace_file(log).exists()
    events = json.loads((out / "perfetto_offpolicy_timeline.json").read_text())
    (spin,) = spans(events, "spin")
    assert 0 < spin["tdur"] <= spin["dur"] + 1000


def test_with_tracing_off_the_calls_record_nothing(tmp_path):
    with new_logger(tmp_path) as log:
        with log.span("learning"):
            pass
        log.counter("replay_size", 1)
        log.add_span("forward", "gpu", time.perf_counter(), 0.001)
        assert not log.trace_cuda_events
        with pytest.raises(ValueError, match="duration=-1"):
            log.add_span("forward", "gpu", time.perf_counter(), -1.0)
        log.step(1)
    assert not list(log.run_dir.glob("perfetto*"))
    assert json.loads((log.run_dir / "run_summary.json").read_text())["trace_path"] is None


def test_a_killed_process_leaves_a_trace_that_trace_stats_reads(tmp_path):
    script = textwrap.dedent(
        f"""
        import os, signal, time, tally
        log = tally.Logger(algo="sac", task="go2", sim="mujoco", num_envs=4, log_root={str(tmp_path / "logs")!r},
                           panel="off", logger="none", trace=True)
        for i in range(1, 51):
            with log.span("learning", cat="learner"):
                time.sleep(0.001)
            log.step(i)
        # Killed once the trace writer has drained every span, however loaded the machine: a
        # fixed sleep raced it.
        path = os.path.join(log.run_dir, "perfetto_offpolicy_timeline.json")
        deadline = time.monotonic() + 60
        while open(path).read().count('"logger/step"') < 50 and time.monotonic() < deadline:
            time.sleep(0.01)
        print(log.run_dir, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    path = os.path.join(proc.stdout.strip(), "perfetto_offpolicy_timeline.json")
    with pytest.raises(json.JSONDecodeError):
        json.loads(open(path).read())
    stats = subprocess.run([sys.executable, "-m", "tally", "trace-stats", "--json", path], capture_output=True, text=True, timeout=120)
    assert stats.returncode == 0, stats.stderr
    assert "closing ']'" in stats.stderr
    report = json.loads(stats.stdout)
    assert report["truncated"] is True
    rows = {r["name"]: r for r in report["spans"]}
    assert rows["learning"]["n"] == 50 and rows["logger/step"]["n"] == 50
    assert report["iteration_gaps"]["n"] == 49
