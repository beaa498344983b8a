"""rsl_rl's OnPolicyRunner logging through tally, on a small batched torch task (256 point
masses pushed to the origin), so it runs on a CPU without a simulator.

    pip install tally-rl rsl-rl-lib
    python examples/python/rsl_rl_ppo.py --iterations 200
    tensorboard --logdir logs

The one line is the runner configuration's ``logger`` entry: rsl_rl builds its writer from it
in ``learn()``; ``tally.integrations.rsl_rl:LogWriter`` is a ``tally.SummaryWriter`` that is also
an rsl_rl ``LogWriter`` (so it gets the configs, and ``stop()`` when training ends). Other
keys of that dict are its keywords, e.g. ``"wandb": {"project": "go2"}`` to mirror to W&B.
``tally.integrations.rsl_rl.take_over(runner)`` before ``learn()`` does the same, and also works
on rsl-rl-lib 2.x (Isaac Lab's).
"""

from __future__ import annotations

import argparse

import torch
from tensordict import TensorDict
from rsl_rl.env import VecEnv
from rsl_rl.runners import OnPolicyRunner


class PointMass(VecEnv):
    """1-D point masses: observation (position, velocity), action a force, reward -|position|."""

    def __init__(self, num_envs: int = 256, episode_length: int = 100, seed: int = 0) -> None:
        self.num_envs, self.num_actions, self.max_episode_length = num_envs, 1, episode_length
        self.device, self.cfg = "cpu", {"task": "point_mass", "episode_length": episode_length}
        self.gen = torch.Generator().manual_seed(seed)
        self.state = torch.zeros(num_envs, 2)
        self.episode_length_buf = torch.zeros(num_envs, dtype=torch.long)
        self.episode_return = torch.zeros(num_envs)
        self._reset(torch.ones(num_envs, dtype=torch.bool))

    def _reset(self, ids: torch.Tensor) -> None:
        n = int(ids.sum())
        self.state[ids] = torch.stack([torch.rand(n, generator=self.gen) * 2 - 1, torch.zeros(n)], dim=1)
        self.episode_length_buf[ids] = 0
        self.episode_return[ids] = 0

    def get_observations(self) -> TensorDict:
        return TensorDict({"policy": self.state.clone()}, batch_size=[self.num_envs])

    def step(self, actions: torch.Tensor):
        force = actions.clamp(-1, 1)[:, 0]
        self.state[:, 1] += 0.05 * force
        self.state[:, 0] += 0.05 * self.state[:, 1]
        rewards = -self.state[:, 0].abs()
        self.episode_return += rewards
        self.episode_length_buf += 1
        dones = self.episode_length_buf >= self.max_episode_length
        extras = {"time_outs": dones.clone()}
        if dones.any():
            # "log" entries with a slash keep their name in the writer; the others go under Episode/.
            extras["log"] = {"Metrics/final_distance": self.state[dones, 0].abs().mean(), "return": self.episode_return[dones].mean()}
            self._reset(dones)
        return self.get_observations(), rewards, dones.float(), extras


def train_cfg() -> dict:
    return {
        "num_steps_per_env": 24,
        "save_interval": 1000,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "algorithm": {"class_name": "PPO", "num_learning_epochs": 4, "num_mini_batches": 4, "learning_rate": 1e-3},
        "actor": {"class_name": "MLPModel", "hidden_dims": [32, 32], "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0}},
        "critic": {"class_name": "MLPModel", "hidden_dims": [32, 32]},
        "logger": {"class_name": "tally.integrations.rsl_rl:LogWriter"},  # was: "tensorboard"
    }


def main(argv: list[str] | None = None, cfg: dict | None = None) -> OnPolicyRunner:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--log-dir", default="logs/rsl_rl_point_mass")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    runner = OnPolicyRunner(PointMass(seed=args.seed), cfg or train_cfg(), log_dir=args.log_dir, device="cpu")
    runner.learn(args.iterations)
    return runner


if __name__ == "__main__":
    main()
