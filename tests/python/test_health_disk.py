"""The `disk` rule from Python (docs/contract/health.md "Disk"): `tally.health.disk(...)` sets
its threshold, the logger's writer timer finds a nearly full disk and `on_health` is told; a bad
threshold is refused naming it."""

import math
import time

import pytest

import tally


def test_a_nearly_full_disk_is_told(tmp_path):
    told = []
    # A threshold above any disk's size: the planted fault.
    log = tally.Logger(
        algo="sac", task="disk", panel="off", log_dir=tmp_path / "run",
        health=[tally.health.disk(min_free_mb=1e12)], on_health=told.append,
    )
    log.step(1, metrics={"Loss/critic": 1.0})
    end = time.monotonic() + 10
    while not told and time.monotonic() < end:
        time.sleep(0.1)
        log.flush()
    log.close()
    assert [f.rule for f in told] == ["disk"]
    assert told[0].tag == "" or told[0].tag is None
    assert "MiB free under the run directory" in told[0].message
    assert not math.isnan(told[0].last_value)


def test_a_bad_threshold_is_refused_naming_it(tmp_path):
    with pytest.raises(tally.ConfigError, match="min_free_mb"):
        tally.Logger(
            algo="sac", task="disk", panel="off", log_dir=tmp_path / "run",
            health=[tally.health.disk(min_free_mb=0)],
        )
    assert not (tmp_path / "run").exists()
