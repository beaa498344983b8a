"""TorchRL logging through tally: a cross-entropy-method search for a linear Pendulum policy,
run with TorchRL's ``GymEnv`` and ``rollout``, logged through TorchRL's ``TensorboardLogger``
API with one changed import.

    pip install tally-rl torchrl gymnasium
    python examples/python/torchrl_cem_pendulum.py --iterations 30
    tensorboard --logdir runs

``log_scalar``, ``log_histogram`` and ``log_hparams`` (and TorchRL trainers' logging hooks)
are TorchRL's own; the writer underneath is ``tally.SummaryWriter``.
"""

from __future__ import annotations

import argparse

import torch
from torchrl.envs import GymEnv

from tally.integrations.torchrl import TensorboardLogger  # was: from torchrl.record.loggers import TensorboardLogger


def episode_return(env: GymEnv, weights: torch.Tensor, steps: int) -> float:
    """The return of one episode under the linear policy ``action = tanh(obs @ w) * 2``."""

    def policy(td):
        td["action"] = (torch.tanh(td["observation"] @ weights) * 2).unsqueeze(-1)
        return td

    td = env.rollout(steps, policy)
    return float(td["next", "reward"].sum())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--population", type=int, default=16)
    ap.add_argument("--elite", type=int, default=4)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--log-dir", default="runs")
    ap.add_argument("--exp-name", default="torchrl_cem_pendulum")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    logger = TensorboardLogger(exp_name=args.exp_name, log_dir=args.log_dir)
    logger.log_hparams({k: v for k, v in vars(args).items() if k not in ("log_dir", "exp_name")})
    torch.manual_seed(args.seed)
    env = GymEnv("Pendulum-v1")
    mean, std = torch.zeros(3), torch.ones(3)
    for it in range(args.iterations):
        env.set_seed(args.seed + it)  # every candidate of an iteration faces the same episode
        candidates = mean + std * torch.randn(args.population, 3)
        returns = torch.tensor([episode_return(env, w, args.steps) for w in candidates])
        elite = candidates[returns.argsort(descending=True)[: args.elite]]
        mean, std = elite.mean(0), elite.std(0) + 0.05
        logger.log_scalar("train/return_mean", returns.mean().item(), step=it)
        logger.log_scalar("train/return_best", returns.max().item(), step=it)
        logger.log_scalar("train/policy_std", std.mean().item(), step=it)
        logger.log_histogram("train/returns", returns, step=it, bins="tensorflow")
    env.close()
    logger.experiment.close()


if __name__ == "__main__":
    main()
