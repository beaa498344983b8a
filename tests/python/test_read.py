"""`tally.read` / `tally.read_runs`: event files back as pyarrow Tables.

Every table is checked against tbparse (`SummaryReader(..., extra_columns={'wall_time',
'dir_name'})`) on the same files — written by tensorboardX, by `tally.Logger`, and a directory
of several runs — and the tag globs against `tally export --tags`. Truncated and corrupted
files are made by walking the TFRecord framing here, independently of tally's reader
(docs/contract/consumers.md "Corrupt and truncated event files").
"""

import json
import struct
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from tbparse import SummaryReader

import tally
from tally import TruncatedEventFileWarning

WALL0 = 1_700_000_000.0


def f32(x):
    return float(np.float32(x))


def tbparse_rows(path, tensors=False):
    """Sorted (run, tag, step, wall_time, value) of every scalar tbparse reads at `path`
    (its `dir_name` "" is the root, which tally names ".")."""
    reader = SummaryReader(str(path), extra_columns={"wall_time", "dir_name"})
    frames = [reader.scalars] + ([reader.tensors] if tensors else [])
    rows = []
    for frame in frames:
        for r in frame.itertuples(index=False):
            rows.append((r.dir_name or ".", r.tag, int(r.step), float(r.wall_time), float(r.value)))
    return sorted(rows)


def tally_rows(table):
    d = table.to_pydict()
    return sorted(zip(d["run"], d["tag"], d["step"], d["wall_time"], d["value"]))


def write_tbx_run(logdir, steps=range(20), suffix="", offset=0.0):
    """A tensorboardX run: several simple-value tags, plus scalar tensors of the scalars plugin
    and a histogram (not a scalar). Returns the tags written, in order, per step."""
    from tensorboardX import SummaryWriter
    from tensorboardX.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboardX.proto.tensor_pb2 import TensorProto
    from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto

    writer = SummaryWriter(str(logdir), filename_suffix=suffix)
    for step in steps:
        wall = WALL0 + offset + step * 0.25
        writer.add_scalar("loss", 1.0 / (step + 1), step, walltime=wall)
        writer.add_scalar("lr", 3e-4 * 0.99**step, step, walltime=wall)
        writer.add_scalar("reward/mean", -50.0 + step * 2.25, step, walltime=wall)
        writer.add_scalar("reward/max", -10.0 + step, step, walltime=wall)
        metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
        tensor = TensorProto(dtype="DT_DOUBLE", double_val=[step * 0.1 - 1.3], tensor_shape=TensorShapeProto())
        summary = Summary(value=[Summary.Value(tag="tensor/double", tensor=tensor, metadata=metadata)])
        writer._get_file_writer().add_summary(summary, step, wall)
        writer.add_histogram("weights", np.arange(10.0) + step, step, walltime=wall)
    writer.close()


def event_file(logdir):
    (path,) = Path(logdir).glob("events.out.tfevents.*")
    return path


def record_offsets(path):
    """Start offset and total length of every TFRecord in `path`, from its length fields."""
    data = path.read_bytes()
    out, pos = [], 0
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from("<Q", data, pos)
        out.append((pos, 12 + length + 4))
        pos += 12 + length + 4
    assert pos == len(data)
    return out


# --- agreement with tbparse ------------------------------------------------------------------


def test_a_tensorboardx_file_reads_as_tbparse_reads_it(tmp_path):
    write_tbx_run(tmp_path / "tbx")
    path = event_file(tmp_path / "tbx")
    expected = tbparse_rows(path, tensors=True)
    assert {r[1] for r in expected} == {"loss", "lr", "reward/mean", "reward/max", "tensor/double"}
    assert len(expected) == 20 * 5

    for source in (path, tmp_path / "tbx"):  # the file itself, or its directory
        table = tally.read(source)
        assert table.column_names == ["run", "tag", "step", "wall_time", "value"]
        assert tally_rows(table) == expected
        assert set(table.column("run").to_pylist()) == {"."}


def test_rows_come_in_file_order(tmp_path):
    write_tbx_run(tmp_path, steps=range(3))
    d = tally.read(tmp_path).to_pydict()
    per_step = ["loss", "lr", "reward/mean", "reward/max", "tensor/double"]
    assert d["tag"] == per_step * 3
    assert d["step"] == [s for s in range(3) for _ in per_step]


def test_a_tally_logger_run_reads_as_tbparse_reads_it(tmp_path):
    with tally.Logger(algo="sac", task="go2", sim="mujoco", max_iterations=15, num_envs=4, log_root=tmp_path, panel="off") as log:
        for it in range(1, 16):
            log.step(
                it,
                env_steps=it * 4,
                metrics={"Loss/critic": 0.5 * it, "Loss/actor": -0.25 * it, "Policy/temperature": 0.1},
                iteration_time=0.01,
                steps_this_iter=4,
                episode_return=float(it),
            )
    expected = tbparse_rows(log.run_dir)
    assert len(expected) >= 15 * 5
    table = tally.read(log.run_dir)
    assert tally_rows(table) == expected
    assert ("Loss/critic", 8, f32(1.0)) in {(r[1], r[2], r[4]) for r in tally_rows(table)}


def test_a_directory_of_runs_reads_as_tbparse_reads_it(tmp_path):
    root = tmp_path / "runs"
    write_tbx_run(root / "ppo_seed1")
    # One run written in two sessions: two event files in one directory, read as one run.
    write_tbx_run(root / "sac" / "seed2", steps=range(0, 10), suffix=".a")
    write_tbx_run(root / "sac" / "seed2", steps=range(10, 20), suffix=".b", offset=100.0)
    assert len(list((root / "sac" / "seed2").iterdir())) == 2

    table = tally.read(root)
    assert tally_rows(table) == tbparse_rows(root, tensors=True)
    runs = table.column("run").to_pylist()
    assert set(runs) == {"ppo_seed1", "sac/seed2"}
    steps = [s for r, s, t in zip(runs, table.column("step").to_pylist(), table.column("tag").to_pylist()) if r == "sac/seed2" and t == "loss"]
    assert steps == list(range(20)), "the directory's files are read in run order, one after the other"
    assert tally_rows(tally.read_runs(root)) == tally_rows(table)


def test_runs_are_named_against_the_common_root_of_the_inputs(tmp_path):
    write_tbx_run(tmp_path / "a", steps=range(2))
    write_tbx_run(tmp_path / "b" / "c", steps=range(2))
    names = lambda t: sorted(set(t.column("run").to_pylist()))  # noqa: E731
    assert names(tally.read([event_file(tmp_path / "a"), tmp_path / "b"])) == ["a", "b/c"]
    assert names(tally.read([tmp_path / "b" / "c", str(tmp_path / "a")])) == ["a", "b/c"]
    assert names(tally.read(tmp_path / "b")) == ["c"]
    assert names(tally.read(event_file(tmp_path / "b" / "c"))) == ["."]
    # The same file named twice (directly and through its directory) is read once.
    assert tally.read([tmp_path / "a", event_file(tmp_path / "a")]).num_rows == tally.read(tmp_path / "a").num_rows


# --- tag globs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "globs, tags",
    [
        (["reward/*"], {"reward/mean", "reward/max"}),
        (["loss", "*/double"], {"loss", "tensor/double"}),
        (["*"], {"loss", "lr", "reward/mean", "reward/max", "tensor/double"}),
        (["oss"], set()),  # anchored: a glob matches the whole tag
        (["l*s"], {"loss"}),
    ],
)
def test_globs_keep_the_tags_tally_export_keeps(tmp_path, tally_bin, globs, tags):
    write_tbx_run(tmp_path, steps=range(4))
    table = tally.read(tmp_path, tags=globs)
    assert set(table.column("tag").to_pylist()) == tags
    exported = subprocess.run(
        [tally_bin, "export", "--progress", "never", str(tmp_path), "--tags", *globs],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()  # fmt: skip
    rows = [json.loads(line) for line in exported]
    assert [(r["tag"], r["step"], r["value"]) for r in rows] == list(
        zip(table.column("tag").to_pylist(), table.column("step").to_pylist(), table.column("value").to_pylist())
    )


def test_runs_and_tags_the_globs_drop_leave_no_category(tmp_path):
    write_tbx_run(tmp_path / "a", steps=range(2))
    from tensorboardX import SummaryWriter

    with SummaryWriter(str(tmp_path / "b")) as w:
        w.add_scalar("other", 1.0, 0)
    frame = tally.read(tmp_path, tags=["reward/*"]).to_pandas()
    assert list(frame["run"].cat.categories) == ["a"]
    assert sorted(frame["tag"].cat.categories) == ["reward/max", "reward/mean"]


def test_a_single_glob_string_and_an_empty_list(tmp_path):
    write_tbx_run(tmp_path, steps=range(3))
    assert set(tally.read(tmp_path, tags="reward/*").column("tag").to_pylist()) == {"reward/mean", "reward/max"}
    empty = tally.read(tmp_path, tags=[])
    assert empty.num_rows == 0 and empty.column_names == ["run", "tag", "step", "wall_time", "value"]


# --- read_runs(config=True) ---------------------------------------------------------------


def test_read_runs_adds_each_runs_config_as_columns(tmp_path):
    configs = {"a": {"lr": 3e-4, "net": {"width": 256, "act": "elu"}}, "b": {"lr": 1e-3, "net": {"width": 512}}}
    run_dirs = {}
    for name, config in configs.items():
        with tally.Logger(algo="sac", task=name, sim="mujoco", max_iterations=3, num_envs=2, log_root=tmp_path, panel="off", config=config) as log:
            for it in range(1, 4):
                log.step(it, env_steps=it * 2, metrics={"Loss/critic": it * 1.0}, iteration_time=0.01, steps_this_iter=2)
        run_dirs[name] = log.run_dir
    write_tbx_run(tmp_path / "tbx", steps=range(2))  # no run_config.json: its config cells are null

    table = tally.read_runs(tmp_path, config=True)
    plain = tally.read_runs(tmp_path)
    assert table.column_names[:5] == plain.column_names and tally_rows(table.select(range(5))) == tally_rows(plain)
    for col in ("config.config.lr", "config.config.net.width", "config.config.net.act", "config.run.algo", "config.run.task"):
        assert col in table.column_names, col

    rows = table.to_pylist()
    for name, run_dir in run_dirs.items():
        on_disk = json.loads((Path(run_dir) / "run_config.json").read_text())
        run = Path(run_dir).relative_to(tmp_path).as_posix()
        mine = [r for r in rows if r["run"] == run]
        assert len(mine) == plain.column("run").to_pylist().count(run) > 0
        for r in mine:
            assert r["config.config.lr"] == on_disk["config"]["lr"]
            assert r["config.config.net.width"] == on_disk["config"]["net"]["width"]
            assert r["config.config.net.act"] == on_disk["config"]["net"].get("act")  # null for run b
            assert r["config.run.task"] == on_disk["run"]["task"] == name
    tbx = [r for r in rows if r["run"] == "tbx"]
    assert tbx and all(v is None for r in tbx for k, v in r.items() if k.startswith("config."))


def test_a_broken_run_config_is_named_and_a_storage_error_when_asked(tmp_path):
    write_tbx_run(tmp_path / "r", steps=range(1))
    (tmp_path / "r" / "run_config.json").write_text("{not json")
    with pytest.raises(tally.StorageError, match="run_config.json"):
        tally.read_runs(tmp_path, config=True, errors="raise")
    with pytest.warns(tally.UnreadableRunWarning, match="run_config.json: not valid JSON"):
        assert tally.read_runs(tmp_path, config=True).num_rows > 0
    assert tally.read_runs(tmp_path).num_rows > 0  # without config it is not read


# --- truncation and corruption ----------------------------------------------------------------


def test_a_truncated_file_reads_up_to_its_last_complete_record(tmp_path):
    write_tbx_run(tmp_path, steps=range(5))
    path = event_file(tmp_path)
    full = tbparse_rows(path, tensors=True)
    records = record_offsets(path)
    # Each step writes loss, lr, reward/mean, reward/max, tensor/double, weights (one record
    # each): cut inside step 4's reward/max record, as a writer killed mid-write leaves it.
    start, length = records[-3]
    data = path.read_bytes()
    path.write_bytes(data[: start + length - 5])
    with pytest.warns(TruncatedEventFileWarning) as caught:
        table = tally.read(path)
    got = tally_rows(table)
    lost = {("reward/max", 4), ("tensor/double", 4)}
    assert got == [r for r in full if (r[1], r[2]) not in lost]
    (warning,) = caught
    assert str(warning.message).startswith(f"{path}: truncated tail at byte {start}: ")
    assert warning.filename == __file__, "the warning points at the caller of tally.read"
    with pytest.warns(TruncatedEventFileWarning, match="truncated tail at byte"):
        tally.read_runs(tmp_path)


def test_a_file_cut_at_a_record_boundary_reads_without_a_warning(tmp_path):
    write_tbx_run(tmp_path, steps=range(5))
    path = event_file(tmp_path)
    start, _ = record_offsets(path)[-3]
    path.write_bytes(path.read_bytes()[:start])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = tally.read(path)
    assert table.num_rows == 4 * 5 + 3


@pytest.mark.parametrize("where", ["data", "length"])
def test_a_corrupted_byte_is_a_storage_error_naming_the_file_and_offset(tmp_path, where):
    write_tbx_run(tmp_path, steps=range(5))
    path = event_file(tmp_path)
    start, length = record_offsets(path)[7]
    data = bytearray(path.read_bytes())
    data[start + (12 + 3 if where == "data" else 2)] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(tally.StorageError) as e:
        tally.read(tmp_path)
    assert str(path) in str(e.value)
    assert f"byte {start}" in str(e.value)
    assert isinstance(e.value, OSError)


# --- a run's several event files ---------------------------------------------------------------


def event_accumulator_scalars(run_dir):
    """(tag, step, wall_time, value) of every scalar TensorBoard shows for `run_dir`, in the
    order its EventAccumulator holds them (files in name order, no purge for file_version 2)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    rows = []
    for tag in acc.Tags()["scalars"]:
        rows += [(tag, e.step, e.wall_time, f32(e.value)) for e in acc.Scalars(tag)]
    for tag in acc.Tags()["tensors"]:
        rows += [(tag, e.step, e.wall_time, float(e.tensor_proto.double_val[0])) for e in acc.Tensors(tag)]
    return rows


def test_a_resumed_run_reads_as_one_run_as_tensorboard_shows_it(tmp_path):
    # Two sessions in one directory, the second continuing the steps (a resumed run).
    write_tbx_run(tmp_path, steps=range(0, 10), suffix=".1")
    time.sleep(1.1)  # the second file's name and first wall time both come later
    write_tbx_run(tmp_path, steps=range(10, 20), suffix=".2", offset=100.0)
    assert len(list(tmp_path.glob("events.out.tfevents.*"))) == 2
    d = tally.read(tmp_path).to_pydict()
    got = list(zip(d["tag"], d["step"], d["wall_time"], d["value"]))
    expected = event_accumulator_scalars(tmp_path)
    assert len(expected) == 20 * 5
    for tag in {r[0] for r in expected}:
        assert [r for r in got if r[0] == tag] == [r for r in expected if r[0] == tag], tag
    assert set(d["run"]) == {"."}


def test_a_step_going_back_across_a_runs_files_is_kept_as_tensorboard_draws_it_and_said(tmp_path):
    write_tbx_run(tmp_path, steps=range(0, 10), suffix=".1")
    time.sleep(1.1)
    write_tbx_run(tmp_path, steps=range(5, 15), suffix=".2", offset=100.0)
    first, second = sorted(tmp_path.glob("events.out.tfevents.*"))
    # TensorBoard shows both sessions' points for steps 5..9 (no purge for file_version 2).
    expected = event_accumulator_scalars(tmp_path)
    assert [e[1] for e in expected if e[0] == "loss"] == list(range(10)) + list(range(5, 15))
    with pytest.warns(tally.StepsGoBackWarning) as caught:
        d = tally.read(tmp_path).to_pydict()
    got = list(zip(d["tag"], d["step"], d["wall_time"], d["value"]))
    for tag in {r[0] for r in expected}:
        assert [r for r in got if r[0] == tag] == [r for r in expected if r[0] == tag], tag
    (w,) = [str(c.message) for c in caught]
    # Steps 5..9 of the second file, five tags each, do not pass the first file's 9.
    assert str(second) in w and str(first) in w and "25 points from step 5 on do not pass step 9" in w, w
    with pytest.raises(tally.StorageError) as e:
        tally.read(tmp_path, strict=True)
    assert str(first) in str(e.value) and str(second) in str(e.value) and "step 5" in str(e.value)
    with pytest.raises(TypeError, match="strict must be True or False"):
        tally.read(tmp_path, strict="yes")


def test_two_rust_written_files_read_as_tensorboard_reads_them_and_a_purge_applied(tmp_path, tally_bin):
    # The Rust writer (tally.EventWriter) makes both files; the second continues the steps.
    first = tally.EventWriter(tmp_path)
    for step in range(1, 6):
        first.write_scalars(step, WALL0 + step, {"Loss/a": step * 0.5, "Loss/b": -step})
    first.close()
    time.sleep(1.1)
    second = tally.EventWriter(tmp_path)
    for step in range(6, 11):
        second.write_scalars(step, WALL0 + step, {"Loss/a": step * 0.5, "Loss/b": -step})
    second_path = second.path
    second.close()
    expected = event_accumulator_scalars(tmp_path)
    assert len(expected) == 20
    d = tally.read(tmp_path).to_pydict()
    got = list(zip(d["tag"], d["step"], d["wall_time"], d["value"]))
    assert sorted(got) == sorted(expected)
    assert [r[1] for r in got if r[0] == "Loss/a"] == list(range(1, 11))

    # A third file with TensorBoard's purge marker at step 8 (SummaryWriter(purge_step=8)):
    # TensorBoard drops the earlier points from step 8 on, and so does tally, saying so.
    time.sleep(1.1)
    third = tally.EventWriter(tmp_path)
    third.write_session_start(8, WALL0 + 20)
    third.write_scalars(8, WALL0 + 21, {"Loss/a": 100.0, "Loss/b": 100.0})
    third_path = third.path
    third.close()
    expected = event_accumulator_scalars(tmp_path)
    assert [r[1] for r in expected if r[0] == "Loss/a"] == list(range(1, 9))
    with pytest.warns(tally.PurgedPointsWarning) as caught:
        d = tally.read(tmp_path).to_pydict()
    got = list(zip(d["tag"], d["step"], d["wall_time"], d["value"]))
    assert sorted(got) == sorted(expected)
    (w,) = [str(c.message) for c in caught]
    assert w.startswith(f"{third_path}: purge at byte") and f"6 points of {second_path} at steps >= 8" in w, w
    out = subprocess.run([tally_bin, "export", tmp_path, "--progress", "never"], capture_output=True, text=True, check=True)
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert sorted((r["tag"], r["step"], r["wall_time"], r["value"]) for r in rows) == sorted(expected)
    assert "purge marker at step 8" in out.stderr


def test_read_runs_skips_a_run_it_cannot_read_and_says_why(tmp_path):
    write_tbx_run(tmp_path / "good", steps=range(3))
    write_tbx_run(tmp_path / "also_good", steps=range(4))
    bad = tmp_path / "bad"
    write_tbx_run(bad, steps=range(5))
    (path,) = bad.glob("events.out.tfevents.*")
    data = bytearray(path.read_bytes())
    data[40] ^= 0xFF  # a flipped byte inside a record: its crc fails
    path.write_bytes(bytes(data))
    with pytest.warns(tally.UnreadableRunWarning) as caught:
        table = tally.read_runs(tmp_path)
    assert sorted(set(table.column("run").to_pylist())) == ["also_good", "good"]
    (w,) = [str(c.message) for c in caught]
    assert w.startswith(f"{bad}: skipped:") and str(path) in w, w
    with pytest.raises(tally.StorageError, match="events.out.tfevents"):
        tally.read_runs(tmp_path, errors="raise")
    with pytest.raises(ValueError, match="errors='ignore'"):
        tally.read_runs(tmp_path, errors="ignore")
    # A run whose configuration cannot be read keeps its rows; its config columns are null.
    (tmp_path / "good" / "run_config.json").write_text("{not json")
    (tmp_path / "also_good" / "run_config.json").write_text('{"run": {"algo": "ppo"}}')
    with pytest.warns(tally.UnreadableRunWarning, match="configuration skipped"):
        table = tally.read_runs(tmp_path, config=True)
    runs = table.column("run").to_pylist()
    algos = table.column("config.run.algo").to_pylist()
    assert {r: a for r, a in zip(runs, algos)} == {"good": None, "also_good": "ppo"}


# --- conversions --------------------------------------------------------------------------------


def test_pandas_and_polars_see_the_same_values(tmp_path):
    write_tbx_run(tmp_path / "a")
    write_tbx_run(tmp_path / "b", steps=range(7))
    table = tally.read(tmp_path)
    arrow = table.to_pydict()

    frame = table.to_pandas()
    assert list(frame.columns) == ["run", "tag", "step", "wall_time", "value"]
    assert [str(frame[c].dtype) for c in ("step", "wall_time", "value")] == ["int64", "float64", "float64"]
    for col in arrow:
        assert frame[col].tolist() == arrow[col], col

    df = pl.from_arrow(table)
    assert df.columns == ["run", "tag", "step", "wall_time", "value"]
    assert df.schema["step"] == pl.Int64 and df.schema["value"] == pl.Float64
    for col in arrow:
        assert df[col].to_list() == arrow[col], col

    # The numeric columns are single contiguous buffers without nulls: numpy views them in place.
    for col in ("step", "wall_time", "value"):
        chunked = table.column(col)
        assert chunked.num_chunks == 1 and chunked.null_count == 0
        chunked.chunk(0).to_numpy(zero_copy_only=True)


# --- the GIL, and bad inputs ----------------------------------------------------------------------


def test_reading_releases_the_gil(tmp_path):
    # 400 000 scalars through tally's own writer (fast), then read on a second thread while this
    # one keeps running: a held GIL would stall it for the whole decode, which is nearly all of
    # the read. The gap is compared with that same read's own duration (not a separate one):
    # the reader's threads compete with this one for the cores, so only a stall covering most
    # of the read is the GIL's doing.
    writer = tally.EventWriter(tmp_path)
    scalars = {f"tag/{i}": float(i) for i in range(40)}
    for step in range(10_000):
        writer.write_scalars(step, WALL0 + step, scalars)
    writer.close()

    done = threading.Event()
    result = {}

    def reader():
        t = time.perf_counter()
        result["t"] = tally.read(tmp_path)
        result["secs"] = time.perf_counter() - t
        done.set()

    th = threading.Thread(target=reader)
    last, max_gap, ticks = time.perf_counter(), 0.0, 0
    th.start()
    while not done.is_set():
        now = time.perf_counter()
        max_gap, last, ticks = max(max_gap, now - last), now, ticks + 1
    th.join()
    assert result["t"].num_rows == 400_000
    read = result["secs"]
    assert max_gap < 0.6 * read, f"main thread stalled {max_gap:.3f} s of a {read:.3f} s read"
    assert ticks > 100


def test_without_pyarrow_the_error_says_to_install_it(tmp_path, monkeypatch):
    write_tbx_run(tmp_path, steps=range(1))
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # makes `import pyarrow` raise ImportError
    with pytest.raises(ImportError, match=r"pip install pyarrow"):
        tally.read(tmp_path)


def test_bad_inputs_name_the_culprit(tmp_path):
    with pytest.raises(tally.StorageError, match="nope"):
        tally.read(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(tally.StorageError, match="empty: no events.out.tfevents"):
        tally.read(tmp_path / "empty")
    with pytest.raises(ValueError, match="no path given"):
        tally.read([])
    with pytest.raises(TypeError, match=r"paths\[1\].*int"):
        tally.read([tmp_path, 3])
    with pytest.raises(TypeError, match=r"tags\[0\].*bytes"):
        tally.read(tmp_path, tags=[b"x"])
    write_tbx_run(tmp_path / "r", steps=range(1))
    with pytest.raises(tally.StorageError, match="not a directory"):
        tally.read_runs(event_file(tmp_path / "r"))


def test_a_fifo_or_a_link_leading_nowhere_is_named_never_opened_and_the_runs_read(tmp_path):
    # docs/contract/untrusted-input.md "Special files": in a child process under a deadline, so
    # a reader that waits on the FIFO fails the test instead of hanging it.
    import os

    with tally.SummaryWriter(tmp_path / "good") as w:
        for step in range(3):
            w.add_scalar("ret", float(step), step)
    (tmp_path / "trap").mkdir()
    os.mkfifo(tmp_path / "trap" / "events.out.tfevents.1.fifo")
    os.symlink(tmp_path / "nothing", tmp_path / "good" / "events.out.tfevents.2.gone")
    script = (
        "import sys, warnings, tally\n"
        "with warnings.catch_warnings(record=True) as said:\n"
        "    warnings.simplefilter('always')\n"
        "    runs = sorted(set(tally.read(sys.argv[1]).column('run').to_pylist()))\n"
        "    rows = [r['run'] for r in tally.runs(sys.argv[1]).to_pylist()]\n"
        "print(runs, rows)\n"
        "for w in said:\n"
        "    print(w.category.__name__, w.message)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=60, check=True
    )
    lines = out.stdout.splitlines()
    assert lines[0] == "['good'] ['good']", out.stdout
    for culprit, why in (("trap/events.out.tfevents.1.fifo", "a FIFO"), ("good/events.out.tfevents.2.gone", "link")):
        said = [l for l in lines[1:] if culprit in l]
        assert len(said) == 2 and all(l.startswith("UnreadableRunWarning") and why in l for l in said), out.stdout
