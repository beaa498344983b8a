"""`tally watch` on runs other writers made (docs/contract/panel.md "The generic dashboard"):
tensorboardX's SummaryWriter and tally.SummaryWriter, one scalar per event and no
run_config.json; the plain line shows the step axis and each tag's 2 s window mean."""

import subprocess
import threading

import pytest
import tensorboardX

import tally


def write_run(writer):
    """Steps 0, 256, ..., 8192 at 1000 steps per second of wall time from 1000 s (no step on
    the 2 s window's edge)."""
    for step in range(0, 8193, 256):
        wall = 1000.0 + step / 1000
        writer.add_scalar("charts/episodic_return", float(step), step, walltime=wall)
        writer.add_scalar("losses/value_loss", 1 / (1 + step / 256), step, walltime=wall)
    writer.close()


def first_summary(tally_bin, run_dir):
    """The first plain summary line of `tally watch` (a run with no summary never ends it)."""
    proc = subprocess.Popen(
        [tally_bin, "watch", "--panel", "off", "--every", "0.2", str(run_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    guard = threading.Timer(60, proc.kill)
    guard.start()
    try:
        for line in proc.stdout:
            if line.startswith("step "):
                return line.strip()
        pytest.fail(f"watch ended without a summary line: {proc.stderr.read()}")
    finally:
        guard.cancel()
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("writer", ["tensorboardX", "tally"])
def test_watch_shows_a_summary_writer_run_generically(tally_bin, tmp_path, writer):
    run_dir = tmp_path / "run"
    if writer == "tensorboardX":
        write_run(tensorboardX.SummaryWriter(logdir=str(run_dir)))
    else:
        write_run(tally.SummaryWriter(log_dir=str(run_dir)))
    line = first_summary(tally_bin, run_dir)
    # The window is the last 2 s of wall time: steps 6400..8192 (1006.4 s to 1008.192 s);
    # the time is the 8.192 s the records span.
    loss = sum(1 / (1 + k) for k in range(25, 33)) / 8
    for part in [
        "step 8,192 | time 8s | ",
        "Steps/s 1,000 | ",
        "charts/episodic_return 7296.0",
        f"losses/value_loss {loss:.4f}",
        "Avg 2s (n=8)",
    ]:
        assert part in line, (part, line)
    assert "iter " not in line


@pytest.mark.parametrize("writer", ["tensorboardX", "tally"])
def test_add_scalars_series_are_shown_in_their_charts_group(tally_bin, tmp_path, writer):
    # add_scalars writes each key to its own sub-run under the tag "loss" (tensorboardX:
    # run/loss/train/, tally as torch: run/loss_train/): watch follows them beside the run's
    # own file, merged by wall time.
    run_dir = tmp_path / "run"
    if writer == "tensorboardX":
        w = tensorboardX.SummaryWriter(logdir=str(run_dir))
    else:
        w = tally.SummaryWriter(log_dir=str(run_dir))
    for step in range(0, 8193, 256):
        wall = 1000.0 + step / 1000
        w.add_scalar("charts/episodic_return", float(step), step, walltime=wall)
        w.add_scalars("loss", {"train": float(step), "val": 2.0 * step}, step, walltime=wall)
    w.close()
    subruns = {p.parent.relative_to(run_dir).as_posix() for p in run_dir.rglob("events.out.tfevents.*")}
    assert subruns == ({".", "loss/train", "loss/val"} if writer == "tensorboardX" else {".", "loss_train", "loss_val"})
    line = first_summary(tally_bin, run_dir)
    # Steps 6400..8192 in the window, one sample per step whichever file a value came from.
    for part in ["charts/episodic_return 7296.0", "loss/train 7296.0", "loss/val 14592.0", "Avg 2s (n=8)"]:
        assert part in line, (part, line)
