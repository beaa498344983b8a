"""`add_scalars`' series reach W&B (docs/contract/remote-sinks.md "Sub-runs"): each sub-run
directory the writer makes (`log_dir/<main_tag>_<tag>/`) is followed with the run, its scalars
sent into the writer's W&B run as `<sub-run>/<tag>`, exactly once, from a live writer and from
`tally sync`. W&B runs offline; its files are read back as they are written."""

import os
from pathlib import Path

import pytest
from tensorboard.backend.event_processing import event_accumulator

import tally

wandb = pytest.importorskip("wandb")
from wandb.sdk.wandb_run import Run  # noqa: E402

from test_remote_sinks import sync, wait_for_exit_records, wandb_rows  # noqa: E402
from test_wandb import offline  # noqa: E402,F401 - autouse fixture


def file_points(run_dir):
    """Every (step, key, value) of the run's event files and its sub-runs', a sub-run's tag
    keyed `<sub-run path>/<tag>`, read by TensorBoard's own reader."""
    run_dir = Path(run_dir)
    points = []
    for d, dirs, files in os.walk(run_dir):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        if not any(f.startswith("events.out.tfevents.") for f in files):
            continue
        rel = Path(d).relative_to(run_dir).as_posix()
        acc = event_accumulator.EventAccumulator(d, size_guidance={event_accumulator.SCALARS: 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            key = tag if rel == "." else f"{rel}/{tag}"
            points += [(e.step, key, e.value) for e in acc.Scalars(tag)]
    return sorted(points)


def wandb_points(rows):
    """Every (tally/step, key, value) W&B holds, one per value logged."""
    return sorted((r["tally/step"], k, v) for r in rows for k, v in r.items() if not k.startswith(("_", "tally/")))


def write(w, steps):
    for step in steps:
        w.add_scalar("lr", step / 100, step)
        w.add_scalars("loss", {"train": 1.0 / step, "val": 2.0 / step}, step)
        w.add_scalars("metrics/acc", {"train": step / 50}, step)


def test_a_live_writers_add_scalars_reach_wandb_as_sub_run_slash_tag_exactly_once(tmp_path):
    with tally.SummaryWriter(tmp_path / "run", wandb={"project": "tally-test"}) as w:
        write(w, range(1, 41))
    wait_for_exit_records(w.log_dir)
    got = wandb_points(wandb_rows(w.log_dir))
    assert got == file_points(w.log_dir)
    assert len(got) == 4 * 40
    keys = {k for _, k, _ in got}
    # W&B's own TensorBoard sync names them so: the sub-run's directory, then the tag.
    assert keys == {"lr", "loss_train/loss", "loss_val/loss", "metrics_acc_train/metrics/acc"}
    assert (7, "loss_val/loss", pytest.approx(2.0 / 7)) in [(s, k, v) for s, k, v in got]


def test_rows_wandb_took_before_a_failure_are_neither_lost_nor_duplicated(tmp_path, monkeypatch):
    # The call reaches W&B and then fails (a reply lost): the follower sends the batch again
    # from its cursor under the same W&B steps, whichever sub-run the batch came from.
    original, calls = Run.log, []

    def log(self, *a, **kw):
        calls.append(kw.get("step"))
        original(self, *a, **kw)
        if len(calls) in (3, 50, 51, 90):
            raise ConnectionError("connection reset by peer")

    monkeypatch.setattr(Run, "log", log)
    with tally.SummaryWriter(tmp_path / "run", wandb={"project": "tally-test"}, remote_finish_timeout=60) as w:
        write(w, range(1, 41))
    wait_for_exit_records(w.log_dir)
    assert len(calls) > 4 * 40  # the failed batches were sent again
    assert wandb_points(wandb_rows(w.log_dir)) == file_points(w.log_dir)


def test_tally_sync_sends_a_writers_sub_runs_with_it_and_continues_from_the_cursor(tmp_path):
    w = tally.SummaryWriter(tmp_path / "run")
    write(w, range(1, 21))
    w.close()
    proc = sync(w.log_dir, "--to", "wandb", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "would send 80 rows to wandb" in proc.stdout
    assert "loss_train/loss, loss_val/loss, lr, metrics_acc_train/metrics/acc" in proc.stdout
    proc = sync(w.log_dir, "--to", "wandb")
    assert proc.returncode == 0, proc.stderr
    assert "sent 80 rows to wandb" in proc.stdout
    # A later writer of the log_dir: new files in the run and in each sub-run.
    w = tally.SummaryWriter(tmp_path / "run")
    write(w, range(21, 31))
    w.close()
    proc = sync(w.log_dir, "--to", "wandb")
    assert proc.returncode == 0, proc.stderr
    assert "sent 40 rows to wandb (through step 30); 80 were sent before" in proc.stdout, proc.stdout
    wait_for_exit_records(w.log_dir)
    assert wandb_points(wandb_rows(w.log_dir)) == file_points(w.log_dir)


def test_tally_sync_sends_tensorboardx_sub_runs_under_their_own_layout(tmp_path):
    tbx = pytest.importorskip("tensorboardX")
    w = tbx.SummaryWriter(str(tmp_path / "run"))
    for step in range(1, 11):
        w.add_scalar("lr", step / 100, step)
        w.add_scalars("loss", {"train": 1.0 / step, "val": 2.0 / step}, step)
    w.close()
    proc = sync(tmp_path / "run", "--to", "wandb")
    assert proc.returncode == 0, proc.stderr
    wait_for_exit_records(tmp_path / "run")
    got = wandb_points(wandb_rows(tmp_path / "run"))
    assert got == file_points(tmp_path / "run")
    assert {k for _, k, _ in got} == {"lr", "loss/train/loss", "loss/val/loss"}
