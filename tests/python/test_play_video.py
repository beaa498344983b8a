"""The playback video: `play_video.mp4` in the run directory reaches W&B at close without a
`log_video()` call, exactly once per file (an explicit `log_video`, a resumed run and `tally
sync` do not upload it again), and `run_summary.json` names it either way; without W&B,
`log_video` says that it only recorded the path (docs/contract/remote-sinks.md "The playback
video").

The fixture `fixtures/play_video.mp4` is a real 10-frame 32x32 H.264 MP4 (2 KB), written once
with imageio-ffmpeg 0.8.1 (libx264, yuv420p); W&B is read back from its offline run files."""

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import tally

wandb = pytest.importorskip("wandb")
from test_wandb import history_rows, offline, train, wandb_file, wandb_records  # noqa: E402,F401 - offline: autouse fixture

VIDEO = Path(__file__).parent / "fixtures" / "play_video.mp4"


def uploads(run_dir):
    """(key, size) of every video W&B received, over every W&B run file of the run directory."""
    out = []
    for f in sorted((Path(run_dir) / "wandb").rglob("run-*.wandb")):
        wandb_file(f.parent)
        for row in history_rows(f):
            for k, v in row.items():
                if k.endswith("/_type") and v == "video-file":
                    key = k[: -len("/_type")]
                    out.append((key, row[f"{key}/size"]))
    return out


def summary(run_dir):
    return json.loads((Path(run_dir) / "run_summary.json").read_text())


def logger(tmp_path, backend="wandb", **kw):
    return tally.Logger(algo="sac", task="go2", sim="mujoco", max_iterations=6, num_envs=8,
                        log_dir=tmp_path / "run", logger=backend, panel="off", **kw)


def test_the_fixture_is_a_real_mp4():
    data = VIDEO.read_bytes()
    assert data[4:8] == b"ftyp" and b"avc1" in data[:64] and b"moov" in data and b"mdat" in data


def test_a_play_video_in_the_run_directory_is_uploaded_at_close(tmp_path):
    with logger(tmp_path) as log:
        train(log, 3)
        shutil.copy(VIDEO, log.run_dir / "play_video.mp4")
    assert uploads(log.run_dir) == [("media/play_video", VIDEO.stat().st_size)]
    assert summary(log.run_dir)["play_video_path"] == str(log.run_dir / "play_video.mp4")
    # The metrics rows are all there, the video joined the last one instead of adding a row.
    assert [r["tally/step"] for r in history_rows(wandb_file(log.run_dir / "wandb"))] == [512, 1024, 1536]


def test_a_video_logged_explicitly_is_not_uploaded_again_at_close(tmp_path):
    with logger(tmp_path) as log:
        train(log, 2)
        shutil.copy(VIDEO, log.run_dir / "play_video.mp4")
        assert log.log_video(log.run_dir / "play_video.mp4") is True
    assert uploads(log.run_dir) == [("media/play_video", VIDEO.stat().st_size)]


def test_another_explicit_video_keeps_its_path_and_the_run_video_is_still_uploaded(tmp_path):
    other = tmp_path / "eval.mp4"
    shutil.copy(VIDEO, other)
    with logger(tmp_path) as log:
        train(log, 2)
        shutil.copy(VIDEO, log.run_dir / "play_video.mp4")
        assert log.log_video(other, key="media/eval_video") is True
    assert sorted(uploads(log.run_dir)) == [("media/eval_video", VIDEO.stat().st_size),
                                            ("media/play_video", VIDEO.stat().st_size)]
    # The explicit call named the run's video: close does not replace it.
    assert summary(log.run_dir)["play_video_path"] == str(other)


def test_a_resumed_run_does_not_upload_the_same_video_again(tmp_path):
    with logger(tmp_path) as log:
        train(log, 2)
        shutil.copy(VIDEO, log.run_dir / "play_video.mp4")
    with logger(tmp_path, resume=True) as log:
        log.step(3, env_steps=512 * 3, metrics={"Loss/critic": 0.3})
    assert len(list((log.run_dir / "wandb").rglob("run-*.wandb"))) == 2
    assert uploads(log.run_dir) == [("media/play_video", VIDEO.stat().st_size)]
    assert summary(log.run_dir)["play_video_path"] == str(log.run_dir / "play_video.mp4")


def test_a_video_replaced_since_its_upload_is_uploaded_again(tmp_path):
    with logger(tmp_path) as log:
        train(log, 2)
        shutil.copy(VIDEO, log.run_dir / "play_video.mp4")
    # Another playback recorded over the first: same path, a later modification time.
    st = (log.run_dir / "play_video.mp4").stat()
    os.utime(log.run_dir / "play_video.mp4", ns=(st.st_atime_ns, st.st_mtime_ns + 10**10))
    with logger(tmp_path, resume=True) as log:
        log.step(3, env_steps=512 * 3, metrics={"Loss/critic": 0.3})
    assert uploads(log.run_dir) == [("media/play_video", VIDEO.stat().st_size)] * 2


def test_an_unreadable_upload_record_is_named_and_the_video_uploaded_again(tmp_path, capfd):
    with logger(tmp_path) as log:
        train(log, 2)
        shutil.copy(VIDEO, log.run_dir / "play_video.mp4")
    record = log.run_dir / ".tally" / "wandb.videos.json"
    assert str((log.run_dir / "play_video.mp4").resolve()) in json.loads(record.read_text())
    record.write_text("{not json")
    with logger(tmp_path, resume=True) as log:
        log.step(3, env_steps=512 * 3, metrics={"Loss/critic": 0.3})
    assert f"{record} is unreadable" in capfd.readouterr().err
    # Uploading twice loses nothing; skipping on a guess could lose the video.
    assert uploads(log.run_dir) == [("media/play_video", VIDEO.stat().st_size)] * 2


def test_a_summary_writer_uploads_the_play_video_of_its_log_dir(tmp_path):
    w = tally.SummaryWriter(tmp_path / "tb", wandb={"project": "tally-test"})
    for i in range(3):
        w.add_scalar("loss", 1.0 / (i + 1), i)
    shutil.copy(VIDEO, tmp_path / "tb" / "play_video.mp4")
    w.close()
    assert uploads(tmp_path / "tb") == [("media/play_video", VIDEO.stat().st_size)]


def test_sync_uploads_the_video_of_a_tensorboard_run_once(tmp_path):
    with logger(tmp_path, backend="tensorboard") as log:
        train(log, 2)
        shutil.copy(VIDEO, log.run_dir / "play_video.mp4")
    assert summary(log.run_dir)["play_video_path"] == str(log.run_dir / "play_video.mp4")
    for extra in ([], ["--resume"]):
        proc = subprocess.run([sys.executable, "-m", "tally", "sync", str(log.run_dir), "--to", "wandb", *extra],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    assert uploads(log.run_dir) == [("media/play_video", VIDEO.stat().st_size)]


def test_without_wandb_log_video_says_once_that_it_only_recorded_the_path(tmp_path):
    with logger(tmp_path, backend="tensorboard") as log:
        train(log, 1)
        with pytest.warns(UserWarning) as caught:
            assert log.log_video(VIDEO) is True
        [w] = caught
        text = str(w.message)
        assert str(VIDEO) in text and "run_summary.json" in text and "not uploaded" in text, text
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert log.log_video(VIDEO) is True  # once per run
            assert log.log_video(tmp_path / "missing.mp4") is False
    assert summary(log.run_dir)["play_video_path"] == str(VIDEO)
    assert not (log.run_dir / "wandb").exists()
    # A second run says it again.
    with tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run2", panel="off") as log2:
        with pytest.warns(UserWarning, match="not uploaded"):
            log2.log_video(VIDEO)


def test_a_run_without_a_video_uploads_none(tmp_path):
    # Also guards `uploads`, which the assertions above rely on.
    with logger(tmp_path) as log:
        train(log, 1)
    assert uploads(log.run_dir) == []
    assert any(r.WhichOneof("record_type") == "exit" for r in wandb_records(wandb_file(log.run_dir / "wandb")))
