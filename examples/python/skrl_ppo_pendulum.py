"""skrl's PPO on gymnasium's Pendulum logging through tally: one call before the trainer is
built hands every skrl agent a ``tally.SummaryWriter``.

    pip install tally-rl skrl gymnasium
    python examples/python/skrl_ppo_pendulum.py --timesteps 20000
    tensorboard --logdir runs

skrl's tags (``Reward / Total reward (mean)``, ``Loss / Policy loss``...), its write interval
and its experiment directory are unchanged.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import torch
import torch.nn as nn
from skrl.agents.torch import ExperimentCfg
from skrl.agents.torch.ppo import PPO, PPO_CFG
from skrl.envs.wrappers.torch import wrap_env
from skrl.memories.torch import RandomMemory
from skrl.models.torch import DeterministicMixin, GaussianMixin, Model
from skrl.trainers.torch import SequentialTrainer
from skrl.utils import set_seed

import tally.integrations.skrl

tally.integrations.skrl.install()  # the one line: skrl's agents now write through tally


class Policy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space=observation_space, action_space=action_space, device=device)
        GaussianMixin.__init__(self, clip_actions=True)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 64), nn.ELU(), nn.Linear(64, self.num_actions))
        self.log_std = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role=""):
        return 2 * torch.tanh(self.net(inputs["observations"])), {"log_std": self.log_std}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space=observation_space, action_space=action_space, device=device)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 64), nn.ELU(), nn.Linear(64, 1))

    def compute(self, inputs, role=""):
        return self.net(inputs["observations"]), {}


def main(argv: list[str] | None = None) -> PPO:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timesteps", type=int, default=20_000)
    ap.add_argument("--log-dir", default="runs")
    ap.add_argument("--exp-name", default="skrl_ppo_pendulum")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    set_seed(args.seed)
    env = wrap_env(gym.make_vec("Pendulum-v1", num_envs=4, vectorization_mode="sync"))
    device = env.device
    models = {"policy": Policy(env.observation_space, env.action_space, device), "value": Value(env.observation_space, env.action_space, device)}
    cfg = PPO_CFG(
        rollouts=256,
        learning_epochs=4,
        mini_batches=4,
        experiment=ExperimentCfg(directory=args.log_dir, experiment_name=args.exp_name, write_interval=256, checkpoint_interval=0),
    )
    memory = RandomMemory(memory_size=cfg.rollouts, num_envs=env.num_envs, device=device)
    agent = PPO(models=models, memory=memory, observation_space=env.observation_space, action_space=env.action_space, device=device, cfg=cfg)
    trainer_cfg = {"timesteps": args.timesteps, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
    SequentialTrainer(env=env, agents=agent, cfg=trainer_cfg).train()
    env.close()
    return agent


if __name__ == "__main__":
    main()
