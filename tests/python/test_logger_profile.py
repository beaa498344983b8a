"""``tally.Logger``'s timing profile (docs/contract/schema.md "Profiles"): taken from the
algorithm when tally knows it; for an algorithm it does not know, required, with an error that
lists the profiles, before any file is made."""

import json

import pytest

import tally


def profile_of(run_dir):
    return json.loads((run_dir / "run_config.json").read_text())["run"]["logger"]["profile"]


@pytest.mark.parametrize("algo, profile", [("ppo", "onpolicy"), ("appo", "appo"), ("sac", "sac_family"), ("grpo", "rft")])
def test_a_known_algorithm_brings_its_profile(tmp_path, algo, profile):
    with tally.Logger(algo=algo, task="t", log_dir=tmp_path / algo, panel="off") as log:
        assert log.run_dir == tmp_path / algo
    assert profile_of(tmp_path / algo) == profile


def test_an_unknown_algorithm_needs_its_profile_named(tmp_path):
    with pytest.raises(tally.ConfigError, match=r"algo='my_method'.*profile=.*sac_family.*appo.*onpolicy.*rft"):
        tally.Logger(algo="my_method", task="t", log_dir=tmp_path / "run", panel="off")
    assert not (tmp_path / "run").exists()
    with tally.Logger(algo="my_method", task="t", log_dir=tmp_path / "run", panel="off", profile="onpolicy"):
        pass
    assert profile_of(tmp_path / "run") == "onpolicy"
