"""`tally export` output read by pandas (CSV, JSON lines) and pyarrow (Parquet): the same rows.

Every scalar (run, tag, step, wall time, value) for analysis in pandas/polars
(docs/contract/consumers.md "export").
"""

import json
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest




@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, tally_bin):
    root = tmp_path_factory.mktemp("logs")
    out = subprocess.run(
        [tally_bin, "demo", "--iterations", "25", "--panel", "off", f"training.log_root={root}"],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip().splitlines()[-1].removeprefix("run: "))


def export(tally_bin, run_dir, *args):
    return subprocess.run(
        [tally_bin, "export", "--progress", "never", str(run_dir), *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_csv_jsonl_and_parquet_exports_hold_the_same_rows(tally_bin, run_dir, tmp_path):
    rows = [json.loads(line) for line in export(tally_bin, run_dir).splitlines()]
    assert len(rows) > 25 * 40, "a SAC demo step carries dozens of canonical tags"
    reference = pd.DataFrame(rows)

    csv_path = tmp_path / "s.csv"
    export(tally_bin, run_dir, "--format", "csv", "--output", str(csv_path))
    from_csv = pd.read_csv(csv_path)

    pq_path = tmp_path / "s.parquet"
    export(tally_bin, run_dir, "--format", "parquet", "--output", str(pq_path))
    from_parquet = pq.read_table(pq_path).to_pandas()

    for frame in (from_csv, from_parquet):
        assert list(frame.columns) == ["run", "tag", "step", "wall_time", "value"]
        assert len(frame) == len(reference)
        assert (frame["tag"].values == reference["tag"].values).all()
        assert (frame["step"].values == reference["step"].values).all()
        assert (frame["value"].values == reference["value"].values).all()
    assert str(from_parquet["step"].dtype) == "int64"


def test_tag_filter_selects_one_series_for_pandas(tally_bin, run_dir):
    rows = [json.loads(line) for line in export(tally_bin, run_dir, "--tags", "Perf/iteration_time").splitlines()]
    frame = pd.DataFrame(rows)
    assert set(frame["tag"]) == {"Perf/iteration_time"}
    assert len(frame) == 25
    assert frame["step"].is_monotonic_increasing
