"""A small numpy training loop logging through tally: the live panel while it runs, and a run
directory (event file, run_config.json, run_summary.json) when it is done.

The task: 256 parallel 1-D point masses must reach a target; a linear Gaussian policy is
trained on-policy with REINFORCE and a linear value baseline (plain numpy, no torch).

    pip install .            # or: maturin develop
    python examples/python/train_loop.py --iterations 300
    tensorboard --logdir logs

Only rank 0 of a real job would do this; see tally.distributed for multi-rank runs.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import tally

HORIZON = 64
DT = 0.05


def rollout(rng, w, log_std, num_envs):
    """One batch of episodes: (features, actions, returns, reward terms, lengths, timeouts)."""
    pos = rng.uniform(-1.0, 1.0, num_envs)
    vel = np.zeros(num_envs)
    target = rng.uniform(-1.0, 1.0, num_envs)
    feats, acts, rews = [], [], []
    tracking = action_rate = 0.0
    last = np.zeros(num_envs)
    for _ in range(HORIZON):
        x = np.stack([target - pos, -vel, np.ones(num_envs)], axis=1)
        a = x @ w + np.exp(log_std) * rng.standard_normal(num_envs)
        vel = 0.9 * vel + DT * np.clip(a, -5, 5)
        pos = pos + DT * vel
        r_track = -np.abs(target - pos)
        r_rate = -0.01 * (a - last) ** 2
        last = a
        feats.append(x)
        acts.append(a)
        rews.append(r_track + r_rate)
        tracking += r_track.mean()
        action_rate += r_rate.mean()
    rews = np.array(rews)  # (T, N)
    returns = np.cumsum(rews[::-1], axis=0)[::-1]  # reward-to-go
    reached = np.abs(target - pos) < 0.05
    return (np.array(feats), np.array(acts), returns, {"tracking": tracking / HORIZON, "action_rate": action_rate / HORIZON},
            rews.sum(axis=0), float(1.0 - reached.mean()))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--log-root", default="logs")
    ap.add_argument("--panel", default="auto", choices=["auto", "on", "plain", "off"])
    ap.add_argument("--lr", type=float, default=1.0)
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    w = np.zeros(3)  # policy mean weights
    log_std = np.log(0.8)
    v = np.zeros(3)  # value baseline weights
    recent: list = []

    config = {"algo": {"name": "reinforce", "lr": args.lr, "horizon": HORIZON}, "num_envs": args.num_envs}
    with tally.Logger(algo="ppo", task="point_reach", sim="numpy", max_iterations=args.iterations, num_envs=args.num_envs,
                      profile="onpolicy", log_root=args.log_root, panel=args.panel, config=config) as log:  # fmt: skip
        log.status("Training a linear Gaussian policy with REINFORCE")
        for it in range(args.iterations):  # on-policy runners count iterations from 0
            t_iter = time.perf_counter()
            t0 = time.perf_counter()
            feats, acts, returns, terms, ep_returns, timeout_rate = rollout(rng, w, log_std, args.num_envs)
            rollout_s = time.perf_counter() - t0

            with log.phase("learning"):
                x = feats.reshape(-1, 3)
                g = returns.reshape(-1)
                baseline = x @ v
                adv = g - baseline
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                mean = x @ w
                std = np.exp(log_std)
                z = (acts.reshape(-1) - mean) / std
                surrogate = -(adv * (-0.5 * z**2 - log_std)).mean()
                w += args.lr * (adv * z / std) @ x / len(adv)
                log_std = float(np.clip(log_std + args.lr * (adv * (z**2 - 1)).mean(), np.log(0.05), np.log(2.0)))
                v_err = g - baseline
                v += 0.5 * args.lr * (v_err @ x) / len(v_err)
                value_loss = float((v_err**2).mean())

            recent = (recent + list(ep_returns))[-100:]
            steps = args.num_envs * HORIZON
            log.step(
                it,
                env_steps=steps * (it + 1),
                metrics={
                    "Loss/surrogate": surrogate,
                    "Loss/value": value_loss,
                    "Loss/entropy": 0.5 * np.log(2 * np.pi * np.e) + log_std,
                    "Loss/learning_rate": args.lr,
                    "Policy/mean_std": np.exp(log_std),
                },
                collector={"rollout": rollout_s},
                rewards=terms,
                episode_return=float(np.mean(recent)),
                episode_length=float(HORIZON),
                timeout_rate=timeout_rate,
                steps_this_iter=steps,
                iteration_time=time.perf_counter() - t_iter,
            )
        log.checkpoint_saved(f"{log.run_dir}/policy_final.npy")
        np.save(log.run_dir / "policy_final.npy", np.append(w, log_std))
    print(f"run directory: {log.run_dir}")


if __name__ == "__main__":
    main()
