"""`tally sync RUN_DIR --to wandb` (docs/contract/remote-sinks.md "tally sync"): any run's event
files reach W&B exactly once, in step order, as the history of an offline W&B run read back
from its `.wandb` file and compared with what TensorBoard's own reader finds in the files."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator

import tally

wandb = pytest.importorskip("wandb")
from test_wandb import history_rows, wandb_file, wandb_records  # noqa: E402


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb-default"))


def sync(*args, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "tally", "sync", *map(str, args)],
        capture_output=True, text=True, timeout=timeout, env=dict(os.environ),
    )


def event_points(run_dir):
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return {(tag, e.step): e.value for tag in acc.Tags()["scalars"] for e in acc.Scalars(tag)}


def sent_points(rows):
    return {(k, r["tally/step"]): v for r in rows for k, v in r.items() if not k.startswith(("_", "tally/"))}


def tensorboardx_run(run_dir):
    from tensorboardX import SummaryWriter

    w = SummaryWriter(logdir=str(run_dir))
    rows = []
    for step in range(0, 2000, 100):
        w.add_scalar("train/loss", 1.0 / (step + 1), step)
        w.add_scalar("train/reward", step * 0.01, step)
        rows.append(step)
        if step % 500 == 0 and step > 0:
            # An eval series on a step that goes back (its own axis), written as its own event.
            w.add_scalar("eval/return", step * 0.1 + 0.5, step // 2)
            rows.append(step // 2)
    w.close()
    return rows


def test_sync_of_a_tensorboardx_run_gives_wandb_history_equal_to_the_event_file(tmp_path):
    run_dir = tmp_path / "tbx"
    written = tensorboardx_run(run_dir)
    proc = sync(run_dir, "--to", "wandb", "--project", "tally-sync-test")
    assert proc.returncode == 0, proc.stderr
    rows = history_rows(wandb_file(run_dir / "wandb"))
    # Every row once, in the file's order, the eval rows whose step went back included.
    assert [r["tally/step"] for r in rows] == written
    assert [r["_step"] for r in rows] == list(range(len(written)))
    points = event_points(run_dir)
    assert set(sent_points(rows)) == set(points)
    assert all(float(np.float32(v)) == points[k] for k, v in sent_points(rows).items())
    # One row per step: the two train tags of a step arrive together.
    assert len(rows) == 20 + 3 and all("train/reward" in r for r in rows if "train/loss" in r)
    run = next(r.run for r in wandb_records(wandb_file(run_dir / "wandb")) if r.WhichOneof("record_type") == "run")
    assert run.project == "tally-sync-test" and run.display_name == "tbx"
    # Every metric is declared to plot against tally/step (docs/contract/remote-sinks.md "Axes").
    metrics = [r.metric for r in wandb_records(wandb_file(run_dir / "wandb")) if r.WhichOneof("record_type") == "metric"]
    assert any(m.glob_name == "*" and m.step_metric == "tally/step" for m in metrics), metrics


def test_sync_of_a_tally_run_gives_wandb_history_equal_to_the_event_file_and_runs_once(tmp_path):
    with tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", max_iterations=50) as log:
        for i in range(1, 51):
            log.step(i, env_steps=256 * i, metrics={"Loss/critic": 1.0 / i, "Loss/actor": -0.01 * i},
                     rewards={"alive": 0.25 * i}, iteration_time=0.01, steps_this_iter=256)
    proc = sync(log.run_dir, "--to", "wandb", "--progress", "always")
    assert proc.returncode == 0, proc.stderr
    assert f"{log.run_dir}: sent 50 rows to wandb (through step 12800)" in proc.stdout
    assert f"sync {log.run_dir}: 50/50 rows (100%), step 12800" in proc.stderr
    path = wandb_file(log.run_dir / "wandb")
    rows = history_rows(path)
    assert [r["tally/step"] for r in rows] == [256 * i for i in range(1, 51)]
    points = event_points(log.run_dir)
    assert set(sent_points(rows)) == set(points)
    assert all(float(np.float32(v)) == points[k] for k, v in sent_points(rows).items())
    assert [r["Train/iteration"] for r in rows] == list(range(1, 51))
    # The W&B run is named as the logger would have named it, and holds the final summary.
    run = next(r.run for r in wandb_records(path) if r.WhichOneof("record_type") == "run")
    assert run.display_name == f"sac__go2__{log.run_dir.name}"
    # A second sync has nothing to send, and opens no W&B run.
    again = sync(log.run_dir, "--to", "wandb")
    assert again.returncode == 0, again.stderr
    assert "nothing to send to wandb" in again.stdout and "50 rows were sent before" in again.stdout
    assert len(list((log.run_dir / "wandb").rglob("run-*.wandb"))) == 1


def test_dry_run_prints_what_would_be_sent_and_sends_nothing(tmp_path):
    run_dir = tmp_path / "tbx"
    tensorboardx_run(run_dir)
    proc = sync(run_dir, "--to", "wandb", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert f"{run_dir}: would send 23 rows to wandb, steps 0 to 1900, 3 tags: eval/return, train/loss, train/reward" in proc.stdout
    assert not (run_dir / "wandb").exists() and not (run_dir / ".tally").exists()


def test_resume_refuses_a_run_that_was_never_sent(tmp_path):
    run_dir = tmp_path / "tbx"
    tensorboardx_run(run_dir)
    proc = sync(run_dir, "--to", "wandb", "--resume")
    assert proc.returncode == 1
    assert "--resume: nothing of this run was sent to wandb before" in proc.stderr
    assert not (run_dir / "wandb").exists()


def test_a_directory_without_event_files_is_refused_naming_it(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = sync(tmp_path / "empty", "--to", "wandb")
    assert proc.returncode == 1
    assert f"{tmp_path / 'empty'}: no events.out.tfevents.* file" in proc.stderr


def test_the_rust_binary_explains_why_it_cannot_send_and_still_dry_runs(tmp_path, tally_bin):
    run_dir = tmp_path / "tbx"
    tensorboardx_run(run_dir)
    root = Path(__file__).resolve().parents[2]
    cargo = [str(tally_bin), "sync", str(run_dir), "--to", "wandb"]
    proc = subprocess.run(cargo, cwd=root, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1 and "needs the W&B Python SDK" in proc.stderr and "python -m tally sync" in proc.stderr
    proc = subprocess.run(cargo + ["--dry-run"], cwd=root, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert "would send 23 rows" in proc.stdout


def test_several_runs_in_one_command_each_go_to_their_own_wandb_run(tmp_path):
    written = {name: tensorboardx_run(tmp_path / name) for name in ("a", "b")}
    proc = sync(tmp_path / "a", tmp_path / "b", "--to", "wandb")
    assert proc.returncode == 0, proc.stderr
    for name, steps in written.items():
        assert f"{tmp_path / name}: sent {len(steps)} rows to wandb" in proc.stdout
        assert [r["tally/step"] for r in history_rows(wandb_file(tmp_path / name / "wandb"))] == steps
