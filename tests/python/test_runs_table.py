"""tally.runs: the runs table (docs/contract/consumers.md "The runs table"), from runs written
by tally's Logger, torch's SummaryWriter layout and tensorboardX, checked against the same
figures computed from tally.read's points and TensorBoard's EventAccumulator."""

import json
import math
import warnings

import pytest
from tensorboard.backend.event_processing import event_accumulator

import tally


def sweep(root, lrs=(0.1, 0.2), seeds=(1, 2)):
    for lr in lrs:
        for seed in seeds:
            d = root / f"lr{lr}_s{seed}"
            with tally.SummaryWriter(d, config={"lr": lr, "seed": seed}) as w:
                for step in range(0, 200, 10):
                    w.add_scalar("charts/episodic_return", lr * 100 + seed + step * 0.01, step)
                    w.add_scalar("losses/value", float("nan") if step == 50 else 1.0 / (1 + step), step)
    return root


def test_one_row_per_run_with_config_and_figures_equal_to_the_points(tmp_path):
    sweep(tmp_path)
    t = tally.runs(tmp_path, tags="charts/*")
    assert t.num_rows == 4
    assert t.column("run").to_pylist() == ["lr0.1_s1", "lr0.1_s2", "lr0.2_s1", "lr0.2_s2"]
    assert t.column("config.config.lr").to_pylist() == [0.1, 0.1, 0.2, 0.2]
    assert str(t.schema.field("start").type) == "timestamp[us, tz=UTC]"
    assert "losses/value:last" not in t.column_names
    points = tally.read(tmp_path, "charts/*").to_pandas()
    for row in t.to_pylist():
        p = points[points.run == row["run"]].sort_values("step")
        v = p.value.to_numpy()
        assert row["charts/episodic_return:count"] == len(v)
        assert row["charts/episodic_return:last"] == pytest.approx(v[-1])
        assert row["charts/episodic_return:max"] == pytest.approx(v.max())
        assert row["charts/episodic_return:max_step"] == int(p.step.iloc[v.argmax()])
        # The last 10 % of the step range 0..190: steps >= 171.
        tail = p[p.step >= 190 - 0.1 * 190].value
        assert row["charts/episodic_return:final_mean"] == pytest.approx(tail.mean())
        assert row["last_step"] == 190 and row["points"] == 40


def test_a_nan_is_counted_and_left_out_of_min_max_and_the_final_mean(tmp_path):
    sweep(tmp_path, lrs=(0.1,), seeds=(1,))
    (row,) = tally.runs(tmp_path, tags=["losses/*"]).to_pylist()
    assert row["losses/value:nonfinite"] == 1
    assert row["losses/value:max"] == pytest.approx(1.0)
    assert row["losses/value:min"] == pytest.approx(1.0 / 191)
    acc = event_accumulator.EventAccumulator(str(tmp_path / "lr0.1_s1"))
    acc.Reload()
    values = [e.value for e in acc.Scalars("losses/value")]
    assert row["losses/value:count"] == len(values)
    assert math.isnan(values[5])


def test_the_logger_s_status_and_a_tensorboardx_run_without_one(tmp_path):
    with tally.Logger(algo="ppo", task="t", sim="s", max_iterations=3, num_envs=2,
                      log_dir=tmp_path / "tally_run", panel="off") as log:
        for i in range(3):
            log.step(i, metrics={"Loss/value": float(i)})
    tbx = pytest.importorskip("tensorboardX")
    w = tbx.SummaryWriter(str(tmp_path / "tbx_run"))
    w.add_scalar("x", 1.0, 5)
    w.close()
    t = {r["run"]: r for r in tally.runs(tmp_path, "Loss/*").to_pylist()}
    assert t["tally_run"]["status"] == "completed"
    assert t["tally_run"]["config.run.algo"] == "ppo"
    assert t["tally_run"]["Loss/value:last"] == 2.0
    assert t["tbx_run"]["status"] is None and t["tbx_run"]["last_step"] == 5


def test_an_unreadable_run_is_skipped_with_a_warning_and_a_bad_config_names_the_file(tmp_path):
    sweep(tmp_path, lrs=(0.1,), seeds=(1, 2))
    (tmp_path / "lr0.1_s2" / "run_config.json").write_text(json.dumps({"a": {"b": 1}, "a.b": 2}))
    # The run is refused, named with its file and key, and the others are listed.
    with pytest.warns(tally.UnreadableRunWarning, match="run_config.json: key 'a.b' appears both nested"):
        t = tally.runs(tmp_path)
    assert t.column("run").to_pylist() == ["lr0.1_s1"]
    bad = tmp_path / "lr0.1_s2" / "run_config.json"
    bad.write_text("{}")
    f = next((tmp_path / "lr0.1_s1").glob("events.out.tfevents.*"))
    data = bytearray(f.read_bytes())
    data[60] ^= 0xFF  # a corrupt record in the middle
    f.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = tally.runs(tmp_path)
    assert t.column("run").to_pylist() == ["lr0.1_s2"]
    assert any(issubclass(w.category, tally.UnreadableRunWarning) and "lr0.1_s1" in str(w.message) for w in caught)


def test_another_writers_hparams_are_the_runs_configuration(tmp_path):
    # tensorboardX's add_hparams writes the hparams plugin's session start and the metrics into
    # a sub-directory of its own: that run's configuration is what it recorded.
    tbx = pytest.importorskip("tensorboardX")
    for lr in (0.1, 0.3):
        w = tbx.SummaryWriter(str(tmp_path / f"lr{lr}"))
        w.add_hparams({"lr": lr, "opt": "adam", "nesterov": True}, {"hparam/return": 10 * lr}, name="hp")
        w.close()
    t = tally.runs(tmp_path, tags="hparam/*")
    rows = {r["run"]: r for r in t.to_pylist()}
    hp = rows["lr0.3/hp"]
    assert (hp["config.hparams.lr"], hp["config.hparams.opt"], hp["config.hparams.nesterov"]) == (0.3, "adam", True)
    assert hp["hparam/return:last"] == pytest.approx(3.0)
    best = tally.compare(tmp_path, "hparam/return", by="hparams.lr", reps=10).to_pylist()
    assert [g["hparams.lr"] for g in best] == [0.3, 0.1]
    runs = tally.read_runs(tmp_path, config=True, tags="hparam/*")
    assert set(runs.column("config.hparams.opt").to_pylist()) == {"adam"}


def test_each_row_says_what_the_default_health_rules_found_as_tally_health_does(tmp_path):
    # docs/contract/consumers.md "The runs table": `findings` and `health`.
    import subprocess
    import sys

    sweep(tmp_path, lrs=(0.1,), seeds=(1, 2))
    with tally.SummaryWriter(tmp_path / "sick") as w:
        for step in range(100):
            w.add_scalar("train/value_loss", float("inf") if step == 40 else 1.0 + step % 3, step)
    rows = {r["run"]: r for r in tally.runs(tmp_path).to_pylist()}
    said = json.loads(subprocess.run(
        [sys.executable, "-m", "tally", "health", "--json", str(tmp_path)],
        capture_output=True, text=True).stdout)
    for run in said["runs"]:
        found = run["findings"]
        row = rows[run["run"]]
        assert row["findings"] == len(found), (row, found)
        each = (" ".join(filter(None, [f["rule"], f["tag"]])) + f"@{f['first_step']}" for f in found)
        expected = "; ".join(each) or None
        assert row["health"] == expected
    assert rows["sick"]["health"] == "nonfinite train/value_loss@40"
    assert str(tally.runs(tmp_path).schema.field("findings").type) == "int64"
