"""The W&B backend through the real wandb SDK in offline mode, read back from the run's
`.wandb` file and compared with the event file tally wrote for the same steps: W&B receives
exactly the event file's rows, each with its step as `tally/step` (docs/contract/run-artifacts.md
"W&B", docs/contract/remote-sinks.md "Axes").

wandb 0.31 ships no Python reader for its offline file (its Go service writes it), but its
protobuf messages are importable, so `wandb_records` decodes the file's framing itself. A hard
kill may leave a torn final block, which the reader tolerates."""

import json
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator

import tally

wandb = pytest.importorskip("wandb")
from wandb.proto import wandb_internal_pb2 as pb  # noqa: E402

BLOCK = 32768


def wandb_records(path):
    """Every Record of a `.wandb` file: 7-byte file header, then LevelDB-log chunks in 32 KiB
    blocks (u32 zlib CRC-32 over type+data, u16 length, u8 type; FULL/FIRST/MIDDLE/LAST)."""
    data = Path(path).read_bytes()
    assert data[:4] == b":W&B" and struct.unpack("<H", data[4:6])[0] == 0xBEE1 and data[6] == 0
    pos, parts, out = 7, [], []
    while True:
        left = BLOCK - pos % BLOCK
        if left < 7:
            pos += left  # zero padding at a block's tail
        if pos + 7 > len(data):
            break
        crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        chunk = data[pos + 7 : pos + 7 + length]
        if len(chunk) < length:
            break  # torn tail
        assert zlib.crc32(bytes([kind]) + chunk) == crc, f"bad chunk checksum at byte {pos}"
        pos += 7 + length
        if kind == 0 and length == 0:
            continue
        assert kind in (1, 2, 3, 4), f"chunk type {kind} at byte {pos}"
        parts.append(chunk)
        if kind in (1, 4):
            rec = pb.Record()
            rec.ParseFromString(b"".join(parts))
            out.append(rec)
            parts = []
    return out


def history_rows(path):
    rows = []
    for r in wandb_records(path):
        if r.WhichOneof("record_type") == "history":
            rows.append({(it.key or "/".join(it.nested_key)): json.loads(it.value_json) for it in r.history.item})
    return rows


def summary_items(path):
    out = {}
    for r in wandb_records(path):
        if r.WhichOneof("record_type") == "summary":
            for it in r.summary.update:
                out[it.key or "/".join(it.nested_key)] = json.loads(it.value_json)
    return out


def wandb_file(root, timeout=20.0):
    """The run's offline `.wandb` file, once W&B has written it through its `exit` record.

    `run.finish()` can return before W&B's service process has flushed the file (seen as a
    file still holding only its 7-byte header), so wait, bounded, for the closing record."""
    files = sorted(Path(root).rglob("run-*.wandb"))
    assert len(files) == 1, files
    deadline = time.monotonic() + timeout
    while not any(r.WhichOneof("record_type") == "exit" for r in wandb_records(files[0])):
        assert time.monotonic() < deadline, f"{files[0]}: no exit record after {timeout} s"
        time.sleep(0.05)
    return files[0]


def event_scalars(run_dir):
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return {(tag, e.step): e.value for tag in acc.Tags()["scalars"] for e in acc.Scalars(tag)}


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb-default"))
    yield
    if wandb.run is not None:
        wandb.run.finish()


def train(log, n=6):
    for i in range(1, n + 1):
        log.step(
            i,
            env_steps=512 * i,
            metrics={"Loss/critic": 1.0 / i, "Loss/actor": -0.1 * i, "Episode_Termination/time_out": float(i % 3)},
            learner={"learning": 0.002 * i, "collector_wait": 0.0005},
            rewards={"tracking": 0.3 * i},
            iteration_time=0.01,
            steps_this_iter=512,
            episode_return=float(i),
        )


def test_offline_history_rows_equal_the_event_file_values(tmp_path):
    sink = tally.WandbSink({"project": "tally-test"})
    with tally.Logger(algo="sac", task="go2", sim="mujoco", max_iterations=6, num_envs=8, log_root=tmp_path, sinks=[sink]) as log:
        train(log)
        run = wandb.run
        assert run is sink.run
    assert wandb.run is None  # tally started the run, so tally finished it
    events = event_scalars(log.run_dir)
    rows = history_rows(wandb_file(log.run_dir / "wandb"))
    assert [r["tally/step"] for r in rows] == [512 * i for i in range(1, 7)]
    assert [r["_step"] for r in rows] == list(range(6))  # W&B's own step is the row's index
    sent = {(k, r["tally/step"]): v for r in rows for k, v in r.items() if not k.startswith(("_", "tally/"))}
    assert set(sent) == set(events)
    assert all(float(np.float32(v)) == events[k] for k, v in sent.items())
    assert len(sent) == 6 * 10  # 3 metrics, 2 phases, 1 reward term, wall, return, iteration, fps


def test_logger_wandb_initialises_with_run_config_and_run_dir_and_writes_its_event_file(tmp_path):
    with tally.Logger(
        algo="sac", task="go2", sim="mujoco", max_iterations=6, num_envs=8, log_root=tmp_path, logger="wandb",
        config={"lr": 0.001}, wandb={"project": "tally-test", "tags": ["nightly"], "notes": "ci"},
    ) as log:
        run = wandb.run
        assert run.project == "tally-test"
        assert run.name == f"sac__go2__{log.run_dir.name}"
        assert run.group == "go2" and run.job_type == "sac"
        assert {"nightly", "sac", "go2", "mujoco"} <= set(run.tags)
        # The user's config at the top level; tally's record of the run under "tally".
        assert run.config["lr"] == 0.001 and "config" not in run.config
        assert run.config["tally"]["log_dir"] == str(log.run_dir)
        assert Path(run.dir).is_relative_to(log.run_dir)
        train(log)
    # The event file is the run's truth; W&B is fed from it (docs/contract/remote-sinks.md).
    assert log.event_file is not None and len(list(log.run_dir.glob("events.out.tfevents.*"))) == 1
    path = wandb_file(log.run_dir / "wandb")
    # W&B holds the event file's values: f32 on disk.
    assert [r["Loss/critic"] for r in history_rows(path)] == [float(np.float32(1.0 / i)) for i in range(1, 7)]
    summary = summary_items(path)
    assert summary["status"] == "completed" and summary["completed_iterations"] == 6
    doc = json.loads((log.run_dir / "run_summary.json").read_text())
    assert "wandb_run_url" in doc and doc["wandb_run_url"] is None  # offline runs have no URL


def test_an_existing_wandb_run_is_reused_and_never_finished(tmp_path):
    mine = wandb.init(project="mine", dir=str(tmp_path))
    with tally.Logger(algo="sac", task="go2", sim="mujoco", max_iterations=3, num_envs=8, log_root=tmp_path / "logs", logger="wandb") as log:
        train(log, 3)
    assert wandb.run is mine  # still open
    assert mine.config["tally"]["task"] == "go2"
    mine.log({"after": 1.0}, step=10_000)
    mine.finish()
    rows = history_rows(wandb_file(tmp_path / "wandb"))
    # The launcher's run numbers its own rows; tally's carry their step as tally/step.
    assert [r.get("tally/step") for r in rows] == [512, 1024, 1536, None]
    assert rows[-1]["_step"] == 10_000


def test_log_video_uploads_an_existing_file_and_ignores_a_missing_one(tmp_path):
    video = tmp_path / "play_video.mp4"
    video.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(64))
    with tally.Logger(algo="sac", task="go2", sim="mujoco", max_iterations=3, num_envs=8, log_root=tmp_path / "logs", logger="wandb") as log:
        train(log, 3)
        assert log.log_video(tmp_path / "missing.mp4") is False
        assert log.log_video(video) is True
    rows = history_rows(wandb_file(log.run_dir / "wandb"))
    videos = [r for r in rows if r.get("media/play_video/_type") == "video-file"]
    assert len(videos) == 1 and videos[0]["media/play_video/size"] == video.stat().st_size
    assert json.loads((log.run_dir / "run_summary.json").read_text())["play_video_path"] == str(video)


def test_python_m_tally_demo_with_training_logger_wandb(tmp_path):
    env = {k: v for k, v in __import__("os").environ.items()}
    proc = subprocess.run(
        [sys.executable, "-m", "tally", "demo", "--iterations", "20", "--num-envs", "8", "--panel", "off",
         f"training.log_root={tmp_path}", "training.logger=wandb"],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.strip().splitlines()[-1].split("run: ", 1)[1])
    rows = history_rows(wandb_file(run_dir / "wandb"))
    assert len(rows) == 20 and all("Perf/total_fps" in r for r in rows)
    assert summary_items(wandb_file(run_dir / "wandb"))["status"] == "completed"


def test_a_wandb_logger_left_open_is_closed_before_the_sdk_shuts_down(tmp_path):
    code = (
        "import tally\n"
        "log = tally.Logger(algo='sac', task='go2', sim='mujoco', max_iterations=4, num_envs=8, log_root='logs', logger='wandb')\n"
        "for i in range(1, 5):\n"
        "    log.step(i, env_steps=8 * i, metrics={'Loss/critic': float(i)})\n"
        "print('RUN_DIR=' + str(log.run_dir))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    run_dir = tmp_path / proc.stdout.split("RUN_DIR=", 1)[1].splitlines()[0]
    path = wandb_file(run_dir / "wandb")
    assert [r["Loss/critic"] for r in history_rows(path)] == [1.0, 2.0, 3.0, 4.0]
    assert summary_items(path)["status"] == "completed"
    assert json.loads((run_dir / "run_summary.json").read_text())["sink_errors"] == []


def test_the_rust_binary_still_refuses_training_logger_wandb(tmp_path, tally_bin):
    proc = subprocess.run(
        [str(tally_bin), "demo", "--iterations", "2", "training.logger=wandb"],
        cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode != 0 and "python -m tally demo" in proc.stderr


def run_ids(path):
    return {r.run.run_id for r in wandb_records(path) if r.WhichOneof("record_type") == "run"}


def test_a_resumed_run_continues_the_same_wandb_run_with_its_name(tmp_path):
    run_dir = tmp_path / "run"
    kw = dict(algo="sac", task="go2", log_dir=run_dir, logger="wandb", name="ablation-7", seed=5, panel="off",
              config={"lr": 0.001}, wandb={"project": "tally-test"})
    with tally.Logger(**kw) as log:
        assert wandb.run.name == "ablation-7"
        first_id = wandb.run.id
        train(log, 3)
    assert (run_dir / "wandb_run_id").read_text().strip() == first_id
    first = wandb_file(run_dir / "wandb")
    with tally.Logger(**kw, resume=True) as log:
        assert wandb.run.id == first_id
        for i in range(4, 6):
            log.step(i, env_steps=512 * i, metrics={"Loss/critic": 1.0 / i})
    files = sorted((run_dir / "wandb").rglob("run-*.wandb"))
    assert len(files) == 2, files
    second = next(f for f in files if f != first)
    wandb_file(second.parent)  # waits for the second file's exit record
    assert run_ids(first) == run_ids(second) == {first_id}
    assert [r["tally/step"] for r in history_rows(first)] == [512, 1024, 1536]
    assert [r["tally/step"] for r in history_rows(second)] == [2048, 2560]
    # The cursor carried the row count over: the resumed W&B run continues its rows.
    assert [r["_step"] for r in history_rows(second)] == [3, 4]
    assert summary_items(second)["completed_iterations"] == 5
