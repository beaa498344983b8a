"""`tally.read` after the scalar fast path and the parallel run reader
(docs/contract/consumers.md "Reading scalars fast").

Files mix what the fast path takes (simple values as tally, tensorboardX and torch's
`add_scalar` write them; rank-0 float tensors as torch's `new_style=True` writes them) with what
it hands to the general decoder (histograms, images, text, double tensors, hparams, a value with
a display name in its metadata), and every table is checked against tensorboard's own
EventAccumulator on the same files. Several runs read at once must give the rows, dictionaries,
warnings and errors that reading them one by one gives.
"""

import fnmatch
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.util import tensor_util

import tally
from tally._read import TruncatedEventFileWarning

WALL0 = 1_700_000_000.0


def torch_style_scalar(tag, value, shape=True, content=False, display_name=""):
    """A summary as torch's `SummaryWriter.add_scalar(..., new_style=True)` builds it: a DT_FLOAT
    tensor of the scalars plugin (with tensor_content as TensorFlow's numpy conversion writes)."""
    from tensorboardX.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboardX.proto.tensor_pb2 import TensorProto
    from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto

    tensor = TensorProto(dtype="DT_FLOAT")
    if content:
        tensor.tensor_content = struct.pack("<f", value)
    else:
        tensor.float_val.append(value)
    if shape:
        tensor.tensor_shape.CopyFrom(TensorShapeProto())
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"), display_name=display_name)
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=metadata)])


def two_values(a, b):
    """One event holding two simple values, as tally writes a step."""
    from tensorboardX.proto.summary_pb2 import Summary

    return Summary(value=[Summary.Value(tag="pair/a", simple_value=a), Summary.Value(tag="pair/b", simple_value=b)])


def write_mixed_run(logdir, steps=range(12), offset=0.0):
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(str(logdir))
    fw = writer._get_file_writer()
    for step in steps:
        wall = WALL0 + offset + step * 0.5
        writer.add_scalar("loss", 1.0 / (step + 1), step, walltime=wall)
        fw.add_summary(two_values(step * 1.5, -step), step, wall)
        fw.add_summary(torch_style_scalar("new_style/shape", step * 0.25), step, wall)
        fw.add_summary(torch_style_scalar("new_style/no_shape", -step * 0.75, shape=False), step, wall)
        fw.add_summary(torch_style_scalar("new_style/content", step + 0.125, content=True), step, wall)
        fw.add_summary(torch_style_scalar("new_style/named", step * 2.0, display_name="Named"), step, wall)
        writer.add_histogram("weights", np.arange(8.0) * step, step, walltime=wall)
        writer.add_image("img", np.full((3, 4, 4), step / 12.0), step, walltime=wall)
        writer.add_text("note", f"step {step}", step, walltime=wall)
        writer.add_scalar("nan_and_inf", [float("nan"), float("inf"), -0.0][step % 3], step, walltime=wall)
        writer.add_pr_curve("pr", np.array([0, 1, 1, 0]), np.array([0.1, 0.9, 0.6, 0.4]), step, walltime=wall)
    writer.close()


def accumulator_rows(run_dir):
    """(tag, step, wall_time, value) of every scalar EventAccumulator reads in `run_dir`'s own
    files, scalars and scalar tensors alike, sorted."""
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0})
    acc.Reload()
    rows = []
    for tag in acc.Tags()["scalars"]:
        rows += [(tag, e.step, e.wall_time, e.value) for e in acc.Scalars(tag)]
    for tag in acc.Tags()["tensors"]:
        for e in acc.Tensors(tag):
            array = tensor_util.make_ndarray(e.tensor_proto)
            if array.size == 1 and array.dtype.kind == "f":
                rows.append((tag, e.step, e.wall_time, float(array.reshape(()))))
    return sorted(rows, key=lambda r: (r[0], r[1], r[2]))


def rows(table):
    d = table.to_pydict()
    return sorted(zip(d["tag"], d["step"], d["wall_time"], d["value"]), key=lambda r: (r[0], r[1], r[2]))


def same_rows(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x[:3] == y[:3]
        assert np.float64(x[3]).tobytes() == np.float64(y[3]).tobytes() or (np.isnan(x[3]) and np.isnan(y[3])), (x, y)


def test_a_mixed_file_reads_as_event_accumulator_reads_it(tmp_path):
    write_mixed_run(tmp_path)
    want = accumulator_rows(tmp_path)
    got = rows(tally.read(tmp_path))
    tags = {r[0] for r in got}
    assert {"loss", "new_style/shape", "new_style/no_shape", "new_style/content", "new_style/named"} <= tags
    # The histogram, image, text and PR-curve values are not scalars.
    assert not tags & {"weights", "img", "note", "pr"}
    assert tags == {r[0] for r in want}
    same_rows(got, want)


def test_a_tally_logger_file_reads_as_event_accumulator_reads_it(tmp_path):
    from tally import SummaryWriter

    writer = SummaryWriter(str(tmp_path))
    for step in range(30):
        for i in range(7):
            writer.add_scalar(f"group{i % 2}/m{i}", step * 0.5 - i, step)
        if step % 10 == 0:
            writer.add_histogram("h", np.arange(5.0) + step, step)
    writer.close()
    want = accumulator_rows(tmp_path)
    got = rows(tally.read(tmp_path))
    assert len(got) == 30 * 7
    same_rows(got, want)


def make_tree(root, runs):
    for r in range(runs):
        write_mixed_run(root / f"seed{r:02d}", steps=range(r % 4 + 2), offset=r)


def test_many_runs_read_at_once_equal_the_runs_read_one_by_one(tmp_path):
    make_tree(tmp_path, 9)
    whole = tally.read(tmp_path).to_pydict()
    one_by_one = {k: [] for k in whole}
    for run_dir in sorted(p for p in tmp_path.iterdir()):
        part = tally.read(run_dir).to_pydict()
        part["run"] = [run_dir.name] * len(part["run"])
        for k in whole:
            one_by_one[k] += part[k]
    assert whole["run"] == one_by_one["run"]
    assert whole["tag"] == one_by_one["tag"]
    assert whole["step"] == one_by_one["step"]
    np.testing.assert_array_equal(np.array(whole["value"]), np.array(one_by_one["value"]))
    table = tally.read(tmp_path)
    # Dictionaries in first-seen order, as a sequential reader builds them.
    assert table.column("run").combine_chunks().dictionary.to_pylist() == [f"seed{r:02d}" for r in range(9)]
    first_seen = list(dict.fromkeys(whole["tag"]))
    assert table.column("tag").combine_chunks().dictionary.to_pylist() == first_seen


def records(path):
    data = Path(path).read_bytes()
    offsets, at = [], 0
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        offsets.append(at)
        at += 12 + length + 4
    return offsets


def test_several_damaged_runs_warn_in_run_order_and_the_first_corrupt_run_is_the_error(tmp_path):
    make_tree(tmp_path, 6)
    files = [next((tmp_path / f"seed{r:02d}").glob("events.out.tfevents.*")) for r in range(6)]
    # Runs 1 and 4 lose the last 5 bytes: truncated tails.
    for f in (files[1], files[4]):
        f.write_bytes(f.read_bytes()[:-5])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tally.read(tmp_path)
    truncated = [str(w.message) for w in caught if issubclass(w.category, TruncatedEventFileWarning)]
    assert [m.split(":")[0] for m in truncated] == [str(files[1]), str(files[4])]
    # Runs 2 and 5 get a flipped data byte: the error names run 2's file and its record.
    for f in (files[2], files[5]):
        data = bytearray(f.read_bytes())
        at = records(f)[3]
        data[at + 12] ^= 0xFF
        f.write_bytes(bytes(data))
    with pytest.raises(tally.StorageError) as err:
        tally.read(tmp_path)
    assert str(files[2]) in str(err.value)
    assert f"byte {records(files[2])[3]}" in str(err.value)
    assert str(files[5]) not in str(err.value)


def protobuf_rows(path):
    """(tag, step, wall_time, value) of every simple value, parsed by tensorboard's protobuf."""
    from tensorboard.compat.proto.event_pb2 import Event

    data, at, out = Path(path).read_bytes(), 0, []
    while at + 12 <= len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        event = Event.FromString(data[at + 12 : at + 12 + length])
        for v in event.summary.value:
            if v.WhichOneof("value") == "simple_value":
                out.append((v.tag, event.step, event.wall_time, float(np.float32(v.simple_value))))
        at += 12 + length + 4
    return out


def write_big_run(logdir, steps=50_000):
    """A single event file above the size read on several threads (8 MiB)."""
    writer = tally.EventWriter(logdir)
    for step in range(steps):
        writer.write_scalars(step, WALL0 + step, {f"grp{i % 3}/m{i}": step * 0.25 - i for i in range(10)})
    writer.close()
    (path,) = Path(logdir).glob("events.out.tfevents.*")
    assert path.stat().st_size > 8 << 20
    return path


def test_one_large_file_read_on_several_threads_is_the_file_in_order(tmp_path):
    path = write_big_run(tmp_path)
    d = tally.read(tmp_path).to_pydict()
    got = list(zip(d["tag"], d["step"], d["wall_time"], d["value"]))
    assert got == protobuf_rows(path)
    assert tally.read(tmp_path).column("tag").combine_chunks().dictionary.to_pylist() == [f"grp{i % 3}/m{i}" for i in range(10)]


def test_a_damaged_large_file_is_reported_as_the_sequential_reader_reports_it(tmp_path):
    path = write_big_run(tmp_path)
    data = path.read_bytes()
    offsets = records(path)
    path.write_bytes(data[:-7])
    with pytest.warns(TruncatedEventFileWarning, match=f"truncated tail at byte {offsets[-1]}"):
        table = tally.read(tmp_path)
    assert table.num_rows == (len(offsets) - 2) * 10  # the file-version record has no scalar
    middle = offsets[len(offsets) // 2]
    bad = bytearray(data)
    bad[middle + 20] ^= 0x01
    path.write_bytes(bytes(bad))
    with pytest.raises(tally.StorageError, match=f"corrupt record at byte {middle}"):
        tally.read(tmp_path)


def test_a_parquet_export_reads_back_in_pyarrow_and_pandas_as_tally_read_reads_the_runs(tmp_path, tally_bin):
    """`tally export --format parquet` writes `run` and `tag` as dictionary pages from the
    reader's ids: pyarrow and pandas must read every row back as `tally.read` reads the runs,
    across row groups (131 072 rows), several runs, dictionaries wider than 8 bits (300 tags),
    long runs of one tag and tags cycling one per event."""
    import subprocess

    import pandas as pd
    import pyarrow.parquet as pq
    from tensorboardX import SummaryWriter

    wide = tmp_path / "runs" / "wide"
    writer = tally.EventWriter(wide)
    for step in range(500):
        writer.write_scalars(step, WALL0 + step, {f"g{i % 7}/tag{i:03d}": step * 0.5 - i for i in range(300)})
    writer.close()
    cycling = tmp_path / "runs" / "cycling"
    tbx = SummaryWriter(str(cycling))
    for step in range(700):
        for tag in ("a", "b", "c"):
            tbx.add_scalar(tag, step / 3.0, step, walltime=WALL0 + step)
    for step in range(700, 760):
        tbx.add_scalar("solo", float("inf") if step == 701 else -step * 0.25, step, walltime=WALL0 + step)
    tbx.close()

    out = tmp_path / "all.parquet"
    subprocess.run([tally_bin, "export", "--progress", "never", "--format", "parquet", "--output", str(out), str(tmp_path / "runs")], check=True)
    expected = tally.read(tmp_path / "runs").to_pydict()
    assert len(expected["tag"]) == 500 * 300 + 700 * 3 + 60
    expected["run"] = [str((tmp_path / "runs" / r).resolve()) for r in expected["run"]]

    meta = pq.ParquetFile(out).metadata
    assert meta.num_row_groups == 2
    table = pq.read_table(out)
    assert table.schema.names == ["run", "tag", "step", "wall_time", "value"]
    assert str(table.schema.field("step").type) == "int64"
    got = table.to_pydict()
    got["run"] = [str(Path(r).resolve()) for r in got["run"]]
    for column in ("run", "tag", "step", "wall_time", "value"):
        assert got[column] == expected[column], column

    frame = pd.read_parquet(out)
    assert frame["tag"].tolist() == expected["tag"]
    assert frame["value"].tolist() == expected["value"]
    assert frame["step"].dtype == "int64"


def test_runs_of_many_rows_are_batches_of_their_own_and_config_columns_follow_each_row(tmp_path):
    """Runs of 65 536 rows or more come back as record batches of their own (no merge copy),
    small ones gathered; `read_runs(config=True)` still gives each row its own run's config."""
    import json

    for r, steps in enumerate((7000, 7000, 10, 12)):
        d = tmp_path / f"run{r}"
        writer = tally.EventWriter(d)
        for step in range(steps):
            writer.write_scalars(step, WALL0 + step, {f"m{i}": float(step * i + r) for i in range(10)})
        writer.close()
        (d / "run_config.json").write_text(json.dumps({"run": {"algo": f"algo{r}", "seed": r}}))
    table = tally.read_runs(tmp_path, config=True)
    assert table.num_rows == (7000 + 7000 + 10 + 12) * 10
    assert table.column("value").num_chunks == 3
    assert table.column("run").chunk(0).dictionary.equals(table.column("run").chunk(2).dictionary)
    d = table.to_pydict()
    assert all(algo == f"algo{run[-1]}" for run, algo in zip(d["run"], d["config.run.algo"]))
    assert all(seed == int(run[-1]) for run, seed in zip(d["run"], d["config.run.seed"]))
    assert d["value"][:10] == [0.0] * 10
    assert d["value"][70000 + 10 : 70000 + 20] == [float(1 * i + 1) for i in range(10)]


def test_tables_validate_in_full_and_globs_keep_exactly_their_rows_on_every_path(tmp_path):
    # A large file (read on several threads) whose events each mix kept and dropped tags, and
    # a tree of small runs (read run by run).
    path = write_big_run(tmp_path / "big")
    make_tree(tmp_path / "small", 5)
    every = protobuf_rows(path)
    for tags in (None, "grp1/*", ["grp0/*", "grp2/m8", "pair/*"], []):
        big = tally.read(tmp_path / "big", tags=tags)
        # tally.read leaves pyarrow's check of the dictionary codes out; the full validation
        # checks every code against its dictionary.
        big.validate(full=True)
        tally.read(tmp_path / "small", tags=tags).validate(full=True)
        globs = [tags] if isinstance(tags, str) else tags
        kept = [r for r in every if globs is None or any(fnmatch.fnmatchcase(r[0], g) for g in globs)]
        d = big.to_pydict()
        assert list(zip(d["tag"], d["step"], d["wall_time"], d["value"])) == kept
        # Both at once: the small runs' tag codes are renumbered after the large run's.
        both = tally.read(tmp_path, tags=tags)
        both.validate(full=True)
        small = tally.read(tmp_path / "small", tags=tags)
        assert both.column("tag").to_pylist() == d["tag"] + small.column("tag").to_pylist()
        # NaN values among them: compared as arrays, where NaN equals NaN.
        np.testing.assert_array_equal(np.array(both.column("value").to_pylist(), dtype=float), np.array(d["value"] + small.column("value").to_pylist(), dtype=float))
