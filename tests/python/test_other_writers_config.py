"""A run's configuration whoever wrote it (docs/contract/consumers.md "A run's configuration"):
runs written by tensorboardX (the real client, not tally's writer) in each writer's shape, then
grouped by their learning rate with tally.compare and listed by tally.runs.

torch is not installed here; torch's `SummaryWriter.add_hparams` writes the layout tensorboardX's
does (the hparams summaries and the metric values in a new directory named by `time.time()`
below the run), so the torch-shaped runs are written with tensorboardX's `add_hparams`."""

import warnings

import pytest

import tally

tensorboardX = pytest.importorskip("tensorboardX")
from tensorboardX.summary import hparams  # noqa: E402

METRIC = "charts/episodic_return"
# Two learning rates, two seeds each; each run's return climbs to `final` over steps 0..100.
SWEEP = [(0.001, 0, 10.0), (0.001, 1, 12.0), (0.01, 0, 20.0), (0.01, 1, 24.0)]


def curve(w, final):
    for step in range(0, 101, 10):
        w.add_scalar(METRIC, final * step / 100, step)


def torch_shaped(root, lr, seed, final):
    """add_hparams after training: hparams and metric in a timestamped directory below the run."""
    with tensorboardX.SummaryWriter(str(root / f"run_lr{lr}_s{seed}")) as w:
        curve(w, final)
        w.add_hparams({"lr": lr, "seed": seed}, {"hparam/return": final})


def tensorboardx_shaped(root, lr, seed, final):
    """The hparams plugin's summaries written into the run's own event file."""
    with tensorboardX.SummaryWriter(str(root / f"run_lr{lr}_s{seed}")) as w:
        for s in hparams({"lr": lr, "seed": seed}, {METRIC: final}):
            w.file_writer.add_summary(s)
        curve(w, final)


def cleanrl_shaped(root, lr, seed, final):
    """CleanRL: its arguments as a |param|value| text table, then the curve."""
    with tensorboardX.SummaryWriter(str(root / f"CartPole-v1__ppo__{seed}__{int(lr * 1e4)}")) as w:
        args = {"learning_rate": lr, "seed": seed, "env_id": "CartPole-v1", "cuda": True}
        w.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in args.items()))
        curve(w, final)


def path_shaped(root, lr, seed, final):
    """A sweep whose folders name its settings (`lr=0.001/seed=1`)."""
    with tensorboardX.SummaryWriter(str(root / f"lr={lr}" / f"seed={seed}")) as w:
        curve(w, final)


@pytest.mark.parametrize(
    "write, by",
    [
        (torch_shaped, "hparams.lr"),
        (tensorboardx_shaped, "hparams.lr"),
        (cleanrl_shaped, "config.learning_rate"),
        (path_shaped, "path.lr"),
    ],
)
def test_runs_of_every_writer_group_by_their_learning_rate(tmp_path, write, by):
    for lr, seed, final in SWEEP:
        write(tmp_path, lr, seed, final)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no run skipped, none unscored, no key absent
        t = tally.compare(tmp_path, METRIC, by=by, reps=200)
    rows = t.to_pylist()
    assert [r[by] for r in rows] == [0.01, 0.001], "best mean first, one group per rate"
    for r in rows:
        finals = [f for lr, _, f in SWEEP if lr == r[by]]
        # The final 10 % of steps 0..100: steps 90 and 100, the mean of 0.9 f and f.
        assert sorted(r["scores"]) == pytest.approx(sorted(0.95 * f for f in finals))
        assert r["n"] == 2

    # The runs table: one row per run holding the curve (add_hparams' directory is no run of
    # its own), each with its configuration.
    table = tally.runs(tmp_path, tags=[METRIC]).to_pylist()
    assert len(table) == len(SWEEP), [r["run"] for r in table]
    assert all(r[f"{METRIC}:count"] == 11 for r in table)
    assert sorted(r[f"config.{by}"] for r in table) == sorted(lr for lr, _, _ in SWEEP)


def test_torch_shaped_hparams_belong_to_the_run_above_in_every_reader(tmp_path):
    torch_shaped(tmp_path, 0.001, 0, 10.0)
    (session,) = [d for d in (tmp_path / "run_lr0.001_s0").iterdir() if d.is_dir()]
    float(session.name)  # named by the time, as torch and tensorboardX name it
    (row,) = tally.runs(tmp_path).to_pylist()
    assert row["run"] == "run_lr0.001_s0" and row["config.hparams.lr"] == 0.001
    runs = set(tally.read(tmp_path).column("run").to_pylist())
    assert runs == {"run_lr0.001_s0"}
    # Given by itself, the session's directory is read as what it holds.
    assert tally.runs(session, tags=["hparam/return"]).to_pylist()[0]["hparam/return:last"] == 10.0


def test_a_by_key_no_run_has_is_said_not_pooled_silently(tmp_path):
    for lr, seed, final in SWEEP:
        path_shaped(tmp_path, lr, seed, final)
    with pytest.warns(UserWarning, match='no run has configuration key "config.lr"'):
        t = tally.compare(tmp_path, METRIC, by="config.lr", reps=50)
    (row,) = t.to_pylist()
    assert row["n"] == len(SWEEP)
