"""System metrics beside every run (docs/contract/system-metrics.md): tally.SummaryWriter and
tally.Logger write system/... tags into the run's own event file, which TensorBoard's own
EventAccumulator reads; system_metrics=False writes none; no GPU here means no GPU tag and no
error."""

import os
import time

import pytest
from tensorboard.backend.event_processing import event_accumulator

import tally

KEEP_ALL = {event_accumulator.SCALARS: 0}
MACHINE = [
    "system/process/cpu_percent",
    "system/process/rss_bytes",
    "system/process/threads",
    "system/process/open_files",
    "system/machine/cpu_percent",
    "system/machine/memory_used_bytes",
    "system/machine/memory_available_bytes",
    "system/machine/load_1m",
    "system/machine/disk_read_bytes_per_s",
    "system/machine/disk_write_bytes_per_s",
    "system/machine/disk_free_bytes",
    "system/machine/network_recv_bytes_per_s",
    "system/machine/network_sent_bytes_per_s",
]


def tags(run_dir):
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance=KEEP_ALL)
    acc.Reload()
    return acc, set(acc.Tags()["scalars"])


def write(writer_or_logger, secs, step):
    end = time.monotonic() + secs
    i = 1
    while time.monotonic() < end:
        step(writer_or_logger, i)
        i += 1
        time.sleep(0.02)


def test_summary_writer_system_tags_read_by_tensorboard(tmp_path):
    w = tally.SummaryWriter(str(tmp_path / "run"), system_interval=0.2)
    write(w, 1.2, lambda w, i: w.add_scalar("charts/return", float(i), i))
    w.close()
    acc, found = tags(tmp_path / "run")
    assert set(MACHINE) <= found, set(MACHINE) - found
    assert "charts/return" in found
    rss = acc.Scalars("system/process/rss_bytes")
    assert len(rss) >= 3
    assert all(e.value > 1e6 for e in rss)
    if not os.path.exists("/dev/nvidia0"):
        assert not any(t.startswith("system/gpu") for t in found)
    # Placed at the step of the newest scalar batch: inside the run's own step range.
    steps = [e.step for e in acc.Scalars("charts/return")]
    assert all(0 <= e.step <= max(steps) for e in rss)


def test_logger_system_tags_read_by_tensorboard(tmp_path):
    log = tally.Logger(algo="sac", task="t", sim="s", log_dir=tmp_path / "run", panel="off", system_interval=0.2)
    write(log, 1.2, lambda log, i: log.step(i, metrics={"Loss/critic": 1.0}))
    log.close()
    _, found = tags(tmp_path / "run")
    assert set(MACHINE) <= found, set(MACHINE) - found
    assert "Loss/critic" in found


def test_off_writes_no_system_tag(tmp_path):
    w = tally.SummaryWriter(str(tmp_path / "w"), system_metrics=False, system_interval=0.2)
    write(w, 0.5, lambda w, i: w.add_scalar("a", 1.0, i))
    w.close()
    log = tally.Logger(algo="sac", task="t", sim="s", log_dir=tmp_path / "l", panel="off", system_metrics=False, system_interval=0.2)
    write(log, 0.5, lambda log, i: log.step(i, metrics={"Loss/critic": 1.0}))
    log.close()
    for d in ("w", "l"):
        _, found = tags(tmp_path / d)
        assert found and not any(t.startswith("system/") for t in found)


def test_an_interval_too_short_is_refused_before_any_file(tmp_path):
    with pytest.raises(tally.ConfigError, match="system_interval"):
        tally.SummaryWriter(str(tmp_path / "w"), system_interval=0)
    assert not (tmp_path / "w").exists()
    with pytest.raises(tally.ConfigError, match="system_interval"):
        tally.Logger(algo="sac", task="t", sim="s", log_dir=tmp_path / "l", panel="off", system_interval=0.01)
