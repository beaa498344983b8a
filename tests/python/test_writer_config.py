"""A writer's run configuration reaches ``run_config.json`` and ``tally.read_runs(config=True)``
(docs/contract/integrations.md "A writer's configuration"): given to ``SummaryWriter(config=)``,
through ``add_hparams``, as CleanRL's hyperparameter table in ``add_text``, through rsl_rl's
config hooks; secrets redacted as in every run artefact."""

import argparse
import json

import numpy as np

import tally


def config_columns(root):
    table = tally.read_runs(root, config=True)
    return {c[len("config.config."):]: table.column(c)[0].as_py() for c in table.column_names if c.startswith("config.config.")}


def test_an_explicit_config_is_read_back_with_the_runs_points(tmp_path):
    cfg = {"lr": np.float32(0.5), "net": {"width": 64}, "seed": np.int64(3), "wandb_api_key": "abc123secret"}
    with tally.SummaryWriter(tmp_path / "run", config=cfg) as w:
        w.add_scalar("loss", 1.0, 0)
    cols = config_columns(tmp_path)
    assert cols["lr"] == 0.5 and cols["net.width"] == 64 and cols["seed"] == 3
    assert cols["wandb_api_key"] != "abc123secret"
    assert "abc123secret" not in (tmp_path / "run" / "run_config.json").read_text()


def test_cleanrls_hyperparameter_table_becomes_the_config(tmp_path):
    # As CleanRL's scripts log their argparse namespace.
    args = argparse.Namespace(exp_name="ppo", learning_rate=2.5e-4, num_envs=4, cuda=True, target_kl=None, env_id="CartPole-v1")
    with tally.SummaryWriter(tmp_path / "run") as w:
        w.add_text(
            "hyperparameters",
            "|param|value|\n|-|-|\n%s" % ("\n".join([f"|{key}|{value}|" for key, value in vars(args).items()])),
        )
        w.add_scalar("charts/episodic_return", 10.0, 100)
    cols = config_columns(tmp_path)
    assert cols == {"exp_name": "ppo", "learning_rate": 2.5e-4, "num_envs": 4, "cuda": True, "target_kl": None, "env_id": "CartPole-v1"}


def test_ordinary_text_records_no_config(tmp_path):
    with tally.SummaryWriter(tmp_path / "run") as w:
        w.add_text("notes", "|a|b|\n|-|-|\n|1|2|")
        w.add_text("notes", "plain words")
    assert not (tmp_path / "run" / "run_config.json").exists()


def test_add_hparams_and_the_rsl_rl_hooks_merge_into_one_config(tmp_path):
    with tally.SummaryWriter(tmp_path / "run", config={"lr": 0.1, "keep": "me"}) as w:
        w.add_hparams({"lr": 0.2, "gamma": 0.99, "skip": None}, {"m": 1.0}, run_name="hp")
        w.store_config({"num_envs": 8}, {"max_iterations": 10})
    doc = json.loads((tmp_path / "run" / "run_config.json").read_text())
    assert doc["config"] == {"lr": 0.2, "keep": "me", "gamma": 0.99, "runner_cfg": {"max_iterations": 10}, "env_cfg": {"num_envs": 8}}


def test_a_config_that_is_not_a_dict_is_refused_naming_it(tmp_path):
    try:
        tally.SummaryWriter(tmp_path / "run", config=[("lr", 1)])
    except tally.ConfigError as e:
        assert "must be a dict" in str(e) and "list" in str(e)
    else:
        raise AssertionError("a list config was accepted")
    assert not (tmp_path / "run").exists()  # refused before any file was made


def test_a_run_config_that_is_not_an_object_is_refused_and_left_as_it_was(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "run_config.json").write_text("[1, 2]")
    with tally.SummaryWriter(run) as w:
        try:
            w.record_config({"lr": 0.1})
        except tally.ConfigError as e:
            assert "run_config.json" in str(e) and "not a JSON object" in str(e)
        else:
            raise AssertionError("a non-object run_config.json was overwritten")
    assert (run / "run_config.json").read_text() == "[1, 2]"
