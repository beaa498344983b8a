"""The `ranks` rule from Python (docs/contract/health.md "Ranks"): `tally.health.ranks(...)`
sets its parameters as the rules file does, `stop_on` takes its name, and a bad parameter is
refused naming it. (A logger given every rank's step judges it: Rust's `Logger::step_ranks`;
the planted faults are in crates/tally/tests/health_ranks.rs.)"""

import pytest

import tally


def test_ranks_is_a_rule_name_stop_on_takes(tmp_path):
    assert "ranks" in tally.health.RULES
    log = tally.Logger(
        algo="sac", task="ranks", panel="off", log_dir=tmp_path / "run",
        health=[tally.health.ranks(ratio=2.0, min_excess_s=0.1, for_steps=3)],
        stop_on=["ranks"],
    )
    log.step(1, metrics={"Loss/critic": 1.0})
    log.close()
    assert log.health.findings == []


@pytest.mark.parametrize("kw, field", [({"ratio": 1.0}, "ratio"), ({"for_steps": 0}, "for_steps")])
def test_a_bad_parameter_is_refused_naming_it(tmp_path, kw, field):
    with pytest.raises(tally.ConfigError, match=field):
        tally.Logger(
            algo="sac", task="ranks", panel="off", log_dir=tmp_path / "run",
            health=[tally.health.ranks(**kw)],
        )
    assert not (tmp_path / "run").exists()


def test_ranks_can_be_turned_off(tmp_path):
    log = tally.Logger(
        algo="sac", task="ranks", panel="off", log_dir=tmp_path / "run",
        health=[tally.health.off("ranks")],
    )
    log.close()


@pytest.mark.parametrize("rule", ["ranks", "disk"])
def test_stop_on_takes_a_run_wide_rule_on_by_default(tmp_path, rule):
    # The rules that watch the run, not a tag, were once refused as "off" by stop_on.
    log = tally.Logger(
        algo="sac", task="ranks", panel="off", log_dir=tmp_path / "run", stop_on=[rule],
    )
    log.close()
