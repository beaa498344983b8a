"""A log directory that cannot be written, vanishes or turns read-only
(docs/contract/run-artifacts.md "Storage faults"): at start the Logger refuses naming the path
and creates nothing; mid-run every accepted step is either in the event file or counted, the
failure is raised once, and no summary on disk claims a step the file lacks. A removed run
directory is put back with every step."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tensorboard.backend.event_processing import event_accumulator

import tally

ARGS = dict(algo="sac", task="t", sim="mujoco", max_iterations=40, num_envs=1, panel="off")


def file_steps(run_dir):
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return [e.step for e in acc.Scalars("Loss/critic")]


def tree(root):
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob("*"))


@pytest.fixture
def tmpfs(tmp_path):
    """A small tmpfs this test may remount read-only (root only)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=True)


def read_only_bind(path):
    """Make `path` read-only in place (a read-only bind mount of itself): as chmod does for a
    user, new files cannot be created there while files already open stay writable."""
    subprocess.run(["mount", "--bind", str(path), str(path)], check=True, capture_output=True)
    subprocess.run(["mount", "-o", "remount,bind,ro", str(path)], check=True, capture_output=True)


def remount(mnt, mode):
    subprocess.run(["mount", "-o", f"remount,{mode}", str(mnt)], check=True, capture_output=True)


def test_a_log_root_on_a_read_only_filesystem_is_refused_naming_the_path(tmpfs):
    (tmpfs / "existing").mkdir()
    remount(tmpfs, "ro")
    for kwargs in (dict(log_root=str(tmpfs / "existing")), dict(log_dir=str(tmpfs / "existing" / "run"))):
        with pytest.raises(tally.TallyError) as e:
            tally.Logger(**ARGS, **kwargs)
        assert str(tmpfs / "existing") in str(e.value), e.value
        assert "Read-only file system" in str(e.value), e.value
    assert tree(tmpfs) == ["existing"]


def test_a_log_root_without_write_permission_is_refused_naming_the_path(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    root.chmod(0o555)
    try:
        if os.access(root, os.W_OK):
            pytest.skip("running as root: chmod does not stop root writing (the read-only "
                        "filesystem test covers this case)")
        with pytest.raises(tally.TallyError) as e:
            tally.Logger(**ARGS, log_root=str(root))
        assert str(root) in str(e.value) and "Permission denied" in str(e.value), e.value
        assert tree(root) == []
    finally:
        root.chmod(0o755)


def test_a_log_root_that_is_a_file_is_refused_naming_the_path(tmp_path):
    root = tmp_path / "not-a-dir"
    root.write_text("x")
    for kwargs in (dict(log_root=str(root)), dict(log_dir=str(root / "run"))):
        with pytest.raises(tally.TallyError) as e:
            tally.Logger(**ARGS, **kwargs)
        assert str(root) in str(e.value), e.value
    assert root.read_text() == "x" and tree(tmp_path) == ["not-a-dir"]


@pytest.fixture
def few_inodes(tmp_path):
    """Mount a tmpfs with `n` inodes (the root directory takes one): room for a directory and
    some files, then ENOSPC."""
    mounted = []

    def mount(n):
        mnt = tmp_path / f"inodes{n}"
        mnt.mkdir()
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size=1m,nr_inodes={n}", "tmpfs", str(mnt)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): {r.stderr.strip()}")
        mounted.append(mnt)
        return mnt

    yield mount
    for mnt in mounted:
        subprocess.run(["umount", str(mnt)], check=True)


# 2 inodes: the run directory fits, run_config.json does not; 4: both JSON files fit, the
# event file does not.
@pytest.mark.parametrize("inodes", [2, 4])
def test_a_start_that_runs_out_of_space_leaves_no_half_created_run(few_inodes, inodes):
    mnt = few_inodes(inodes)
    with pytest.raises(tally.StorageError) as e:
        tally.Logger(**ARGS, log_dir=str(mnt / "run"))
    assert str(mnt / "run") in str(e.value) and "No space left on device" in str(e.value), e.value
    assert tree(mnt) == []


def test_a_start_that_runs_out_of_space_in_an_existing_log_dir_keeps_the_directory_only(few_inodes):
    mnt = few_inodes(3)
    (mnt / "run").mkdir()
    with pytest.raises(tally.StorageError) as e:
        tally.Logger(**ARGS, log_dir=str(mnt / "run"))
    assert "No space left on device" in str(e.value), e.value
    # The user's directory stays; nothing tally wrote into it does.
    assert tree(mnt) == ["run"]


# The child logs 40 steps; after step 20 the parent's fault is injected (it waits on stdin).
CHILD = textwrap.dedent(
    """
    import json, sys, time, tally
    log = tally.Logger(algo="sac", task="t", sim="mujoco", max_iterations=40, num_envs=1,
                       log_dir=sys.argv[1], panel="off")
    errors = []
    for i in range(1, 41):
        try:
            log.step(i, metrics={"Loss/critic": float(i)}, iteration_time=0.5)
            if i % 5 == 0:
                log.flush()
        except tally.StorageError as e:
            errors.append(f"{type(e).__name__} at {i}: {e}")
        if i == 20:
            print("ready", flush=True)
            sys.stdin.readline()
        if i > 20:
            time.sleep(0.01)  # room for a paced summary rewrite to meet the fault
    try:
        log.close()
        closed = "ok"
    except tally.StorageError as e:
        closed = f"{type(e).__name__}: {e}"
    print(json.dumps({"errors": errors, "close": closed}), flush=True)
    """
)


def run_with_fault(run_dir, inject):
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(run_dir)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    inject()
    out, err = p.communicate("\n", timeout=120)
    assert p.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1]), err


def test_a_run_directory_made_read_only_mid_run_keeps_every_step_and_raises_once_naming_it(tmpfs):
    run_dir = tmpfs / "run"
    got, _ = run_with_fault(run_dir, lambda: read_only_bind(run_dir))
    # The open event file stays writable: every step is there, in order.
    assert file_steps(run_dir) == list(range(1, 41))
    # The summary cannot be rewritten: raised once during the run (as a SinkError, the step
    # itself accepted), then by close, each naming the file and the cause.
    (error,) = got["errors"]
    assert error.startswith("SinkError") and "run_summary" in error, got
    for text in (error, got["close"]):
        assert str(run_dir / ".run_summary.json.tmp") in text and "Read-only file system" in text, got
    # The summary left on disk is an earlier one: never ahead of the file.
    s = json.loads((run_dir / "run_summary.json").read_text())
    assert s["status"] == "running"
    assert s["persisted_iterations"] <= s["completed_iterations"] <= 20
    # Readers take the file for what it holds and never call the run completed: tally.read
    # returns every step; extract computes its figures and says the summary was not finalised.
    table = tally.read(run_dir, tags="Loss/critic")
    assert table.column("step").to_pylist() == list(range(1, 41))
    r = subprocess.run([sys.executable, "-m", "tally", "extract", str(run_dir)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"{run_dir / 'run_summary.json'}: says the run is still running" in r.stderr, r.stderr
    assert "could not be finalised" in r.stderr, r.stderr
    assert "completed" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert "500.000" in r.stdout, r.stdout  # iter_ms from the file's steps


def test_a_run_directory_removed_mid_run_is_restored_with_every_step_and_said_once(tmp_path):
    run_dir = tmp_path / "run"
    got, _ = run_with_fault(run_dir, lambda: shutil.rmtree(run_dir))
    # The event file is put back from its open descriptor: every step, in order, read by
    # TensorBoard itself.
    assert file_steps(run_dir) == list(range(1, 41))
    # Said once during the run, naming the directory and what was restored; close is clean.
    (error,) = got["errors"]
    assert error.startswith("SinkError"), got
    assert f"run directory {run_dir} was removed; restored" in error, got
    assert "bytes from the open event file" in error, got
    assert got["close"] == "ok", got
    # Both JSON artefacts are back; the summary counts what the file holds.
    config = json.loads((run_dir / "run_config.json").read_text())
    assert config["run"]["algo"] == "sac"
    s = json.loads((run_dir / "run_summary.json").read_text())
    assert s["status"] == "completed", s
    assert s["completed_iterations"] == s["persisted_iterations"] == 40, s
    assert s["lost_iterations"] == 0, s
    assert any("was removed" in e for e in s["sink_errors"]), s


def test_a_run_directory_chmodded_read_only_mid_run_keeps_every_step_and_raises_once(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    run_dir.chmod(0o555)
    if os.access(run_dir, os.W_OK):
        run_dir.chmod(0o755)
        pytest.skip("running as root: chmod does not stop root writing (the read-only bind "
                    "mount test covers this case)")
    run_dir.chmod(0o755)
    run_dir.rmdir()
    try:
        got, _ = run_with_fault(run_dir, lambda: run_dir.chmod(0o555))
    finally:
        run_dir.chmod(0o755)
    assert file_steps(run_dir) == list(range(1, 41))
    (error,) = got["errors"]
    assert error.startswith("SinkError") and "Permission denied" in error, got
    s = json.loads((run_dir / "run_summary.json").read_text())
    assert s["persisted_iterations"] <= s["completed_iterations"] <= 20
