"""verl's tracking layer with ``tally`` as a backend (docs/contract/integrations.md "verl"): the
real ``verl.utils.tracking.Tracking``, driven as verl's PPO trainer drives it, against verl's own
``tensorboard`` backend (torch's SummaryWriter) on the same metrics.

verl is installed without its dependencies (requirements.txt says why): its tracking layer
needs none of them."""

from __future__ import annotations

import json
import math
import random

import pytest

from conftest import f32, scalars

pytest.importorskip("torch")
tracking = pytest.importorskip("verl.utils.tracking")

import tally.integrations.verl as tally_verl  # noqa: E402


def grpo_metrics(step: int, rng: random.Random) -> dict:
    """The keys one verl GRPO step logs (a subset, with verl's names and value types)."""
    return {
        "actor/pg_loss": rng.gauss(0.0, 0.1),
        "actor/entropy": 1.2 * math.exp(-step / 50),
        "actor/grad_norm": abs(rng.gauss(1.0, 0.3)),
        "actor/lr": 1e-6,
        "critic/score/mean": step / 10 + rng.random(),
        "critic/advantages/max": 3.0,
        "response_length/mean": 200 + step,
        "response_length/clip_ratio": 0.0,
        "timing_s/gen": rng.uniform(5, 6),
        "timing_s/update_actor": rng.uniform(2, 3),
        "perf/throughput": rng.uniform(900, 1100),
        "training/global_step": step,
        "training/epoch": 0,
    }


def drive(backends: list, config: dict, steps: int = 30) -> None:
    """As verl's trainer: one Tracking for the run, ``log(data=, step=)`` per step, then finish."""
    rng = random.Random(7)
    logger = tracking.Tracking(project_name="proj", experiment_name="exp", default_backend=backends, config=config)
    for step in range(1, steps + 1):
        logger.log(data=grpo_metrics(step, rng), step=step)
    logger.finish()


CONFIG = {"trainer": {"project_name": "proj", "experiment_name": "exp", "logger": ["tally"]},
          "algorithm": {"adv_estimator": "grpo"}, "actor_rollout_ref": {"actor": {"optim": {"lr": 1e-6}}}}


def test_tally_writes_what_verls_tensorboard_backend_writes(tmp_path, monkeypatch):
    tally_verl.install()
    tally_verl.install()  # a second call changes nothing
    assert tracking.Tracking.supported_backend.count("tally") == 1
    monkeypatch.setenv("TENSORBOARD_DIR", str(tmp_path / "tb"))
    monkeypatch.setenv("TALLY_LOG_DIR", str(tmp_path / "tally"))
    drive(["tensorboard"], CONFIG)
    drive(["console", "tally"], CONFIG)
    theirs, ours = scalars(tmp_path / "tb"), scalars(tmp_path / "tally")
    assert sorted(ours) == sorted(theirs) and len(ours) == 13
    for tag in theirs:
        assert [s for s, _ in ours[tag]] == list(range(1, 31)), tag
        assert ours[tag] == [(s, f32(v)) for s, v in theirs[tag]], tag
    # verl's configuration is the run's configuration.
    run_config = json.loads((tmp_path / "tally" / "run_config.json").read_text())
    assert run_config["config"]["algorithm"] == {"adv_estimator": "grpo"}


def test_the_default_directory_is_under_tally_log_and_finish_writes_every_step(tmp_path, monkeypatch):
    tally_verl.install()
    monkeypatch.delenv("TALLY_LOG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    logger = tracking.Tracking(project_name="p", experiment_name="e", default_backend="tally", config=None)
    logger.log(data={"actor/pg_loss": 0.5}, step=1)
    logger.finish()
    logger.finish()  # verl's own finish runs once, and tally's close with it
    assert scalars(tmp_path / "tally_log" / "p" / "e") == {"actor/pg_loss": [(1, 0.5)]}


def test_a_value_that_is_not_a_number_names_its_key(tmp_path, monkeypatch):
    tally_verl.install()
    monkeypatch.setenv("TALLY_LOG_DIR", str(tmp_path / "run"))
    logger = tracking.Tracking(project_name="p", experiment_name="e", default_backend=["tally"])
    logger.log(data={"actor/pg_loss": 0.5}, step=1)
    with pytest.raises(Exception, match="actor/kl"):
        logger.log(data={"actor/kl": "high"}, step=2)
    logger.finish()
    # What was logged before the bad value is kept.
    assert scalars(tmp_path / "run") == {"actor/pg_loss": [(1, 0.5)]}


def test_verl_still_refuses_a_backend_it_does_not_know():
    tally_verl.install()
    with pytest.raises(AssertionError, match="nope is not supported"):
        tracking.Tracking(project_name="p", experiment_name="e", default_backend=["nope"])


def test_in_verls_ray_workers_the_backend_comes_from_ray_s_setup_hook(tmp_path):
    # verl's main_ppo builds its trainer, and so its Tracking, inside a Ray actor: the line goes
    # into Ray's runtime_env, which verl's `ray_kwargs.ray_init.runtime_env` reaches.
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False,
             runtime_env={"worker_process_setup_hook": "tally.integrations.verl.install"})
    try:
        @ray.remote
        def train(run_dir: str) -> bool:
            import os

            from verl.utils.tracking import Tracking

            os.environ["TALLY_LOG_DIR"] = run_dir
            logger = Tracking(project_name="p", experiment_name="e", default_backend=["tally"])
            logger.log(data={"critic/score/mean": 1.5}, step=3)
            logger.finish()
            return "tally" in Tracking.supported_backend

        assert ray.get(train.remote(str(tmp_path / "run")))
    finally:
        ray.shutdown()
    assert scalars(tmp_path / "run") == {"critic/score/mean": [(3, 1.5)]}


def test_validation_generations_are_the_text_verls_tensorboard_backend_writes(tmp_path, monkeypatch):
    # verl writes val/generations only for the backends it names; with tally in the list the
    # text reaches the tally run as verl's tensorboard backend writes it (docs/contract/
    # integrations.md "verl").
    tally_verl.install()
    samples = [["What is 2+3?", "5", 1.0], ["What is 7*6?", "41", 0.0]]
    for backend, env, d in (("tensorboard", "TENSORBOARD_DIR", "tb"), ("tally", "TALLY_LOG_DIR", "tally")):
        monkeypatch.setenv(env, str(tmp_path / d))
        logger = tracking.Tracking(project_name="proj", experiment_name="exp", default_backend=[backend], config=None)
        generations = tracking.ValidationGenerationsLogger(project_name="proj", experiment_name="exp")
        logger.log(data={"val-core/acc/mean@1": 0.5}, step=2)
        generations.log([backend], samples, 2)
        generations.log([backend], samples[:1], 4)
        logger.finish()
        if getattr(generations, "writer", None) is not None:
            generations.writer.close()

    from conftest import load

    def texts(d):
        acc = load(d)
        return [(e.step, e.tensor_proto.string_val[0].decode()) for e in acc.Tensors("val/generations/text_summary")]

    theirs, ours = texts(tmp_path / "tb"), texts(tmp_path / "tally")
    assert [s for s, _ in ours] == [2, 4]
    assert ours == theirs
    assert "**Output:** 41" in ours[0][1]
