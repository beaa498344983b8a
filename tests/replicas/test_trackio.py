"""The trackio replica against the real trackio in local mode (docs/contract/remote-sinks.md
"trackio"): the history read back through trackio's own local store is what the event file
holds, each row once however often it is sent; the config is run_config.json flattened; keys
trackio reserves are renamed by trackio's own rule."""

from __future__ import annotations

import json
import math
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

import tally

trackio = pytest.importorskip("trackio")
from trackio.sqlite_storage import SQLiteStorage  # noqa: E402
from trackio.utils import RESERVED_KEYS  # noqa: E402

from tally._trackio import trackio_name  # noqa: E402
from conftest import run_tally  # noqa: E402

Series = Dict[str, List[Tuple[int, float]]]


def event_series(run_dir: Path) -> Series:
    t = tally.read(run_dir).to_pydict()
    out: Series = defaultdict(list)
    for tag, step, value in zip(t["tag"], t["step"], t["value"]):
        out[trackio_name(tag, tuple(RESERVED_KEYS))].append((step, value))
    return {k: sorted(v) for k, v in out.items()}


def trackio_series(project: str, run: str) -> Series:
    out: Series = defaultdict(list)
    for row in SQLiteStorage.get_logs(project, run):
        for k, v in row.items():
            if k not in ("step", "timestamp"):
                out[k].append((row["step"], float(v)))
    return {k: sorted(v) for k, v in out.items()}


def assert_same(a: Series, b: Series) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert len(a[k]) == len(b[k]), f"{k}: {len(a[k])} points in trackio, {len(b[k])} in the event file"
        for (s1, v1), (s2, v2) in zip(a[k], b[k]):
            assert s1 == s2 and (v1 == v2 or (math.isnan(v1) and math.isnan(v2))), (k, s1, v1, s2, v2)


def steps(log: tally.Logger, first: int, last: int) -> None:
    for i in range(first, last + 1):
        log.step(i, env_steps=64 * i, metrics={"Loss/critic": 1.0 / i}, rewards={"alive": 0.5 * i})


def test_a_logger_run_reaches_trackio_whole_with_its_config(tmp_path, trackio_dir):
    log = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", config={"lr": 0.001, "gamma": 0.99},
                       trackio={"project": "replicas", "name": "whole"}, remote_finish_timeout=60)
    steps(log, 1, 600)
    log.close()
    assert_same(trackio_series("replicas", "whole"), event_series(log.run_dir))
    config = SQLiteStorage.get_run_config("replicas", "whole")
    flat = {k[len("config."):] if k.startswith("config.") else "tally." + k: v
            for k, v in json.loads(tally._tally.flat_config(log.run_dir))}
    assert {k: config[k] for k in flat} == flat
    assert config["lr"] == 0.001 and config["tally.run.algo"] == "sac"
    summary = json.loads((log.run_dir / "run_summary.json").read_text())
    assert summary["remote_sinks"] == [{"name": "trackio", "sent_through_step": 64 * 600, "pending": 0}]


def test_rows_sent_again_are_held_once_and_reserved_keys_renamed_by_trackios_rule(tmp_path, trackio_dir):
    w = tally.SummaryWriter(tmp_path / "sw", trackio={"project": "replicas", "name": "again"})
    for s in range(300):
        w.add_scalar("step", s, s)  # a key trackio reserves
        w.add_scalar("eval/mean@4", s / 300, s)
        w.add_scalar("edge", float("nan") if s == 5 else float("-inf") if s == 6 else s, s)
    w.close()
    want = event_series(tmp_path / "sw")
    assert "__step" in want and "step" not in want
    assert_same(trackio_series("replicas", "again"), want)
    # A crash between trackio's write and the cursor's: every row is sent again, none doubled.
    shutil.rmtree(tmp_path / "sw" / ".tally")
    proc = run_tally("sync", str(tmp_path / "sw"), "--to", "trackio", "--project", "replicas")
    assert proc.returncode == 0 and "sent 300 rows to trackio" in proc.stdout, proc.stdout + proc.stderr
    assert_same(trackio_series("replicas", "again"), want)


def test_tally_sync_sends_a_tensorboardx_logdir_once_however_often_it_runs(tmp_path, trackio_dir):
    from tensorboardX import SummaryWriter

    logdir = tmp_path / "tbx"
    with SummaryWriter(str(logdir)) as w:
        for s in range(250):
            w.add_scalar("train/loss", 1 / (s + 1), s)
    first = run_tally("sync", str(logdir), "--to", "trackio", "--project", "synced")
    assert first.returncode == 0 and "sent 250 rows to trackio (through step 249)" in first.stdout, first.stdout + first.stderr
    again = run_tally("sync", str(logdir), "--to", "trackio", "--project", "synced")
    assert again.returncode == 0 and "nothing to send to trackio" in again.stdout
    assert_same(trackio_series("synced", "tbx"), event_series(logdir))


def test_an_unknown_setting_is_refused_by_name_before_any_run_is_made(tmp_path):
    with pytest.raises(tally.ConfigError, match=r"trackio\['projct'\]: unknown trackio setting"):
        tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", trackio={"projct": "x"})
    assert not (tmp_path / "run").exists()


# -- add_scalars' sub-runs (docs/contract/remote-sinks.md "Sub-runs") ------------------------------

def sub_run_series(run_dir: Path) -> Series:
    """Every scalar of the run and its sub-runs, a sub-run's tag keyed `<sub-run>/<tag>`."""
    t = tally.read_runs(run_dir).to_pydict()
    out: Series = defaultdict(list)
    for run, tag, step, value in zip(t["run"], t["tag"], t["step"], t["value"]):
        out[trackio_name(tag if run == "." else f"{run}/{tag}", tuple(RESERVED_KEYS))].append((step, value))
    return {k: sorted(v) for k, v in out.items()}


def test_add_scalars_reach_trackio_as_sub_run_slash_tag_each_row_once(tmp_path, trackio_dir):
    w = tally.SummaryWriter(tmp_path / "sw", trackio={"project": "replicas", "name": "subruns"})
    for s in range(1, 201):
        w.add_scalar("lr", s / 1000, s)
        w.add_scalars("loss", {"train": 1 / s, "val": 2 / s}, s)
    w.close()
    want = sub_run_series(tmp_path / "sw")
    assert set(want) == {"lr", "loss_train/loss", "loss_val/loss"}
    assert_same(trackio_series("replicas", "subruns"), want)
    # A crash between trackio's write and the cursor's: every row of every sub-run is sent
    # again, under the same log ids, none doubled.
    shutil.rmtree(tmp_path / "sw" / ".tally")
    proc = run_tally("sync", str(tmp_path / "sw"), "--to", "trackio", "--project", "replicas")
    assert proc.returncode == 0 and "sent 600 rows to trackio" in proc.stdout, proc.stdout + proc.stderr
    assert_same(trackio_series("replicas", "subruns"), want)


def test_logger_trackio_and_the_demos_training_logger_trackio_add_the_replica(tmp_path, trackio_dir):
    log = tally.Logger(algo="sac", task="go2", name="by-logger", log_dir=tmp_path / "run", panel="off", logger="trackio",
                       remote_finish_timeout=60)
    steps(log, 1, 40)
    log.close()
    run = json.loads((log.run_dir / "run_config.json").read_text())["run"]
    assert run["logger"]["backend"] == "trackio"
    # The settings, as given (none: each the replica's default; docs/contract/run-artifacts.md).
    assert run["trackio"] == {"project": None, "name": None, "group": None} and "mlflow" not in run
    assert_same(trackio_series("tally", "by-logger"), event_series(log.run_dir))
    proc = run_tally("demo", "--algo", "ppo", "--task", "anymal", "--iterations", "6", "--num-envs", "8", "--panel", "off",
                     f"training.log_root={tmp_path}", "training.logger=trackio", "training.trackio_project=demo-proj",
                     "training.trackio_name=demo-run")
    assert proc.returncode == 0, proc.stderr
    # The demo's last line names its run (a tracker may print its own lines around it).
    (run_dir,) = [Path(line.split("run: ", 1)[1]) for line in proc.stdout.splitlines() if line.startswith("run: ")]
    assert_same(trackio_series("demo-proj", "demo-run"), event_series(run_dir))
    run = json.loads((run_dir / "run_config.json").read_text())["run"]
    assert run["trackio"] == {"project": "demo-proj", "name": "demo-run", "group": None}


def test_a_run_carries_the_group_and_metadata_trackio_init_stores(tmp_path, trackio_dir):
    # docs/contract/remote-sinks.md "trackio": what trackio.init stores for a native run (its
    # group, _Group, _Created, _Username) is in the replica's config too.
    import trackio

    trackio.init(project="native", name="own", group="g1", config={"lr": 0.001}, auto_log_gpu=False, auto_log_cpu=False)
    trackio.log({"x": 1.0})
    trackio.finish()
    native = SQLiteStorage.get_run_config("native", "own")
    log = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", config={"lr": 0.001},
                       trackio={"project": "native", "name": "ours", "group": "g1"}, remote_finish_timeout=60)
    steps(log, 1, 3)
    log.close()
    ours = SQLiteStorage.get_run_config("native", "ours")
    assert {k: v for k, v in native.items() if not k.startswith("_")} == {"lr": 0.001}
    assert ours["lr"] == native["lr"]
    assert ours["_Group"] == native["_Group"] == "g1"
    assert ours["_Username"] == native["_Username"]
    assert ours["_Created"] >= native["_Created"]
