"""tally.sql and `tally sql`: a read-only SQL query over the runs table and every point
(docs/contract/consumers.md "SQL over runs"); the sweep question answered by one call and one
command, checked against numpy over what the writer was given."""

import json
import subprocess

import numpy as np
import pytest

import tally

# 4 learning rates x 5 seeds; run (lr, seed) logs ret = final * step / 100 on steps 0..100.
LRS = [0.1, 0.03, 0.01, 0.003]
FINALS = {lr: [100 * lr * (1 + 0.1 * s) + s for s in range(5)] for lr in LRS}

SWEEP_QUESTION = """
    SELECT r."config.config.lr" AS lr, avg(s.value) AS mean_final, count(*) AS seeds
    FROM scalars s JOIN runs r ON s.run = r.run
    WHERE s.tag = 'ret' AND s.step = r.last_step
    GROUP BY lr ORDER BY mean_final DESC
"""


@pytest.fixture
def sweep(tmp_path):
    for lr, finals in FINALS.items():
        for seed, final in enumerate(finals):
            with tally.SummaryWriter(tmp_path / f"lr{lr}" / f"s{seed}", config={"lr": lr, "seed": seed}) as w:
                for step in range(0, 101, 10):
                    w.add_scalar("ret", final * step / 100, step)
                    w.add_scalar("loss", 1.0 / (step + 1), step)
    return tmp_path


def by_hand():
    """(lr, mean final return over seeds), best first, from what was written."""
    rows = [(lr, float(np.mean(np.float32(finals)))) for lr, finals in FINALS.items()]
    return sorted(rows, key=lambda r: -r[1])


def test_the_sweep_question_in_one_call_equals_numpy_by_hand(sweep):
    t = tally.sql(sweep, SWEEP_QUESTION)
    assert t.column_names == ["lr", "mean_final", "seeds"]
    want = by_hand()
    assert t.column("lr").to_pylist() == [lr for lr, _ in want]
    assert t.column("mean_final").to_pylist() == pytest.approx([m for _, m in want], rel=1e-6)
    assert t.column("seeds").to_pylist() == [5] * 4


def test_the_sweep_question_in_one_command_equals_numpy_by_hand(sweep, tally_bin):
    out = subprocess.run(
        [str(tally_bin), "sql", str(sweep), SWEEP_QUESTION, "--json"], capture_output=True, text=True, check=True
    ).stdout
    rows = json.loads(out)
    want = by_hand()
    assert [r["lr"] for r in rows] == [lr for lr, _ in want]
    assert [r["mean_final"] for r in rows] == pytest.approx([m for _, m in want], rel=1e-6)
    table = subprocess.run(
        [str(tally_bin), "sql", str(sweep), SWEEP_QUESTION], capture_output=True, text=True, check=True
    ).stdout
    assert "mean_final" in table and str(want[0][0]) in table


def test_scalars_are_every_point_tally_read_returns(sweep):
    points = tally.read(sweep)
    t = tally.sql(sweep, "SELECT run, tag, step, wall_time, value FROM scalars ORDER BY run, tag, step")
    assert t.num_rows == points.num_rows == 4 * 5 * 2 * 11
    # Names as plain strings: pandas sorts a categorical by its categories' order, SQL by value.
    want = points.to_pandas().astype({"run": str, "tag": str})
    want = want.sort_values(["run", "tag", "step"]).reset_index(drop=True)
    got = t.to_pandas()
    assert list(got["run"].astype(str)) == list(want["run"].astype(str))
    assert list(got["tag"].astype(str)) == list(want["tag"].astype(str))
    assert got["step"].tolist() == want["step"].tolist()
    assert got["value"].tolist() == want["value"].tolist()
    assert got["wall_time"].tolist() == want["wall_time"].tolist()


def test_runs_is_the_runs_table_without_tag_figures(sweep):
    table = tally.runs(sweep)
    t = tally.sql(sweep, "SELECT * FROM runs ORDER BY run")
    assert t.column("run").to_pylist() == sorted(table.column("run").to_pylist())
    assert t.schema.field("start").type == table.schema.field("start").type
    assert t.column("points").to_pylist() == [22] * 20
    assert sorted(t.column("config.config.seed").to_pylist()) == sorted(list(range(5)) * 4)


def test_runs_lists_the_runs_a_health_rule_fired_on(sweep):
    # docs/contract/consumers.md "SQL over runs": `findings` and `health` as the runs table has them.
    with tally.SummaryWriter(sweep / "sick") as w:
        for step in range(50):
            w.add_scalar("loss", float("nan") if step == 30 else 1.0, step)
    t = tally.sql(sweep, "SELECT run, findings, health FROM runs WHERE findings > 0")
    assert t.to_pylist() == [{"run": "sick", "findings": 1, "health": "nonfinite loss@30"}]
    assert tally.sql(sweep, "SELECT count(*) AS n FROM runs WHERE findings = 0").to_pylist() == [{"n": 20}]


def test_a_bad_query_raises_value_error_naming_the_culprit(sweep, tally_bin):
    with pytest.raises(ValueError, match="no_such_column"):
        tally.sql(sweep, "SELECT no_such_column FROM runs")
    with pytest.raises(ValueError, match="(?i)ddl|not supported|not allowed"):
        tally.sql(sweep, "DROP TABLE runs")
    with pytest.raises(TypeError, match="query"):
        tally.sql(sweep, "  ")
    r = subprocess.run([str(tally_bin), "sql", str(sweep), "SELEC 1"], capture_output=True, text=True)
    assert r.returncode == 2 and "SELEC" in r.stderr


def test_a_run_that_cannot_be_read_is_left_out_with_a_warning(sweep):
    bad = sweep / "broken"
    bad.mkdir()
    (bad / "events.out.tfevents.1.host").write_bytes(b"\x00" * 64)
    with pytest.warns(tally.UnreadableRunWarning, match="broken"):
        t = tally.sql(sweep, "SELECT count(DISTINCT run) AS n FROM scalars")
    assert t.column("n").to_pylist() == [20]
