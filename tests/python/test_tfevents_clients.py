"""Cross-checks tally's event files against real TensorBoard clients, in both directions.

a. A file written by tally (the `write_fixture` example) is read by TensorBoard's
   EventAccumulator and by tbparse, and both see exactly the scalars tally says it wrote.
b. A file written by tensorboardX (simple values, plus scalar tensor summaries) is read
   by `tally export` exactly as tensorboardX wrote it and as EventAccumulator reads it.
"""

import inspect
import json
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tbparse import SummaryReader
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.util import tensor_util

REPO = Path(__file__).resolve().parents[2]
KEEP_ALL = {event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0}


def f32(x):
    """The float32 rounding of x, widened back to a Python float (exact)."""
    return float(np.float32(x))




def accumulate(path):
    acc = event_accumulator.EventAccumulator(str(path), size_guidance=KEEP_ALL)
    acc.Reload()
    return acc


def ea_scalars(acc):
    """{(tag, step): (value, wall_time)} for every scalar EventAccumulator sees: simple values
    and one-element float tensors."""
    out = {}
    for tag in acc.Tags()["scalars"]:
        for e in acc.Scalars(tag):
            assert (tag, e.step) not in out, (tag, e.step)
            out[(tag, e.step)] = (e.value, e.wall_time)
    for tag in acc.Tags()["tensors"]:
        for e in acc.Tensors(tag):
            arr = tensor_util.make_ndarray(e.tensor_proto)
            if arr.size != 1 or arr.dtype.kind != "f":
                continue
            assert (tag, e.step) not in out, (tag, e.step)
            out[(tag, e.step)] = (float(arr.reshape(())), e.wall_time)
    return out


def test_tally_file_reads_identically_in_event_accumulator_and_tbparse(tmp_path):
    proc = subprocess.run(
        ["cargo", "run", "-q", "-p", "tally-tfevents", "--example", "write_fixture", "--", str(tmp_path)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    doc = json.loads(proc.stdout)
    path = Path(doc["file"])
    assert path.parent == tmp_path
    assert path.name.startswith("events.out.tfevents.")
    expected = {(s["tag"], s["step"]): s["value"] for s in doc["scalars"]}
    assert len(expected) == len(doc["scalars"]) == 5 * 50
    # The fixture prints the on-disk f32 values, and covers the awkward ones.
    assert all(v == f32(v) for v in expected.values())
    values = set(expected.values())
    assert 0.0 in values and f32(1e20) in values and f32(-1e-30) in values
    assert any(v < 0 for v in values)

    acc = accumulate(path)
    assert acc.file_version == 2.0
    got_ea = {key: value for key, (value, _) in ea_scalars(acc).items()}
    assert got_ea == expected

    df = SummaryReader(str(path)).scalars
    got_tbparse = {(row.tag, int(row.step)): f32(row.value) for row in df.itertuples()}
    assert len(df) == len(got_tbparse)
    assert got_tbparse == expected
    assert got_tbparse == got_ea


def scalar_tensor_summary(Summary, SummaryMetadata, TensorProto, tag, **tensor):
    """A Summary holding one scalar-shaped tensor owned by the scalars plugin, built with
    tensorboardX's own protobuf classes (what torch's `add_scalar(new_style=True)` writes)."""
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=TensorProto(**tensor), metadata=metadata)])


def test_tensorboardx_file_reads_identically_in_tally(tmp_path, tally_bin):
    from tensorboardX import SummaryWriter
    from tensorboardX.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboardX.proto.tensor_pb2 import TensorProto
    from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto

    logdir = tmp_path / "tbx"
    writer = SummaryWriter(str(logdir))
    add_scalar_params = inspect.signature(writer.add_scalar).parameters
    expected = {}
    for step in range(25):
        wall_time = 1_700_000_000.0 + step * 0.5
        simple = {
            "loss": 1.0 / (step + 1),
            "lr": 3e-4 * 0.99**step,
            "reward/mean": -50.0 + step * 2.25,
            "zero": 0.0,
        }
        for tag, v in simple.items():
            writer.add_scalar(tag, v, step, walltime=wall_time)
            expected[(tag, step)] = (f32(v), wall_time)

        v = step * 0.1 - 1.3
        tensors = {
            "tensor/float_val": (dict(dtype="DT_FLOAT", float_val=[v]), f32(v)),
            "tensor/double_val": (dict(dtype="DT_DOUBLE", double_val=[v]), v),
            "tensor/double_content": (dict(dtype="DT_DOUBLE", tensor_content=struct.pack("<d", v)), v),
            "tensor/float_content": (dict(dtype="DT_FLOAT", tensor_content=struct.pack("<f", v)), f32(v)),
        }
        for tag, (fields, value) in tensors.items():
            summary = scalar_tensor_summary(
                Summary, SummaryMetadata, TensorProto, tag, tensor_shape=TensorShapeProto(), **fields
            )
            writer._get_file_writer().add_summary(summary, step, wall_time)
            expected[(tag, step)] = (value, wall_time)

        # Newer tensorboardX (and torch) write tensor scalars themselves; use that when available.
        if "new_style" in add_scalar_params:
            writer.add_scalar("new_style/float", v, step, walltime=wall_time, new_style=True)
            expected[("new_style/float", step)] = (f32(v), wall_time)
            if "double_precision" in add_scalar_params:
                writer.add_scalar(
                    "new_style/double", v, step, walltime=wall_time, new_style=True, double_precision=True
                )
                expected[("new_style/double", step)] = (v, wall_time)

        # Non-scalars tally must skip.
        writer.add_histogram("hist", np.arange(10.0) * step, step, walltime=wall_time)
        writer.add_text("notes", f"step {step}", step, walltime=wall_time)
    writer.close()

    proc = subprocess.run(
        [str(tally_bin), "export", "--format", "jsonl", str(logdir)],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    got_tally = {}
    for line in proc.stdout.splitlines():
        row = json.loads(line)
        key = (row["tag"], row["step"])
        assert key not in got_tally, key
        got_tally[key] = (row["value"], row["wall_time"])

    assert got_tally == expected
    assert got_tally == ea_scalars(accumulate(logdir))
