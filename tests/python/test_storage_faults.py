"""Storage faults through tally.Logger (docs/contract/run-artifacts.md "Storage faults"): a
file size limit (RLIMIT_FSIZE) or a full tmpfs in a child process, read back with TensorBoard's
EventAccumulator; every acknowledged step is in the file, in order, no record is torn, and
run_summary.json counts what the file holds. Plus the on_storage_error choices."""

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tensorboard.backend.event_processing import event_accumulator

import tally

STEPS = 600
SPACE_RETURNS_AT = 400

# The child logs STEPS steps under a 12 KiB file size limit (Python ignores SIGXFSZ, so a write
# past it fails with EFBIG) and, when asked, lifts the limit at SPACE_RETURNS_AT.
CHILD_FSIZE = textwrap.dedent(
    """
    import json, resource, sys, tally
    run_dir, returns, mode, steps, back_at = sys.argv[1], sys.argv[2] == "1", sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    log = tally.Logger(algo="sac", task="t", sim="mujoco", max_iterations=steps, num_envs=1,
                       log_dir=run_dir, panel="off", on_storage_error=mode)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (12288, hard))
    errors = []
    for i in range(1, steps + 1):
        if returns and i == back_at:
            resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
        try:
            log.step(i, metrics={"Loss/critic": float(i)})
            if i % 50 == 0:
                log.flush()
        except tally.SinkError as e:
            errors.append(str(e))
    try:
        log.close()
        closed = "ok"
    except tally.SinkError as e:
        closed = str(e)
    print(json.dumps({"errors": errors, "close": closed}))
    """
)

# The child logs on a small tmpfs; at `fill_at` it fills the disk with a filler file, and at
# `free_at` deletes it (space returns).
CHILD_DISK = textwrap.dedent(
    """
    import json, os, sys, tally
    run_dir, steps, fill_at, free_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    filler = os.path.join(os.path.dirname(run_dir), "filler")
    log = tally.Logger(algo="sac", task="t", sim="mujoco", max_iterations=steps, num_envs=1,
                       log_dir=run_dir, panel="off")
    errors = []
    for i in range(1, steps + 1):
        if i == fill_at:
            with open(filler, "wb", buffering=0) as f:
                try:
                    while True:
                        f.write(b"x" * 4096)
                except OSError:
                    pass
                try:
                    while True:
                        f.write(b"x")
                except OSError:
                    pass
        if i == free_at:
            os.remove(filler)
        try:
            log.step(i, metrics={"Loss/critic": float(i)})
            log.flush()
        except tally.SinkError as e:
            errors.append(str(e))
    try:
        log.close()
        closed = "ok"
    except tally.SinkError as e:
        closed = str(e)
    print(json.dumps({"errors": errors, "close": closed}))
    """
)


def run_child(script, *args):
    out = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def event_file(run_dir):
    (path,) = [p for p in Path(run_dir).iterdir() if p.name.startswith("events.out.tfevents.")]
    return path


def record_boundaries_end_at_file_end(path):
    """Walk the TFRecord framing (u64 length, u32 crc, data, u32 crc): True when the last whole
    record ends exactly at the end of the file, i.e. no torn record anywhere."""
    data = path.read_bytes()
    at = 0
    while at + 12 <= len(data):
        (n,) = struct.unpack_from("<Q", data, at)
        if at + 12 + n + 4 > len(data):
            break
        at += 12 + n + 4
    return at == len(data)


def file_steps(run_dir):
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return [e.step for e in acc.Scalars("Loss/critic")]


NOT_DURABLE = "accepted steps are not in the event file yet"


def reports(errors):
    """The outage reports: `flush` also raises each time steps are still kept (not durable)."""
    return [e for e in errors if NOT_DURABLE not in e]


def summary(run_dir):
    return json.loads((Path(run_dir) / "run_summary.json").read_text())


def test_file_size_limit_then_space_returns_keeps_every_step_in_order(tmp_path):
    run_dir = tmp_path / "run"
    got, _ = run_child(CHILD_FSIZE, run_dir, "1", "raise", STEPS, SPACE_RETURNS_AT)
    assert len(reports(got["errors"])) == 1, got
    assert "File too large" in got["errors"][0]
    assert got["close"] == "ok"
    assert file_steps(run_dir) == list(range(1, STEPS + 1))
    assert record_boundaries_end_at_file_end(event_file(run_dir))
    s = summary(run_dir)
    assert (s["status"], s["completed_iterations"]) == ("completed", STEPS)
    assert (s["persisted_iterations"], s["lost_iterations"], s["pending_iterations"]) == (STEPS, 0, 0)


def test_file_size_limit_that_stays_ends_degraded_with_the_files_count(tmp_path):
    run_dir = tmp_path / "run"
    got, _ = run_child(CHILD_FSIZE, run_dir, "0", "raise", STEPS, 0)
    assert len(reports(got["errors"])) == 1, got
    # Every flush after the outage began said the steps were not durable.
    assert len(got["errors"]) > 1 and all(NOT_DURABLE in e for e in got["errors"][1:]), got
    assert "logged steps are lost" in got["close"], got["close"]
    steps = file_steps(run_dir)
    k = len(steps)
    assert 0 < k < STEPS
    assert steps == list(range(1, k + 1)), "a prefix of the acknowledged steps, in order"
    assert record_boundaries_end_at_file_end(event_file(run_dir))
    s = summary(run_dir)
    assert s["status"] == "degraded"
    assert s["completed_iterations"] == STEPS
    assert s["persisted_iterations"] == k, "the summary's count is the file's"
    assert s["lost_iterations"] == STEPS - k
    assert any("File too large" in e for e in s["sink_errors"])


def test_warn_reports_on_stderr_and_never_raises(tmp_path):
    run_dir = tmp_path / "run"
    got, stderr = run_child(CHILD_FSIZE, run_dir, "0", "warn", STEPS, 0)
    assert got == {"errors": [], "close": "ok"}
    warnings = [l for l in stderr.splitlines() if l.startswith("tally: warning:")]
    assert len(warnings) == 2, stderr  # the outage, then the steps lost at close
    assert "File too large" in warnings[0] and "kept steps are lost" in warnings[1]
    s = summary(run_dir)
    assert s["status"] == "degraded"
    assert s["persisted_iterations"] == len(file_steps(run_dir))
    assert len(s["sink_errors"]) == 2


def test_an_unknown_on_storage_error_is_refused_naming_the_argument(tmp_path):
    with pytest.raises(tally.ConfigError, match="on_storage_error='ignore'"):
        tally.Logger(algo="sac", task="t", sim="mujoco", max_iterations=1, num_envs=1,
                     log_dir=tmp_path / "run", panel="off", on_storage_error="ignore")
    assert not (tmp_path / "run").exists()


@pytest.fixture
def small_tmpfs(tmp_path):
    mnt = tmp_path / "disk"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_a_full_disk_then_space_returns_keeps_every_step(small_tmpfs):
    run_dir = small_tmpfs / "run"
    got, _ = run_child(CHILD_DISK, run_dir, 300, 100, 200)
    # Once per file the outage hit: the event file, and run_summary.json when a rewrite fell in it.
    assert 1 <= len(reports(got["errors"])) <= 2, got
    assert all("No space left on device" in e for e in got["errors"]), got
    assert sum("run_summary" in e for e in reports(got["errors"])) <= 1, got
    assert file_steps(run_dir) == list(range(1, 301))
    assert record_boundaries_end_at_file_end(event_file(run_dir))
    s = summary(run_dir)
    assert (s["status"], s["persisted_iterations"], s["lost_iterations"]) == ("completed", 300, 0)


def test_a_disk_that_stays_full_says_at_close_and_on_disk_which_steps_are_lost(small_tmpfs):
    run_dir = small_tmpfs / "run"
    got, _ = run_child(CHILD_DISK, run_dir, 300, 100, 301)  # space never returns
    steps = file_steps(run_dir)
    k = len(steps)
    assert 0 < k < 300 and steps == list(range(1, k + 1)), "a prefix of the steps, in order"
    assert record_boundaries_end_at_file_end(event_file(run_dir))
    lost = 300 - k
    closed = got["close"]
    assert f"{lost} logged steps are lost" in closed, closed
    assert f"iterations {k + 1}\u2013300" in closed, closed
    assert "No space left on device" in closed, closed
    s = summary(run_dir)
    assert s["status"] == "degraded", s
    assert (s["completed_iterations"], s["persisted_iterations"]) == (300, k)
    assert (s["lost_iterations"], s["pending_iterations"]) == (lost, 0)
    assert s["end_time_utc"] is not None
