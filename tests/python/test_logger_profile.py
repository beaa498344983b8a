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


def test_an_rft_run_refuses_a_key_outside_its_namespace_unless_told_it_is_the_users(tmp_path):
    # docs/contract/rft.md "Keys outside the namespace".
    with tally.Logger(algo="grpo", task="t", log_dir=tmp_path / "a", panel="off") as log:
        with pytest.raises(tally.SchemaError, match=r"metrics\['advantage/kl/mean'\]: unknown category 'advantage/'"):
            log.step(1, metrics={"actor/pg_loss": 1.0, "advantage/kl/mean": 0.5})
    with tally.Logger(algo="grpo", task="t", log_dir=tmp_path / "b", panel="off", outside_keys="user") as log:
        log.step(1, metrics={"actor/pg_loss": 1.0, "advantage/kl/mean": 0.5})
        with pytest.raises(tally.SchemaError, match=r"metrics\['Loss/critic'\]: unknown category 'Loss/'.*; as a user metric: "):
            log.step(2, metrics={"Loss/critic": 1.0})
    config = json.loads((tmp_path / "b" / "run_config.json").read_text())
    assert [m["tag"] for m in config["user_metrics"]] == ["advantage/kl/mean"]
    assert tally._tally.rft_key("actor/pg_loss") == ("rft", None)
    kind, why = tally._tally.rft_key("advantage/kl/mean")
    assert kind == "user" and "unknown category 'advantage/'" in why
    assert tally._tally.rft_key("Loss/critic")[0] == "refused"
    with pytest.raises(tally.ConfigError, match="outside_keys='drop': expected 'refuse' or 'user'"):
        tally.Logger(algo="grpo", task="t", log_dir=tmp_path / "c", panel="off", outside_keys="drop")
