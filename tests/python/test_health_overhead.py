"""The `overhead` rule from Python (docs/contract/health.md "Overhead"): the time inside
`step()`, the binding's conversion of the values included, against the time between calls."""

import time

import pytest

import tally


def logger(tmp_path, **kw):
    return tally.Logger(
        algo="sac", task="overhead", panel="off", log_dir=tmp_path / "run",
        health=[tally.health.overhead(**kw)],
    )


def overhead_findings(log):
    return [f for f in log.health.findings if f.rule == "overhead"]


def test_a_loop_that_only_logs_is_told_tally_takes_its_time(tmp_path):
    log = logger(tmp_path, window=100, for_seconds=0.1)
    values = {f"charts/v{i}": float(i) for i in range(20)}
    for it in range(1, 200_001):
        log.step(it, metrics=values)
        if it % 5000 == 0:
            log.flush()
            if overhead_findings(log):
                break
    log.close()
    found = overhead_findings(log)
    assert len(found) == 1, found
    assert found[0].last_value > 0.5 and found[0].message.startswith("tally took"), found


def test_a_loop_that_works_finds_nothing(tmp_path):
    # 50 ms of work a step: a debug build's step (about 0.1 ms, and 1.2 ms on a machine loaded by
    # two builds, against the release build's few µs) is still under 3 %.
    log = logger(tmp_path, window=10, for_seconds=0.05)
    for it in range(1, 61):
        time.sleep(0.05)
        log.step(it, metrics={"charts/v": 1.0})
    log.close()
    assert overhead_findings(log) == []


@pytest.mark.parametrize("kw, field", [({"budget": 1.0}, "budget"), ({"window": 0}, "window")])
def test_a_bad_parameter_is_refused_naming_it(tmp_path, kw, field):
    with pytest.raises(tally.ConfigError, match=field):
        logger(tmp_path, **kw)
    assert not (tmp_path / "run").exists()


def test_overhead_is_a_rule_name_stop_on_and_off_take(tmp_path):
    assert "overhead" in tally.health.RULES
    log = tally.Logger(algo="sac", task="overhead", panel="off", log_dir=tmp_path / "run", stop_on=["overhead"])
    log.close()
    log = tally.Logger(algo="sac", task="overhead", panel="off", log_dir=tmp_path / "run2", health=[tally.health.off("overhead")])
    log.close()
