"""tally.SummaryWriter never holds a step back (docs/contract/integrations.md "The scalar batch"):
the step still being batched reaches the file after ``flush_secs`` of idle time (a timer, not
the next call), when an unclosed writer is garbage collected, and at interpreter exit; and a
writer used after ``close()`` reopens, as torch's does. Files are read back with TensorBoard's
own loader."""

import gc
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto import event_pb2

import tally


def scalars(d):
    """[(step, {tag: value})] of the scalar events of every event file in `d`, in file order."""
    out = []
    for path in sorted(Path(d).glob("events.out.tfevents.*")):
        for raw in RawEventFileLoader(str(path)).Load():
            e = event_pb2.Event.FromString(raw)
            if e.HasField("summary"):
                out.append((e.step, {v.tag: v.simple_value for v in e.summary.value}))
    return out


def wait_for(d, want, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if scalars(d) == want:
            return True
        time.sleep(0.05)
    return False


def test_an_idle_writer_has_its_last_step_on_disk_after_flush_secs(tmp_path):
    w = tally.SummaryWriter(tmp_path, flush_secs=0.5)
    w.add_scalar("loss", 1.0, 0)
    w.add_scalar("loss", 2.0, 1)
    # No further call: only the timer can write step 1.
    assert wait_for(tmp_path, [(0, {"loss": 1.0}), (1, {"loss": 2.0})], 5.0), scalars(tmp_path)
    # The step written by the timer is not written again at close.
    w.add_scalar("loss", 3.0, 2)
    w.close()
    assert scalars(tmp_path) == [(0, {"loss": 1.0}), (1, {"loss": 2.0}), (2, {"loss": 3.0})]


def test_the_timer_waits_flush_secs_so_a_step_being_logged_stays_one_event(tmp_path):
    with tally.SummaryWriter(tmp_path, flush_secs=30) as w:
        w.add_scalar("a", 1.0, 0)
        time.sleep(0.3)
        w.add_scalar("b", 2.0, 0)
    assert scalars(tmp_path) == [(0, {"a": 1.0, "b": 2.0})]


def test_an_unclosed_writer_garbage_collected_writes_its_last_step(tmp_path):
    w = tally.SummaryWriter(tmp_path)
    w.add_scalar("a", 1.0, 0)
    w.add_scalar("a", 2.0, 1)
    w.add_scalars("grp", {"x": 3.0}, 1)
    del w
    gc.collect()
    assert scalars(tmp_path) == [(0, {"a": 1.0}), (1, {"a": 2.0})]
    assert scalars(tmp_path / "grp_x") == [(1, {"grp": 3.0})]


@pytest.mark.parametrize("keep", ["global", "cycle"])
def test_an_unclosed_writer_at_interpreter_exit_writes_its_last_step(tmp_path, keep):
    # Held by a module global, or in a reference cycle the exit never collects.
    script = textwrap.dedent(
        f"""
        import sys, tally
        w = tally.SummaryWriter(sys.argv[1], flush_secs=3600)
        w.add_scalar("a", 1.0, 0)
        w.add_scalar("a", 2.0, 1)
        if {keep!r} == "cycle":
            w.me = w
            del w
        """
    )
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert scalars(tmp_path) == [(0, {"a": 1.0}), (1, {"a": 2.0})]


def test_a_writer_used_after_close_reopens_a_new_file_as_torch_does(tmp_path):
    w = tally.SummaryWriter(tmp_path)
    w.add_scalar("a", 1.0, 1)
    w.close()
    assert w.file_writer is None
    w.add_scalar("a", 2.0, 2)
    w.add_text("note", "after close", 2)
    w.close()
    files = sorted(tmp_path.glob("events.out.tfevents.*"))
    assert len(files) == 2
    assert [s for s, v in scalars(tmp_path) if "a" in v] == [1, 2]
    # One run of two files, read back as one series.
    table = tally.read(tmp_path)
    assert table.column("step").to_pylist() == [1, 2]


@pytest.mark.parametrize("value", [np.array([0.5]), np.array([[0.5]]), np.array(0.5, dtype=np.float32)])
def test_a_one_element_array_is_a_scalar_as_torch_takes_it(tmp_path, value):
    with tally.SummaryWriter(tmp_path) as w:
        w.add_scalar("a", value, 0)
    assert scalars(tmp_path) == [(0, {"a": 0.5})]


def test_an_array_of_several_values_is_refused_naming_the_tag(tmp_path):
    with tally.SummaryWriter(tmp_path) as w:
        with pytest.raises(tally.ValueTypeError, match=r"add_scalar\('a'\).*ndarray"):
            w.add_scalar("a", np.array([0.5, 1.0]), 0)
