"""Storage faults through the writers without a Logger (`SummaryWriter`, `EventWriter`), under
the Logger's policy (docs/contract/run-artifacts.md "Storage faults"): what a full disk refuses
is kept and written again, in order, once space returns; the outage is raised once; `flush`
raises while anything is kept; what can never be written is said, never silent."""

import json
import subprocess
import sys
import textwrap

from tensorboard.backend.event_processing import event_accumulator

from test_storage_faults import NOT_DURABLE, event_file, record_boundaries_end_at_file_end

STEPS = 600
SPACE_RETURNS_AT = 400

# The child writes STEPS steps of two scalars under a 12 KiB file size limit (Python ignores
# SIGXFSZ, so a write past it fails with EFBIG), and lifts the limit at `back_at` when asked.
CHILD = textwrap.dedent(
    """
    import json, resource, sys, tally
    log_dir, back_at, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    steps = int(sys.argv[4])
    w = tally.SummaryWriter(log_dir, on_storage_error=mode)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (12288, hard))
    raised, flushes = [], []
    for i in range(1, steps + 1):
        if i == back_at:
            resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
        calls = [lambda: w.add_scalar("loss", float(i), i), lambda: w.add_scalar("reward", -float(i), i)]
        if i % 50 == 0:
            calls.append(lambda: w.add_text("note", f"step {i}", i))
        for call in calls:
            try:
                call()  # the call that raises has its value accepted and kept
            except tally.SinkError as e:
                raised.append((i, str(e)))
        if i % 100 == 0:
            try:
                w.flush()
                flushes.append((i, "ok"))
            except tally.SinkError as e:
                flushes.append((i, str(e)))
    try:
        w.close()
        closed = "ok"
    except tally.SinkError as e:
        closed = str(e)
    print(json.dumps({"raised": raised, "flushes": flushes, "close": closed, "closed": w._main.closed}))
    """
)


def run_child(log_dir, back_at, mode="raise", steps=STEPS):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(log_dir), str(back_at), mode, str(steps)],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def scalars(log_dir, tag):
    acc = event_accumulator.EventAccumulator(str(log_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def test_a_writer_under_a_file_size_limit_keeps_what_the_disk_refuses_and_writes_it_when_space_returns(tmp_path):
    got, stderr = run_child(tmp_path, SPACE_RETURNS_AT)
    (first,) = got["raised"]  # the outage, once
    assert "File too large" in first[1] and "kept" in first[1], first
    during = [f for f in got["flushes"] if f[0] < SPACE_RETURNS_AT and f[0] > first[0]]
    assert during and all(NOT_DURABLE.replace("accepted steps", "") in f[1] for f in during), got
    after = [f for f in got["flushes"] if f[0] >= SPACE_RETURNS_AT]
    assert after and all(f[1] == "ok" for f in after), got
    assert got["close"] == "ok"
    assert scalars(tmp_path, "loss") == [(i, float(i)) for i in range(1, STEPS + 1)]
    assert scalars(tmp_path, "reward") == [(i, -float(i)) for i in range(1, STEPS + 1)]
    assert record_boundaries_end_at_file_end(event_file(tmp_path))


def test_a_writer_whose_disk_stays_full_says_what_is_lost_and_keeps_a_prefix_in_order(tmp_path):
    got, stderr = run_child(tmp_path, 0)
    assert len(got["raised"]) == 1, got
    # close retries one last time; what the disk still refuses is lost, counted and said.
    assert "kept events could not be written and are lost" in got["close"], got
    assert "File too large" in got["close"], got
    assert got["closed"] is True
    loss = scalars(tmp_path, "loss")
    assert 0 < len(loss) < STEPS
    assert loss == [(i, float(i)) for i in range(1, len(loss) + 1)], "a prefix, in order"
    assert record_boundaries_end_at_file_end(event_file(tmp_path))


def test_warn_never_raises_and_says_the_outage_once_on_stderr(tmp_path):
    got, stderr = run_child(tmp_path, SPACE_RETURNS_AT, mode="warn")
    assert got["raised"] == [] and all(f[1] == "ok" for f in got["flushes"]), got
    warnings = [l for l in stderr.splitlines() if l.startswith("tally: warning:")]
    assert len(warnings) == 1 and "File too large" in warnings[0], stderr
    assert scalars(tmp_path, "loss") == [(i, float(i)) for i in range(1, STEPS + 1)]


def test_an_unknown_on_storage_error_is_refused_naming_it(tmp_path):
    import pytest

    import tally

    with pytest.raises(tally.ConfigError, match="on_storage_error='ignore'"):
        tally.SummaryWriter(tmp_path, on_storage_error="ignore")
    assert list(tmp_path.iterdir()) == []
