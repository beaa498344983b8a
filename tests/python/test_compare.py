"""tally.compare: seed statistics (docs/contract/consumers.md "Comparing runs"), checked against
a reference computation in numpy: the same resamples (numpy's RandomState stream), the mean and
interquartile mean of each, numpy's percentile; scipy's trim_mean when scipy is installed."""

import numpy as np
import pytest

import tally


def sweep(root, finals):
    """One run per (lr, seed) whose `ret` climbs to `finals[lr][seed]` over steps 0..100."""
    for lr, per_seed in finals.items():
        for seed, final in enumerate(per_seed):
            with tally.SummaryWriter(root / f"lr{lr}_s{seed}", config={"lr": lr, "seed": seed}) as w:
                for step in range(0, 101, 10):
                    w.add_scalar("ret", final * step / 100, step)


def reference(scores, stat, reps, seed):
    """rliable's one-task percentile bootstrap: RandomState(seed).randint(n, size=n) per resample."""
    rs = np.random.RandomState(seed)
    x = np.asarray(scores)
    stats = np.array([stat(x[rs.randint(len(x), size=len(x))]) for _ in range(reps)])
    return stat(x), np.percentile(stats, 2.5), np.percentile(stats, 97.5)


def trim_mean(x):
    x = np.sort(np.asarray(x))
    cut = int(0.25 * len(x))
    return np.mean(x[cut:len(x) - cut])


def test_groups_by_config_best_first_with_intervals_equal_to_the_numpy_reference(tmp_path):
    finals = {0.1: [10.0, 12.0, 11.0, 30.0, 9.0], 0.2: [20.0, 21.0, 19.0, 22.0, 5.0]}
    sweep(tmp_path, finals)
    t = tally.compare(tmp_path, "ret", by="config.lr", reps=2000, seed=3)
    assert t.column("config.lr").to_pylist() == [0.2, 0.1], "best mean first"
    for row in t.to_pylist():
        # The final 10 % of steps 0..100 is steps 90 and 100: the mean of 0.9 f and f.
        want = [0.95 * f for f in finals[row["config.lr"]]]
        assert sorted(row["scores"]) == pytest.approx(sorted(want))
        assert row["n"] == 5
        m, lo, hi = reference(row["scores"], np.mean, 2000, 3)
        assert (row["mean"], row["mean_low"], row["mean_high"]) == pytest.approx((m, lo, hi), rel=1e-12)
        q, qlo, qhi = reference(row["scores"], trim_mean, 2000, 3)
        assert (row["iqm"], row["iqm_low"], row["iqm_high"]) == pytest.approx((q, qlo, qhi), rel=1e-12)
        assert row["std"] == pytest.approx(np.std(row["scores"], ddof=1))


def test_the_iqm_is_scipys_trim_mean(tmp_path):
    scipy_stats = pytest.importorskip("scipy.stats")
    sweep(tmp_path, {0.1: [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]})
    (row,) = tally.compare(tmp_path, "ret", reps=10).to_pylist()
    assert row["iqm"] == pytest.approx(scipy_stats.trim_mean(row["scores"], 0.25))


def test_at_a_step_leaves_out_runs_that_have_not_reached_it_and_curves_are_aligned(tmp_path):
    sweep(tmp_path, {0.1: [10.0, 20.0]})
    with tally.SummaryWriter(tmp_path / "short", config={"lr": 0.1}) as w:
        for step in range(0, 51, 10):
            w.add_scalar("ret", 1.0, step)
    with pytest.warns(tally.UnreadableRunWarning, match="short: not scored"):
        t = tally.compare(tmp_path, "ret", by=["lr"], at=70, reps=100)
    (row,) = t.to_pylist()
    assert sorted(row["scores"]) == pytest.approx([7.0, 14.0])
    curve = row["curve"]
    assert curve[0]["step"] == 0 and curve[-1]["step"] == 100
    assert curve[-1]["mean"] == pytest.approx(15.0) and curve[-1]["n"] == 2
    auc = tally.compare(tmp_path, "ret", at="auc", reps=100).to_pylist()
    assert auc[0]["n"] == 3  # one group: everything


def test_bad_arguments_are_refused_naming_them(tmp_path):
    sweep(tmp_path, {0.1: [1.0]})
    with pytest.raises(ValueError, match="at=\"last\""):
        tally.compare(tmp_path, "ret", at="last")
    with pytest.raises(ValueError, match="reps=0"):
        tally.compare(tmp_path, "ret", reps=0)


def test_curves_carry_the_iqm_with_its_band_equal_to_the_numpy_reference(tmp_path):
    # Four seeds, one far off, so the IQM (a run cut at each end) differs from the mean.
    sweep(tmp_path, {0.1: [10.0, 11.0, 12.0, 90.0]})
    (row,) = tally.compare(tmp_path, "ret", reps=2000, seed=5, curve_points=11).to_pylist()
    at = {p["step"]: p for p in row["curve"]}[50]
    values = [f * 50 / 100 for f in (10.0, 11.0, 12.0, 90.0)]
    # The curve's band takes 2 000 resamples (consumers.md "Comparing runs"), the mean's and the
    # IQM's on the same draws.
    m, lo, hi = reference(values, np.mean, 2000, 5)
    assert (at["mean"], at["low"], at["high"]) == pytest.approx((m, lo, hi), rel=1e-12)
    q, qlo, qhi = reference(values, trim_mean, 2000, 5)
    assert (at["iqm"], at["iqm_low"], at["iqm_high"]) == pytest.approx((q, qlo, qhi), rel=1e-12)
    assert at["iqm"] == pytest.approx(np.mean(values[1:3])) and at["iqm"] < at["mean"]


def test_compare_warns_of_the_damage_tally_read_warns_of_and_a_group_of_one_has_no_interval(tmp_path):
    sweep(tmp_path, {0.1: [10.0, 12.0], 0.2: [20.0]})
    (event_file,) = (tmp_path / "lr0.1_s0").glob("events.out.tfevents.*")
    with open(event_file, "ab") as f:
        f.write(b"\x40\x00\x00\x00\x00\x00\x00\x00\x01\x02")  # a writer killed mid-record
    with pytest.warns(tally.TruncatedEventFileWarning) as read_said:
        tally.read(tmp_path)
    with pytest.warns(tally.TruncatedEventFileWarning) as compare_said:
        rows = tally.compare(tmp_path, "ret", by="config.lr", reps=100).to_pylist()
    assert [str(w.message) for w in compare_said if w.category is tally.TruncatedEventFileWarning] == [
        str(w.message) for w in read_said if w.category is tally.TruncatedEventFileWarning
    ]
    one = next(r for r in rows if r["n"] == 1)
    assert one["mean"] == pytest.approx(19.0)
    assert (one["mean_low"], one["mean_high"], one["iqm_low"], one["iqm_high"]) == (None, None, None, None)
    two = next(r for r in rows if r["n"] == 2)
    assert two["mean_low"] < two["mean"] < two["mean_high"]


def test_a_metric_no_run_has_is_an_error_naming_it(tmp_path):
    sweep(tmp_path, {0.1: [1.0]})
    with pytest.raises(tally.StorageError, match='"rte"'):
        tally.compare(tmp_path, "rte")
