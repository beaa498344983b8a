"""tally.SummaryWriter as a drop-in for torch's scalar API: same files and tags as
tensorboardX's SummaryWriter (torch's twin), one event per step, readable by EventAccumulator
and tbparse, mirrored to W&B (offline) when configured."""

import os
from pathlib import Path

import numpy as np
import pytest
from tbparse import SummaryReader
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto import event_pb2

import tally


def events_with_values(path):
    """[(step, {tag: value})] of the events of one event file that carry scalars."""
    out = []
    for raw in RawEventFileLoader(str(path)).Load():
        e = event_pb2.Event.FromString(raw)
        if e.HasField("summary"):
            out.append((e.step, {v.tag: v.simple_value for v in e.summary.value}))
    return out


def only_event_file(d):
    files = sorted(Path(d).glob("events.out.tfevents.*"))
    assert len(files) == 1, files
    return files[0]


def scalars(d):
    acc = event_accumulator.EventAccumulator(str(d), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return {(t, e.step): e.value for t in acc.Tags()["scalars"] for e in acc.Scalars(t)}


def f32(x):
    return float(np.float32(x))


def test_same_step_scalars_become_one_event_and_a_step_change_starts_another(tmp_path):
    with tally.SummaryWriter(tmp_path / "run") as w:
        for step in (1, 2, 3):
            w.add_scalar("Loss/critic", 0.5 * step, step)
            w.add_scalar("Loss/actor", -1.0 * step, step)
            w.add_scalar("Policy/mean_std", np.float32(0.25), step)
    events = events_with_values(only_event_file(tmp_path / "run"))
    assert [s for s, _ in events] == [1, 2, 3]
    assert events[1][1] == {"Loss/critic": 1.0, "Loss/actor": -2.0, "Policy/mean_std": 0.25}


def test_interleaved_steps_like_rsl_rl_stay_separate_events(tmp_path):
    with tally.SummaryWriter(tmp_path / "run") as w:
        for step in (1, 1001, 2, 1002):
            w.add_scalar("Train/mean_reward", float(step), step)
    assert [s for s, _ in events_with_values(only_event_file(tmp_path / "run"))] == [1, 1001, 2, 1002]


def test_a_tag_repeated_within_a_step_keeps_both_writes(tmp_path):
    with tally.SummaryWriter(tmp_path / "run") as w:
        w.add_scalar("a", 1.0, 5)
        w.add_scalar("a", 2.0, 5)
    assert events_with_values(only_event_file(tmp_path / "run")) == [(5, {"a": 1.0}), (5, {"a": 2.0})]


def test_values_match_tensorboardx_and_add_scalars_uses_torchs_directories(tmp_path):
    from tensorboardX import SummaryWriter as TBX

    def calls(w):
        for step in range(0, 30, 3):
            w.add_scalar("Loss/critic", 1.0 / (step + 1), step)
            w.add_scalar("Perf/total_fps", 1000.0 + step, step, walltime=1_700_000_000.0 + step)
            w.add_scalars("Returns", {"train": float(step), "eval": -float(step)}, step)
        w.close()

    calls(tally.SummaryWriter(tmp_path / "tally"))
    calls(TBX(str(tmp_path / "tbx")))
    # add_scalars sub-writers: torch names them <main_tag>_<tag>, tensorboardX <main_tag>/<tag>.
    for ours, theirs in (("", ""), ("Returns_train", "Returns/train"), ("Returns_eval", "Returns/eval")):
        assert os.path.isdir(tmp_path / "tally" / ours) and os.path.isdir(tmp_path / "tbx" / theirs)
        assert scalars(tmp_path / "tally" / ours) == scalars(tmp_path / "tbx" / theirs), ours
    df = SummaryReader(str(tmp_path / "tally"), extra_columns={"dir_name"}).scalars
    assert set(zip(df.dir_name, df.tag)) == {("", "Loss/critic"), ("", "Perf/total_fps"), ("Returns_train", "Returns"), ("Returns_eval", "Returns")}
    wall = {e.step: e.wall_time for e in event_accumulator.EventAccumulator(str(tmp_path / "tally")).Reload().Scalars("Perf/total_fps")}
    assert wall[3] == 1_700_000_003.0


def test_log_dir_default_and_context_manager_like_torch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = tally.SummaryWriter(comment="_sac")
    assert w.log_dir.startswith("runs" + os.sep) and w.log_dir.endswith("_sac")
    assert w.get_logdir() == w.log_dir
    w.add_scalar("x", 1, 0)
    w.flush()
    assert events_with_values(only_event_file(w.log_dir)) == [(0, {"x": 1.0})]
    w.close()
    w.close()
    assert w.file_writer is None


def test_a_string_value_raises_type_error_naming_the_tag(tmp_path):
    with tally.SummaryWriter(tmp_path / "run") as w:
        with pytest.raises(TypeError, match="Loss/critic"):
            w.add_scalar("Loss/critic", "0.5", 1)
        with pytest.raises(tally.ValueTypeError, match="Returns/train"):
            w.add_scalars("Returns", {"train": None}, 1)


def test_wandb_mirror_logs_each_step_batch_with_the_event_files_values(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    from test_wandb import history_rows, wandb_file

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    with tally.SummaryWriter(tmp_path / "run", wandb={"project": "tally-test"}) as w:
        assert wandb.run is not None and wandb.run.name == "run"
        for step in (10, 20, 30):
            w.add_scalar("Loss/critic", 1.0 / step, step)
            w.add_scalar("Train/mean_reward", step / 7, step)
    assert wandb.run is None
    rows = history_rows(wandb_file(tmp_path / "run"))
    # W&B's `_step` is the row's index; the event step is the row's `tally/step` axis.
    assert [r["_step"] for r in rows] == [0, 1, 2]
    assert [r["tally/step"] for r in rows] == [10, 20, 30]
    events = dict(events_with_values(only_event_file(tmp_path / "run")))
    for r in rows:
        assert {k: f32(v) for k, v in r.items() if not k.startswith(("_", "tally/"))} == events[r["tally/step"]]
