"""tally.Logger, SummaryWriter and EventWriter shared between threads
(docs/contract/threads-and-signals.md "Sharing a logger between threads"): every method callable
from any thread at any time, steps serialised, close from another thread ending the run cleanly,
and sinks that call back into the logger getting a clear error instead of a freeze or a panic.
Event files are read back with TensorBoard's EventAccumulator and event file loader."""

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.util import tensor_util

import tally


def new_logger(tmp_path, **kw):
    args = dict(algo="sac", task="go2", sim="mujoco", num_envs=4, log_root=tmp_path / "logs", panel="off")
    args.update(kw)
    return tally.Logger(**args)


def steps_in_file(run_dir, tag="Loss/critic"):
    """Every step of `tag` in the run's event file, duplicates kept."""
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return [e.step for e in acc.Scalars(tag)]


def summary(run_dir):
    return json.loads((Path(run_dir) / "run_summary.json").read_text())


def test_every_method_is_callable_from_another_thread_while_a_step_runs(tmp_path):
    log = new_logger(tmp_path)
    n = 3000
    done = threading.Event()
    errors = []

    def stepper():
        try:
            for i in range(1, n + 1):
                log.step(i, env_steps=i, metrics={"Loss/critic": i / 7}, iteration_time=0.01, steps_this_iter=1)
        except Exception as e:  # noqa: BLE001 - the test reports it
            errors.append(e)
        finally:
            done.set()

    t = threading.Thread(target=stepper)
    t.start()
    calls = 0
    while not done.is_set():
        try:
            log.run_dir
            log.event_file
            log.closed
            repr(log)
            log.status("checkpoint saved")
            log.checkpoint_saved(tmp_path / "ckpt.pt")
            with log.phase("learning"):
                pass
            log.flush()
            calls += 1
        except Exception as e:  # noqa: BLE001 - the test reports it
            errors.append(e)
            break
    t.join()
    log.close()
    assert errors == []
    assert calls > 0
    assert steps_in_file(log.run_dir) == list(range(1, n + 1))


def test_close_from_another_thread_ends_the_run_and_later_steps_get_a_closed_error(tmp_path):
    log = new_logger(tmp_path)
    stepped = threading.Event()
    outcome = []

    def stepper():
        i = 0
        try:
            while True:
                i += 1
                log.step(i, env_steps=i, metrics={"Loss/critic": 1.0}, iteration_time=0.01, steps_this_iter=1)
                if i == 50:
                    stepped.set()
        except Exception as e:  # noqa: BLE001 - the test inspects it
            outcome.append(e)

    t = threading.Thread(target=stepper)
    t.start()
    assert stepped.wait(60)
    log.close("interrupted")
    t.join(60)
    assert not t.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], tally.ClosedError), outcome
    assert "closed" in str(outcome[0])
    s = summary(log.run_dir)
    assert s["status"] == "interrupted"
    file_steps = steps_in_file(log.run_dir)
    assert file_steps == list(range(1, len(file_steps) + 1))
    assert s["completed_iterations"] == len(file_steps)
    with pytest.raises(tally.ClosedError):
        log.status("after close")
    with pytest.raises(tally.ClosedError):
        log.flush()
    log.close()  # closing twice is harmless


SINK_CALLS_BACK = textwrap.dedent(
    """
    import json, sys
    import tally

    seen = []

    class CallsBack:
        name = "callsback"

        def write(self, step, wall_time, iteration, scalars):
            for call in (lambda: log.flush(), lambda: log.close(), lambda: log.status("x"),
                         lambda: log.step(iteration + 1000), lambda: log.closed):
                try:
                    call()
                    seen.append(None)
                except Exception as e:
                    seen.append([type(e).__name__, isinstance(e, tally.TallyError), str(e)])

    log = tally.Logger(algo="sac", task="t", sim="s", log_root=sys.argv[1], panel="off", sinks=[CallsBack()])
    for i in range(1, 4):
        log.step(i, metrics={"Loss/critic": 1.0})
    log.flush()
    log.close()
    print(json.dumps({"seen": seen, "run_dir": str(log.run_dir)}))
    """
)


def test_a_sink_calling_back_into_the_logger_gets_a_clear_error_and_the_run_goes_on(tmp_path):
    # A subprocess: the failure being fixed froze the interpreter (SIGINT ignored).
    p = subprocess.run([sys.executable, "-c", SINK_CALLS_BACK, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert len(out["seen"]) == 15
    for err in out["seen"]:
        assert err is not None and err[1], err
        assert "cannot be called from a sink's write()" in err[2], err
    s = summary(out["run_dir"])
    assert s["status"] == "completed"
    assert steps_in_file(out["run_dir"]) == [1, 2, 3]


SLOW_SINK_UNDER_BACKPRESSURE = textwrap.dedent(
    """
    import sys, threading, time
    import tally

    class Slow:
        name = "slow"

        def write(self, step, wall_time, iteration, scalars):
            time.sleep(0.0005)

    log = tally.Logger(algo="sac", task="t", sim="s", log_root=sys.argv[1], panel="off", sinks=[Slow()])
    done = threading.Event()
    calls = [0]

    def other():
        while not done.is_set():
            log.status("still here")
            log.checkpoint_saved("ckpt.pt")
            calls[0] += 1

    t = threading.Thread(target=other)
    t.start()
    for i in range(1, 3001):
        log.step(i, metrics={"Loss/critic": 1.0})
    done.set()
    t.join()
    log.close()
    print("ok", calls[0] > 0)
    print(log.run_dir)
    """
)


def test_a_thread_waiting_for_the_logger_never_holds_the_gil_a_python_sink_needs(tmp_path):
    # The queue (1024 steps) fills behind a slow Python sink, so step() waits on the writer
    # thread, which needs the GIL; another thread keeps calling the logger meanwhile. A
    # subprocess: the failure being fixed is a frozen interpreter.
    p = subprocess.run([sys.executable, "-c", SLOW_SINK_UNDER_BACKPRESSURE, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    verdict, run_dir = p.stdout.strip().split("\n")
    assert verdict == "ok True"
    assert summary(run_dir)["backpressure_waits"] > 0, "the queue never filled: the test proves nothing"
    assert steps_in_file(run_dir) == list(range(1, 3001))


STEP_FROM_ITS_OWN_CONVERSION = textwrap.dedent(
    """
    import json, sys
    import tally

    log = tally.Logger(algo="sac", task="t", sim="s", log_root=sys.argv[1], panel="off")

    class Sneaky:
        def __float__(self):
            log.step(99, metrics={"Loss/critic": 1.0})
            return 1.0

    try:
        log.step(1, metrics={"Loss/critic": Sneaky()})
        outcome = None
    except tally.TallyError as e:
        outcome = str(e)
    log.step(1, metrics={"Loss/critic": 2.0})
    log.close()
    print(json.dumps({"outcome": outcome, "run_dir": str(log.run_dir)}))
    """
)


def test_a_step_started_by_code_its_own_step_runs_gets_a_clear_error(tmp_path):
    # A subprocess: the failure being fixed is a thread waiting on a lock it holds.
    p = subprocess.run([sys.executable, "-c", STEP_FROM_ITS_OWN_CONVERSION, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["outcome"] is not None and "was called from code a step() on this thread is running" in out["outcome"], out
    assert steps_in_file(out["run_dir"]) == [1]


STRESS_ITERATIONS = int(os.environ.get("TALLY_STRESS_ITERATIONS", "20000"))


def test_eight_threads_calling_every_method_lose_and_duplicate_no_record(tmp_path):
    """Steps serialise, but tally does not order them: threads that draw iteration numbers
    from a shared counter hold their own lock across the draw and the step."""
    log = new_logger(tmp_path, log_interval=1)
    n = STRESS_ITERATIONS
    counter = iter(range(1, n + 1))
    order = threading.Lock()
    errors = []

    def worker(k):
        try:
            while True:
                with order:
                    i = next(counter, None)
                    if i is None:
                        return
                    log.step(i, env_steps=i, metrics={"Loss/critic": i / 3}, iteration_time=0.001, steps_this_iter=1)
                if i % 97 == k:
                    log.status(f"worker {k} at {i}")
                    log.checkpoint_saved(f"ckpt_{i}.pt")
                    log.define_metric("charts/*", unit="1")
                    log.run_dir
                    log.event_file
                    log.sinks
                    log.panel
                    log.closed
                    repr(log)
                    with log.phase("learning"):
                        pass
                if i % 991 == k:
                    log.flush()
        except Exception as e:  # noqa: BLE001 - the test reports it
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    assert errors == []
    assert steps_in_file(log.run_dir) == list(range(1, n + 1))
    s = summary(log.run_dir)
    assert s["status"] == "completed"
    assert s["completed_iterations"] == n


def scalars_in_files(log_dir):
    """{tag: [(step, value), ...]} of every scalar in `log_dir`'s event files, in file order
    (the loader hands scalars over as TensorBoard's scalar tensors)."""
    out = {}
    for f in sorted(Path(log_dir).glob("events.out.tfevents.*")):
        for e in EventFileLoader(str(f)).Load():
            for v in e.summary.value:
                if v.metadata.plugin_data.plugin_name == "scalars":
                    out.setdefault(v.tag, []).append((e.step, float(tensor_util.make_ndarray(v.tensor))))
    return out


@pytest.fixture
def frequent_thread_switches():
    """Python switches threads every few microseconds instead of 5 ms, so the interleavings a
    long run meets once happen in a short test."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_a_summary_writer_shared_by_eight_threads_loses_and_repeats_no_value(tmp_path, frequent_thread_switches):
    w = tally.SummaryWriter(tmp_path / "tb")
    n = 400
    errors = []

    def worker(k):
        try:
            for i in range(n):
                w.add_scalar(f"w{k}/x", i, i)
                if i % 50 == k:
                    w.flush()
                    w.add_text(f"w{k}/note", "checkpoint", i)
        except Exception as e:  # noqa: BLE001 - the test reports it
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    w.close()
    assert errors == []
    got = scalars_in_files(tmp_path / "tb")
    for k in range(8):
        assert got[f"w{k}/x"] == [(i, float(i)) for i in range(n)]


def test_an_event_writer_closed_from_another_thread_while_eight_write(tmp_path):
    w = tally.EventWriter(tmp_path)
    written = threading.Barrier(9)
    outcome = [None] * 8

    def worker(k):
        i = 0
        try:
            while True:
                w.write_scalars(i, 1.0, {f"e{k}": float(i)})
                i += 1
                if i == 200:
                    written.wait()
        except Exception as e:  # noqa: BLE001 - the test inspects it
            outcome[k] = e

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    written.wait(60)
    w.close()
    for t in threads:
        t.join(60)
    assert all(isinstance(e, tally.ClosedError) and "closed" in str(e) for e in outcome), outcome
    assert w.closed
    got = scalars_in_files(tmp_path)
    for k in range(8):
        steps = [s for s, _ in got[f"e{k}"]]
        assert steps == list(range(len(steps))) and len(steps) >= 200


def test_steps_from_threads_that_do_not_order_them_are_kept_or_refused_whole(tmp_path, frequent_thread_switches):
    """Without the caller's lock, a step overtaken by a later one is refused (the step axis must
    increase) and nothing of it is logged; every accepted step is in the file once, in order."""
    log = new_logger(tmp_path)
    counter = iter(range(1, 4001))
    take = threading.Lock()
    accepted, refused, other = [], [], []

    def worker():
        while True:
            with take:
                i = next(counter, None)
            if i is None:
                return
            try:
                log.step(i, env_steps=i, metrics={"Loss/critic": float(i)}, iteration_time=0.001, steps_this_iter=1)
                accepted.append(i)
            except tally.SchemaError as e:
                refused.append((i, str(e)))
            except Exception as e:  # noqa: BLE001 - the test reports it
                other.append(e)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    assert other == []
    assert len(accepted) + len(refused) == 4000
    assert all("iteration" in msg for _, msg in refused), refused[:3]
    assert steps_in_file(log.run_dir) == sorted(accepted)
    assert summary(log.run_dir)["completed_iterations"] == max(accepted)
