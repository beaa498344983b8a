"""`tally export --format parquet` read back by the real clients, row for row: pyarrow, pandas
and TensorBoard's EventAccumulator (docs/contract/consumers.md "Exporting to Parquet").

Files over 8 MiB are read on every core a window at a time, each window one row group; doubles
with runs of equal values (a tally event's shared wall time, a constant metric) are written as
a dictionary of the runs; other values PLAIN; nothing compressed unless
`--compression snappy`.
"""

import json
import math
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from conftest import REPO, target_dir

COLUMNS = ["run", "tag", "step", "wall_time", "value"]


@pytest.fixture(scope="module")
def gen_events() -> Path:
    """The example that writes large synthetic event files, as the benchmarks do."""
    subprocess.run(["cargo", "build", "-q", "-p", "tally-tfevents", "--example", "gen_events"], cwd=REPO, check=True)
    return target_dir() / "debug" / "examples" / "gen_events"


def export(tally_bin, root, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tally_bin), "export", "--progress", "never", str(root), *args], check=True, capture_output=True, text=True
    )


def parquet_export(tally_bin, root, out: Path) -> dict:
    export(tally_bin, root, "--format", "parquet", "--output", str(out))
    table = pq.read_table(out)
    assert table.schema.names == COLUMNS
    assert str(table.schema.field("step").type) == "int64"
    assert str(table.schema.field("value").type) == "double"
    return table.to_pydict()


def test_large_files_read_on_every_core_come_back_row_for_row(tmp_path, tally_bin, gen_events):
    """Two runs of one file over 8 MiB each (ten scalars per event as tally writes; one per
    event as torch writes): pyarrow and pandas give the JSON-lines rows in order, and the
    per-step run's rows are EventAccumulator's scalars."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    root = tmp_path / "runs"
    subprocess.run([str(gen_events), "32000", "10", str(root / "per_step")], check=True, capture_output=True)
    subprocess.run([str(gen_events), "16000", "10", str(root / "per_tag"), "per-tag"], check=True, capture_output=True)
    for run in ("per_step", "per_tag"):
        (file,) = (root / run).glob("events.out.tfevents.*")
        assert file.stat().st_size > 8 << 20

    got = parquet_export(tally_bin, root, tmp_path / "all.parquet")
    parquet = pq.ParquetFile(tmp_path / "all.parquet")
    meta = parquet.metadata
    assert meta.num_row_groups >= 4, "each file is read in several windows"
    for group in range(meta.num_row_groups):
        steps = parquet.read_row_group(group, columns=["step"]).column("step").to_pylist()
        stats = meta.row_group(group).column(2).statistics
        assert (stats.min, stats.max) == (min(steps), max(steps)), "readers skip row groups by step"
    want = [json.loads(line) for line in export(tally_bin, root).stdout.splitlines()]
    assert len(want) == 32000 * 10 + 16000 * 10
    for column in COLUMNS:
        assert got[column] == [row[column] for row in want], column

    frame = pd.read_parquet(tmp_path / "all.parquet")
    assert list(frame.columns) == COLUMNS
    assert frame["step"].dtype == "int64"
    assert frame["wall_time"].tolist() == got["wall_time"]
    assert frame["value"].tolist() == got["value"]

    acc = EventAccumulator(str(root / "per_step"), size_guidance={"scalars": 0})
    acc.Reload()
    from_tb = sorted((tag, e.step, e.wall_time, e.value) for tag in acc.Tags()["scalars"] for e in acc.Scalars(tag))
    per_step = [i for i, run in enumerate(got["run"]) if Path(run).name == "per_step"]
    from_parquet = sorted((got["tag"][i], got["step"][i], got["wall_time"][i], got["value"][i]) for i in per_step)
    assert from_parquet == from_tb


def test_constant_values_and_special_doubles_survive_the_run_dictionary(tmp_path, tally_bin):
    """Runs of one value (a constant metric, events sharing a wall time) go through the run
    dictionary: NaN, the infinities and a negative zero come back bit for bit, in order."""
    import numpy as np
    from tensorboardX import SummaryWriter

    run = tmp_path / "runs" / "tbx"
    w = SummaryWriter(str(run))
    for step in range(1000):
        w.add_scalar("const", 1.5, step, walltime=1000.0 + step // 10)
    specials = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0]
    for step in range(500):
        w.add_scalar("specials", specials[step % 5], step, walltime=2000.0 + step // 10)
    w.close()

    got = parquet_export(tally_bin, tmp_path / "runs", tmp_path / "out.parquet")
    columns = pq.ParquetFile(tmp_path / "out.parquet").metadata.row_group(0)
    assert "RLE_DICTIONARY" in str(columns.column(4).encodings), "constant values are a run dictionary"
    assert got["tag"] == ["const"] * 1000 + ["specials"] * 500
    assert got["step"] == list(range(1000)) + list(range(500))
    assert got["wall_time"] == [1000.0 + s // 10 for s in range(1000)] + [2000.0 + s // 10 for s in range(500)]
    assert got["value"][:1000] == [1.5] * 1000
    values = np.array(got["value"][1000:])
    assert np.isnan(values[0::5]).all()
    assert (values[1::5] == math.inf).all() and (values[2::5] == -math.inf).all()
    assert (values[3::5] == 0.0).all() and np.signbit(values[3::5]).all()
    assert (values[4::5] == 0.0).all() and not np.signbit(values[4::5]).any()


def test_snappy_pages_read_back_as_the_uncompressed_file(tmp_path, tally_bin, gen_events):
    """`--compression snappy`: every page Snappy-compressed, as pandas and pyarrow write by
    default; pyarrow reads the same table as the uncompressed export, from a smaller file,
    through both the windowed path (a file over 8 MiB) and the sequential one (a small run)."""
    root = tmp_path / "runs"
    subprocess.run([str(gen_events), "32000", "10", str(root / "big")], check=True, capture_output=True)
    subprocess.run([str(gen_events), "300", "10", str(root / "small"), "per-tag"], check=True, capture_output=True)
    plain, snappy = tmp_path / "plain.parquet", tmp_path / "snappy.parquet"
    export(tally_bin, root, "--format", "parquet", "--output", str(plain))
    export(tally_bin, root, "--format", "parquet", "--compression", "snappy", "--output", str(snappy))
    assert pq.read_table(snappy).equals(pq.read_table(plain))
    meta = pq.ParquetFile(snappy).metadata
    assert meta.num_row_groups > 2
    for g in range(meta.num_row_groups):
        for c in range(meta.num_columns):
            col = meta.row_group(g).column(c)
            assert col.compression == "SNAPPY", (g, c, col.compression)
            assert col.total_uncompressed_size >= col.total_compressed_size > 0
    assert pq.ParquetFile(plain).metadata.row_group(0).column(0).compression == "UNCOMPRESSED"
    assert snappy.stat().st_size < plain.stat().st_size
    # Pages compressed as pandas reads them too.
    assert pd.read_parquet(snappy).equals(pd.read_parquet(plain))


def test_compression_is_refused_for_text_formats_naming_it(tmp_path, tally_bin, gen_events):
    subprocess.run([str(gen_events), "10", "2", str(tmp_path / "run")], check=True, capture_output=True)
    for fmt in ("jsonl", "csv"):
        proc = subprocess.run(
            [str(tally_bin), "export", "--format", fmt, "--compression", "snappy", str(tmp_path / "run")],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 2, proc
        assert f"--compression applies to --format parquet only, not {fmt}" in proc.stderr
        assert proc.stdout == ""
