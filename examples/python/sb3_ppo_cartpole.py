"""stable-baselines3 PPO on CartPole logging through tally: the ``"tally"`` output format
writes what SB3's ``tensorboard`` format would (scalars, and any Video, Figure, Image or
HParam a callback records).

    pip install tally-rl stable-baselines3 gymnasium
    python examples/python/sb3_ppo_cartpole.py --timesteps 20000
    tensorboard --logdir runs

The one line: ``model.set_logger(configure(folder, ["stdout", "tally"]))`` (instead of
``tensorboard_log=`` or SB3's own ``configure``).
"""

from __future__ import annotations

import argparse

from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import HParam

from tally.integrations.sb3 import configure


class HParamCallback(BaseCallback):
    """The run's hyperparameters for TensorBoard's HParams tab, as SB3's docs show."""

    def _on_training_start(self) -> None:
        hparams = {"algorithm": type(self.model).__name__, "learning rate": self.model.learning_rate, "gamma": self.model.gamma}
        metrics = {"rollout/ep_len_mean": 0, "train/value_loss": 0.0}
        self.logger.record("hparams", HParam(hparams, metrics), exclude=("stdout", "log", "json", "csv"))

    def _on_step(self) -> bool:
        return True


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timesteps", type=int, default=20_000)
    ap.add_argument("--log-dir", default="runs/sb3_ppo_cartpole")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    model = PPO("MlpPolicy", "CartPole-v1", seed=args.seed, device="cpu")
    model.set_logger(configure(args.log_dir, ["stdout", "tally"]))
    model.learn(args.timesteps, callback=HParamCallback())
    model.logger.close()


if __name__ == "__main__":
    main()
