"""The `sink` rule from Python (docs/contract/health.md "Sink"): a remote sink whose `flush`
hangs is told to `on_health` once, naming it, after `tally.health.sink(max_lag_s=...)`;
`stop_on` takes its name, it can be turned off, and a bad threshold is refused naming it."""

import threading
import time

import pytest

import tally


class HungReplica:
    """A remote sink holding its rows until `flush`, which waits for `release`."""

    name = "mlflow"
    remote = True

    def __init__(self):
        self.release = threading.Event()

    def write(self, step, wall_time, iteration, scalars):
        pass

    def flush(self):
        self.release.wait()


def test_a_sink_whose_flush_hangs_is_told_once_naming_it(tmp_path):
    told = []
    sink = HungReplica()
    log = tally.Logger(
        algo="sac", task="sink", panel="off", log_dir=tmp_path / "run", sinks=[sink],
        health=[tally.health.sink(max_lag_s=0.5)], on_health=told.append,
    )
    it, end = 1, time.monotonic() + 10
    while not told and time.monotonic() < end:
        log.step(it, metrics={"Loss/critic": 1.0})
        it += 1
        time.sleep(0.01)
    # Still behind: the same finding, told once.
    for _ in range(30):
        log.step(it, metrics={"Loss/critic": 1.0})
        it += 1
        time.sleep(0.01)
    sink.release.set()
    log.close()
    assert [(f.rule, f.tag) for f in told] == [("sink", "mlflow")]
    assert told[0].message.startswith("mlflow: ")
    assert "rows of the event file not acknowledged" in told[0].message
    assert [f.rule for f in log.health.findings] == ["sink"]
    assert log.health.findings[0].count == 1


def test_sink_is_a_rule_name_stop_on_takes_and_off_turns_off(tmp_path):
    assert "sink" in tally.health.RULES
    assert repr(tally.health.sink(max_lag_s=60)) == "tally.health.sink(max_lag_s=60)"
    log = tally.Logger(
        algo="sac", task="sink", panel="off", log_dir=tmp_path / "a", stop_on=["sink"],
    )
    log.step(1, metrics={"Loss/critic": 1.0})
    log.close()
    assert log.health.findings == []
    with pytest.raises(tally.ConfigError, match="sink"):
        tally.Logger(
            algo="sac", task="sink", panel="off", log_dir=tmp_path / "b",
            health=[tally.health.off("sink")], stop_on=["sink"],
        )
    assert not (tmp_path / "b").exists()


def test_a_bad_threshold_is_refused_naming_it(tmp_path):
    with pytest.raises(tally.ConfigError, match="max_lag_s"):
        tally.Logger(
            algo="sac", task="sink", panel="off", log_dir=tmp_path / "run",
            health=[tally.health.sink(max_lag_s=0)],
        )
    assert not (tmp_path / "run").exists()
