"""`tally export --format parquet --dataset DIR` read back by DuckDB and pyarrow.dataset, row for
row equal to `tally.read` of the same runs; a second export adds only the new points
(docs/contract/consumers.md "A Parquet dataset")."""

import subprocess
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

import tally

COLUMNS = ["run", "tag", "step", "wall_time", "value"]
# A run name with a separator, a space, `=` and `%`: every one percent-encoded in the partition.
ODD = "seed 1/lr=0.1%"


def export(tally_bin, root: Path, ds: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tally_bin), "export", "--progress", "never", str(root), "--format", "parquet", "--dataset", str(ds)],
        check=True, capture_output=True, text=True,
    )


def rows(table: pa.Table) -> list:
    """The table's rows as sorted tuples of the scalar columns (dictionary columns as strings;
    the values logged here are all finite)."""
    d = table.select(COLUMNS).to_pydict()
    return sorted(zip(*(d[c] for c in COLUMNS)))


def fresh(root: Path) -> list:
    return rows(tally.read(root))


def by_duckdb(ds: Path) -> list:
    table = duckdb.sql(
        f"SELECT run, tag, step, wall_time, value FROM read_parquet('{ds}/scalars/*/*.parquet', hive_partitioning=true)"
    ).arrow()
    if isinstance(table, pa.RecordBatchReader):
        table = table.read_all()
    return rows(table)


def by_pyarrow(ds: Path) -> list:
    return rows(pads.dataset(ds / "scalars", partitioning="hive").to_table())


def log(run_dir: Path, steps, **kw) -> None:
    with tally.SummaryWriter(str(run_dir), **kw) as w:
        for s in steps:
            w.add_scalar("loss", 1.0 / (s + 1), s)
            w.add_scalar("reward", float(s) * 0.5, s)


def parts(ds: Path) -> dict:
    return {p.name: sorted(f.name for f in p.iterdir()) for p in sorted((ds / "scalars").iterdir())}


def test_duckdb_and_pyarrow_read_the_runs_back_and_a_second_export_adds_only_new_points(tmp_path, tally_bin):
    root, ds = tmp_path / "runs", tmp_path / "lake"
    log(root / ODD, range(0, 50))
    log(root / "baseline", range(0, 20))
    (root / ODD / "run_config.json").write_text('{"config": {"lr": 0.1}}')
    export(tally_bin, root, ds)

    want = fresh(root)
    assert len(want) == 140
    assert by_duckdb(ds) == want
    assert by_pyarrow(ds) == want
    assert {r[0] for r in want} == {ODD, "baseline"}
    assert (ds / "scalars" / "run=seed%201%2Flr%3D0.1%25").is_dir()
    # The partition column is not stored in the files (Spark refuses it twice).
    for f in (ds / "scalars").glob("*/*.parquet"):
        assert pq.read_schema(f).names == ["tag", "step", "wall_time", "value"]

    # The runs table: one schema across runs, the union of configuration keys.
    runs = duckdb.sql(
        f"SELECT run, points, last_step, \"config.config.lr\" AS lr "
        f"FROM read_parquet('{ds}/runs/*/*.parquet', hive_partitioning=true) ORDER BY run"
    ).fetchall()
    assert runs == [("baseline", 40, 19, None), (ODD, 100, 49, 0.1)]
    table = tally.runs(root)
    assert sorted(zip(table["run"].to_pylist(), table["points"].to_pylist())) == [("baseline", 40), (ODD, 100)]

    # Nothing new: no part written.
    before = parts(ds)
    export(tally_bin, root, ds)
    assert parts(ds) == before

    # The run resumed (a second event file) with 30 more steps: only those rows are added.
    log(root / ODD, range(50, 80))
    export(tally_bin, root, ds)
    after = parts(ds)
    key = "run=seed%201%2Flr%3D0.1%25"
    assert after["run=baseline"] == before["run=baseline"]
    new = sorted(set(after[key]) - set(before[key]))
    assert len(new) == 1
    added = pads.dataset(ds / "scalars" / key / new[0]).to_table()
    assert added.num_rows == 60 and min(added["step"].to_pylist()) == 50
    want = fresh(root)
    assert len(want) == 200
    assert by_duckdb(ds) == want
    assert by_pyarrow(ds) == want
    runs = duckdb.sql(
        f"SELECT run, points, last_step FROM read_parquet('{ds}/runs/*/*.parquet', hive_partitioning=true) ORDER BY run"
    ).fetchall()
    assert runs == [("baseline", 40, 19), (ODD, 160, 79)]


def test_a_file_still_being_written_is_exported_as_far_as_it_is_flushed(tmp_path, tally_bin):
    root, ds = tmp_path / "runs", tmp_path / "lake"
    w = tally.SummaryWriter(str(root / "live"))
    try:
        for s in range(10):
            w.add_scalar("x", float(s), s)
        w.flush()
        export(tally_bin, root, ds)
        assert by_pyarrow(ds) == fresh(root)
        for s in range(10, 25):
            w.add_scalar("x", float(s), s)
        w.flush()
        export(tally_bin, root, ds)
    finally:
        w.close()
    (files,) = parts(ds).values()
    assert len(files) == 2
    assert by_duckdb(ds) == fresh(root)
    assert len(fresh(root)) == 25


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_dataset_is_parquet_only(tmp_path, tally_bin, fmt):
    log(tmp_path / "r", range(3))
    out = subprocess.run(
        [str(tally_bin), "export", str(tmp_path / "r"), "--format", fmt, "--dataset", str(tmp_path / "lake")],
        capture_output=True, text=True,
    )
    assert out.returncode == 2 and fmt in out.stderr, out.stderr
