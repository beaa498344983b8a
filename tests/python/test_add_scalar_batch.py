"""tally.SummaryWriter.add_scalar's batch (the scalars of one step, not yet written): a bad tag
is refused on its own call without losing the batch, tags are compared by text (as torch's
writers key them), and steps and wall times are taken as torch takes them. Files are read back
with TensorBoard's own loader."""

from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto import event_pb2

import tally


def events(d):
    """[(step, wall_time, {tag: value})] of the scalar events of the one event file in `d`."""
    (path,) = sorted(Path(d).glob("events.out.tfevents.*"))
    out = []
    for raw in RawEventFileLoader(str(path)).Load():
        e = event_pb2.Event.FromString(raw)
        if e.HasField("summary"):
            out.append((e.step, e.wall_time, {v.tag: v.simple_value for v in e.summary.value}))
    return out


@pytest.mark.parametrize("tag", [1, None, b"loss", ("a", "b")])
def test_a_tag_that_is_not_a_str_is_refused_on_its_call_and_the_batch_survives(tmp_path, tag):
    with tally.SummaryWriter(tmp_path) as w:
        w.add_scalar("a", 1.0, 3)
        with pytest.raises(tally.ValueTypeError, match=rf"add_scalar.*tag {__import__('re').escape(repr(tag))}.*str"):
            w.add_scalar(tag, 2.0, 3)
        w.add_scalar("b", 4.0, 3)
    assert [(s, v) for s, _, v in events(tmp_path)] == [(3, {"a": 1.0, "b": 4.0})]


def test_tags_are_compared_by_text_not_by_object(tmp_path):
    # Two distinct str objects with one text: the second is a repeat, so a second event.
    with tally.SummaryWriter(tmp_path) as w:
        w.add_scalar("".join(["lo", "ss"]), 1.0, 5)
        w.add_scalar("".join(["l", "oss"]), 2.0, 5)
    assert [(s, v) for s, _, v in events(tmp_path)] == [(5, {"loss": 1.0}), (5, {"loss": 2.0})]


def test_steps_and_wall_times_are_taken_as_torch_takes_them(tmp_path):
    with tally.SummaryWriter(tmp_path) as w:
        w.add_scalar("a", 1.0, np.int64(7))
        w.add_scalar("b", 2, 7.9)  # int(7.9) == 7: the same step, the same event
        w.add_scalar("a", 3.0, None)  # no step: step 0
        w.add_scalar("a", 4.0, 1, walltime=100.0)
        w.add_scalar("b", 5.0, 1, walltime=100.0)  # the same wall time: the same event
        w.add_scalar("c", 6.0, 1, walltime=200.5)  # another wall time: a new event
    got = events(tmp_path)
    assert [(s, v) for s, _, v in got] == [
        (7, {"a": 1.0, "b": 2.0}),
        (0, {"a": 3.0}),
        (1, {"a": 4.0, "b": 5.0}),
        (1, {"c": 6.0}),
    ]
    assert [t for _, t, _ in got[2:]] == [100.0, 200.5]


def test_a_step_beyond_int64_or_a_bad_value_is_refused_and_loses_nothing(tmp_path):
    with tally.SummaryWriter(tmp_path) as w:
        w.add_scalar("a", 1.0, 2)
        with pytest.raises(tally.SchemaError, match=r"global_step=9223372036854775808.*int64"):
            w.add_scalar("b", 1.0, 2**63)
        with pytest.raises(tally.ValueTypeError, match=r"add_scalar\('b'\): expected a number, got str"):
            w.add_scalar("b", "1.0", 2)
        with pytest.raises(tally.ValueTypeError, match=r"add_scalar\('b'\): expected a number, got NoneType"):
            w.add_scalar("b", None, 2)
        w.add_scalar("c", 3.0, 2)
    assert [(s, v) for s, _, v in events(tmp_path)] == [(2, {"a": 1.0, "c": 3.0})]


def test_tags_invented_every_step_are_written_past_the_tag_tables_bound(tmp_path):
    # More distinct tags than the writer remembers (8192): the tables start afresh between
    # batches, and every value still lands under its own tag.
    n = 9000
    with tally.SummaryWriter(tmp_path) as w:
        for step in range(n):
            w.add_scalar(f"t{step}", float(step), step)
            w.add_scalar("shared", -float(step), step)
    got = events(tmp_path)
    assert len(got) == n
    assert all(v == {f"t{s}": float(s), "shared": -float(s)} for s, _, v in got)
    assert [s for s, _, _ in got] == list(range(n))


def test_a_value_whose_float_fails_is_refused_with_its_reason(tmp_path):
    class Broken:
        def __float__(self):
            raise ValueError("sensor offline")

    with tally.SummaryWriter(tmp_path) as w:
        with pytest.raises(tally.ValueTypeError, match=r"^add_scalar\('x/y'\): expected a number, got Broken: sensor offline$"):
            w.add_scalar("x/y", Broken(), 1)
        w.add_scalar("x/y", 2.0, 1)
    assert [(s, v) for s, _, v in events(tmp_path)] == [(1, {"x/y": 2.0})]
