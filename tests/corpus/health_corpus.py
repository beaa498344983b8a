"""Writes the health corpus: small real runs, healthy and with planted faults, of
stable-baselines3, CleanRL-shaped loops, an rsl_rl-style loop and tally.Logger loops, each into
tests/fixtures/health_corpus/<name>/, and manifest.json beside them with each planted fault's
rule, tag, step and bound (docs/contract/health.md "Honesty").

    make health-corpus                      # every run (needs torch, gymnasium, stable-baselines3)
    python tests/corpus/health_corpus.py --only cleanrl_ppo_cartpole

A fault's `step` is the env step (or iteration, for loops stepping by iteration) where it was
planted; `within` is how many steps after it the rule must have fired.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "health_corpus"
sys.path.insert(0, str(ROOT / "python"))

import gymnasium as gym  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

torch.set_num_threads(1)

RUNS: Dict[str, Callable[[Path], Dict[str, Any]]] = {}


def run(fn: Callable[[Path], Dict[str, Any]]) -> Callable[[Path], Dict[str, Any]]:
    RUNS[fn.__name__] = fn
    return fn


def writer(kind: str, d: Path) -> Any:
    """torch's SummaryWriter or tally's, writing into `d`."""
    if kind == "torch":
        from torch.utils.tensorboard import SummaryWriter

        return SummaryWriter(str(d), flush_secs=5)
    import tally

    return tally.SummaryWriter(str(d))


def fault(rule: str, tag: str, step: int, within: int, what: str) -> Dict[str, Any]:
    return {"rule": rule, "tag": tag, "step": int(step), "within": int(within), "what": what}


class Halving:
    """A real halving of the throughput, not a logged one: after `after_s` seconds of the run,
    each period (from one tick to the next) is slept again as long as it took, for `slow_s`
    seconds; then `done`. Time, not steps, so the slow stretch lasts as long on a
    loaded machine as on an idle one. `at` is the step it began at; `pace` the steps per second
    while slow."""

    last: Optional["Halving"] = None

    def __init__(self, on: bool, after_s: float = 30.0, slow_s: float = 60.0) -> None:
        self.on, self.after_s, self.slow_s = on, after_s, slow_s
        self.start = self.last_tick = time.perf_counter()
        self.durations: List[float] = []
        self.at: Optional[int] = None
        self.mark: Optional[tuple] = None  # (step, time) where the pace before is measured from
        self.since = 0.0
        self.step = 0
        Halving.last = self

    def tick(self, step: int) -> None:
        now = time.perf_counter()
        took, self.last_tick, self.step = now - self.last_tick, now, step
        if not self.on:
            return
        if self.at is None:
            self.durations.append(took)
            if self.mark is None and now - self.start >= self.after_s / 3:
                self.mark = (step, now)
            if now - self.start >= self.after_s:
                self.at, self.since = step, now
            return
        time.sleep(took)  # this period again: half the pace whatever the machine's load now
        self.last_tick = time.perf_counter()

    @property
    def done(self) -> bool:
        return self.at is not None and time.perf_counter() - self.since >= self.slow_s

    def fault(self, tag: str, what: str) -> Dict[str, Any]:
        """The planted fault: found within 40 s of slow wall time (20 s the rule waits, the rest
        the logging cadence), in steps at the slow pace."""
        assert self.at is not None and self.mark is not None, "the run ended before it was slowed"
        pace = (self.step - self.at) / max(self.last_tick - self.since, 1e-9)
        before = (self.at - self.mark[0]) / max(self.since - self.mark[1], 1e-9)
        f = fault("throughput", tag, self.at, int(40 * pace), what)
        # The machine's load moves too: a halving it hid (the slowed pace not below 0.6 of the
        # pace before) is planted again (main()).
        f["observed"] = round(pace / before, 3)
        return f


# ---------------------------------------------------------------- stable-baselines3


def sb3_logger(kind: str, d: Path) -> Any:
    if kind == "tally":
        from tally.integrations.sb3 import configure

        return configure(str(d), ["tally"])
    from stable_baselines3.common.logger import configure

    return configure(str(d), ["tensorboard"])


class Plant(gym.Wrapper):
    """Env-side faults from env step `at`: a NaN reward once, rewards × `scale`, or episodes
    that never end (the reward statistics freeze)."""

    def __init__(self, env: gym.Env, at: Optional[int], nan: bool = False, scale: float = 1.0, endless: bool = False) -> None:
        super().__init__(env)
        self.at, self.nan, self.scale, self.endless, self.t = at, nan, scale, endless, 0

    def reset(self, **kw: Any) -> Any:
        return self.env.reset(**kw)

    def step(self, a: Any) -> Any:
        o, r, term, trunc, info = self.env.step(a)
        self.t += 1
        if self.at is not None and self.t >= self.at:
            if self.nan and self.t == self.at:
                r = float("nan")
            r = r * self.scale
            if self.endless:
                term = trunc = False
        return o, r, term, trunc, info


#: PPO's settings here: a rollout of 256 steps, so a short run logs often.
PPO = {"n_steps": 256, "batch_size": 64, "n_epochs": 4}


def sb3_run(d: Path, algo: str, env_id: str, steps: int, kind: str, *, at: Optional[int] = None, nan: bool = False,
            scale: float = 1.0, endless: bool = False, slow: bool = False, ent_at: Optional[int] = None,
            **kw: Any) -> None:  # fmt: skip
    import stable_baselines3 as sb3
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.monitor import Monitor

    env = Monitor(Plant(gym.make(env_id), at, nan=nan, scale=scale, endless=endless))
    model = getattr(sb3, algo)("MlpPolicy", env, seed=1, device="cpu", **kw)
    model.set_logger(sb3_logger(kind, d))
    halving = Halving(slow)

    class Cb(BaseCallback):
        def _on_rollout_end(self) -> None:
            # From one rollout's end to the next: a rollout and a training, slept again.
            halving.tick(self.num_timesteps)

        def _on_step(self) -> bool:
            if halving.done:
                return False
            if ent_at is not None and self.num_timesteps >= ent_at:
                # An entropy penalty and a learning rate 20 times too high: the std collapses.
                self.model.ent_coef = -1.0
                self.model.lr_schedule = lambda _: 6e-3
            return True

    try:
        model.learn(steps, callback=Cb(), log_interval=_sb3_log_interval(algo))
    except ValueError as e:  # a NaN policy: torch's distributions refuse it
        print(f"  ended by {type(e).__name__}: {str(e)[:80]}")
        model.logger.dump(model.num_timesteps)
    model.logger.close()


def _sb3_log_interval(algo: str) -> int:
    return {"PPO": 1, "A2C": 20, "DQN": 4, "SAC": 1, "TD3": 1}[algo]


@run
def sb3_ppo_cartpole(d: Path) -> Dict[str, Any]:
    sb3_run(d, "PPO", "CartPole-v1", 16_000, "torch", **PPO)
    return {"framework": "stable-baselines3", "writer": "torch", "faults": []}


@run
def sb3_ppo_pendulum(d: Path) -> Dict[str, Any]:
    sb3_run(d, "PPO", "Pendulum-v1", 10_000, "tally", **PPO)
    return {"framework": "stable-baselines3", "writer": "tally", "faults": []}


@run
def sb3_a2c_cartpole(d: Path) -> Dict[str, Any]:
    sb3_run(d, "A2C", "CartPole-v1", 20_000, "torch")
    return {"framework": "stable-baselines3", "writer": "torch", "faults": []}


@run
def sb3_dqn_cartpole(d: Path) -> Dict[str, Any]:
    sb3_run(d, "DQN", "CartPole-v1", 10_000, "tally", learning_starts=2_000, train_freq=4, target_update_interval=500)
    return {"framework": "stable-baselines3", "writer": "tally", "faults": []}


@run
def sb3_sac_pendulum(d: Path) -> Dict[str, Any]:
    sb3_run(d, "SAC", "Pendulum-v1", 2_000, "torch", learning_starts=400, policy_kwargs={"net_arch": [64, 64]})
    return {"framework": "stable-baselines3", "writer": "torch", "faults": []}


@run
def sb3_td3_pendulum(d: Path) -> Dict[str, Any]:
    sb3_run(d, "TD3", "Pendulum-v1", 2_400, "tally", learning_starts=400, policy_kwargs={"net_arch": [64, 64]})
    return {"framework": "stable-baselines3", "writer": "tally", "faults": []}


@run
def sb3_ppo_cartpole_nan(d: Path) -> Dict[str, Any]:
    sb3_run(d, "PPO", "CartPole-v1", 8_000, "torch", at=5_000, nan=True, **PPO)
    return {"framework": "stable-baselines3", "writer": "torch",
            "faults": [fault("nonfinite", "", 5_000, 2 * 256, "a NaN reward at one env step (the episode's return, then the policy)")]}  # fmt: skip


@run
def sb3_ppo_cartpole_diverge(d: Path) -> Dict[str, Any]:
    sb3_run(d, "PPO", "CartPole-v1", 8_000, "torch", at=5_000, scale=1e4, **PPO)
    return {"framework": "stable-baselines3", "writer": "torch",
            "faults": [fault("divergence", "train/value_loss", 5_000, 4 * 256, "rewards × 1e4 from this step")]}  # fmt: skip


@run
def sb3_ppo_pendulum_collapse(d: Path) -> Dict[str, Any]:
    sb3_run(d, "PPO", "Pendulum-v1", 12_000, "tally", ent_at=4_000, **PPO)
    return {"framework": "stable-baselines3", "writer": "tally",
            "faults": [fault("collapse", "", 4_000, 8_000, "an entropy penalty (ent_coef -1) and a 20x learning rate from this step")]}  # fmt: skip


@run
def sb3_ppo_cartpole_slow(d: Path) -> Dict[str, Any]:
    sb3_run(d, "PPO", "CartPole-v1", 1_000_000, "torch", slow=True, **PPO)
    return {"framework": "stable-baselines3", "writer": "torch",
            "faults": [Halving.last.fault("", "every rollout and its training twice as long from this step")]}  # fmt: skip


@run
def sb3_a2c_cartpole_frozen(d: Path) -> Dict[str, Any]:
    sb3_run(d, "A2C", "CartPole-v1", 12_000, "torch", at=6_000, endless=True)
    return {"framework": "stable-baselines3", "writer": "torch",
            "faults": [fault("flat_for", "rollout/ep_rew_mean", 6_000, 3_000, "no episode ends from this step")]}  # fmt: skip


@run
def sb3_dqn_cartpole_slow(d: Path) -> Dict[str, Any]:
    sb3_run(d, "DQN", "CartPole-v1", 1_000_000, "tally", slow=True, learning_starts=2_000, train_freq=4,
            target_update_interval=500)  # fmt: skip
    return {"framework": "stable-baselines3", "writer": "tally",
            "faults": [Halving.last.fault("", "every rollout and its training twice as long from this step")]}  # fmt: skip


# ---------------------------------------------------------------- CleanRL-shaped loops


def layer(i: int, o: int, std: float = math.sqrt(2)) -> nn.Linear:
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


def cleanrl_ppo(d: Path, kind: str, *, continuous: bool = False, steps: int = 10_000, seed: int = 1,
                nan_at: Optional[int] = None, ent_at: Optional[int] = None, slow: bool = False,
                scale_at: Optional[int] = None) -> None:  # fmt: skip
    """CleanRL's ppo.py / ppo_continuous_action.py, shortened: same tags, same learning-rate
    anneal, same clip fraction and KL estimates."""
    from torch.distributions import Categorical, Normal

    torch.manual_seed(seed)
    n_envs, n_steps, epochs, mb = 4, 64, 4, 4
    env_id = "Pendulum-v1" if continuous else "CartPole-v1"
    envs = gym.vector.SyncVectorEnv([lambda: gym.wrappers.RecordEpisodeStatistics(gym.make(env_id)) for _ in range(n_envs)],
                                    autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)  # fmt: skip
    obs_dim = envs.single_observation_space.shape[0]
    act_dim = envs.single_action_space.shape[0] if continuous else envs.single_action_space.n
    critic = nn.Sequential(layer(obs_dim, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, 1, 1.0))
    actor = nn.Sequential(layer(obs_dim, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, act_dim, 0.01))
    logstd = nn.Parameter(torch.zeros(1, act_dim))
    params = list(critic.parameters()) + list(actor.parameters()) + ([logstd] if continuous else [])
    lr = 3e-4 if continuous else 2.5e-4
    opt = torch.optim.Adam(params, lr=lr, eps=1e-5)

    def dist(x: torch.Tensor) -> Any:
        if continuous:
            m = actor(x)
            return Normal(m, logstd.expand_as(m).exp())
        return Categorical(logits=actor(x))

    w = writer(kind, d)
    batch = n_envs * n_steps
    iters = steps // batch
    obs, _ = envs.reset(seed=seed)
    obs = torch.tensor(obs, dtype=torch.float32)
    global_step, start = 0, time.time()
    halving = Halving(slow)
    ent_coef = 0.0 if continuous else 0.01
    try:
        for it in range(1, iters + 1):
            opt.param_groups[0]["lr"] = (1.0 - (it - 1.0) / iters) * lr
            if ent_at is not None and global_step >= ent_at:
                # An entropy penalty and a learning rate 20 times too high: the policy collapses.
                ent_coef = -1.0
                opt.param_groups[0]["lr"] = 20 * lr
            bo, ba, blp, br, bd, bv = [], [], [], [], [], []
            for _ in range(n_steps):
                global_step += n_envs
                with torch.no_grad():
                    p = dist(obs)
                    a = p.sample()
                    lp = p.log_prob(a).sum(-1) if continuous else p.log_prob(a)
                    v = critic(obs).flatten()
                nobs, r, term, trunc, info = envs.step(a.numpy())
                if scale_at is not None and global_step >= scale_at:
                    r = r * 1e4
                bo.append(obs), ba.append(a), blp.append(lp), bv.append(v)
                br.append(torch.tensor(r, dtype=torch.float32)), bd.append(torch.tensor(term | trunc, dtype=torch.float32))
                obs = torch.tensor(nobs, dtype=torch.float32)
                if "episode" in info:
                    for i in np.nonzero(info["_episode"])[0]:
                        w.add_scalar("charts/episodic_return", float(info["episode"]["r"][i]), global_step)
                        w.add_scalar("charts/episodic_length", float(info["episode"]["l"][i]), global_step)
            with torch.no_grad():
                nv = critic(obs).flatten()
                adv = torch.zeros(n_steps, n_envs)
                last = torch.zeros(n_envs)
                for t in reversed(range(n_steps)):
                    nextv = nv if t == n_steps - 1 else bv[t + 1]
                    nonterm = 1.0 - bd[t]
                    delta = br[t] + 0.99 * nextv * nonterm - bv[t]
                    last = delta + 0.99 * 0.95 * nonterm * last
                    adv[t] = last
                ret = adv + torch.stack(bv)
            O, A, LP = torch.cat(bo), torch.cat(ba), torch.cat(blp)
            ADV, RET, V = adv.flatten(), ret.flatten(), torch.stack(bv).flatten()
            idx = np.arange(batch)
            clipfracs = []
            for _ in range(epochs):
                np.random.shuffle(idx)
                for s in range(0, batch, batch // mb):
                    j = idx[s : s + batch // mb]
                    p = dist(O[j])
                    nlp = p.log_prob(A[j]).sum(-1) if continuous else p.log_prob(A[j])
                    ent = p.entropy().sum(-1) if continuous else p.entropy()
                    ratio = (nlp - LP[j]).exp()
                    with torch.no_grad():
                        old_kl = (-(nlp - LP[j])).mean()
                        approx_kl = ((ratio - 1) - (nlp - LP[j])).mean()
                        clipfracs.append(((ratio - 1.0).abs() > 0.2).float().mean().item())
                    madv = ADV[j]
                    madv = (madv - madv.mean()) / (madv.std() + 1e-8)
                    pg = torch.max(-madv * ratio, -madv * ratio.clamp(0.8, 1.2)).mean()
                    vl = 0.5 * ((critic(O[j]).flatten() - RET[j]) ** 2).mean()
                    if nan_at is not None and global_step >= nan_at and s + batch // mb >= batch and _ == epochs - 1:
                        vl = vl * float("nan")  # the last minibatch's value loss: logged, then the policy is NaN
                    el = ent.mean()
                    loss = pg - ent_coef * el + 0.5 * vl
                    opt.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(params, 0.5)
                    opt.step()
            yp, yt = V.numpy(), RET.numpy()
            var_y = np.var(yt)
            w.add_scalar("charts/learning_rate", opt.param_groups[0]["lr"], global_step)
            w.add_scalar("losses/value_loss", vl.item(), global_step)
            w.add_scalar("losses/policy_loss", pg.item(), global_step)
            w.add_scalar("losses/entropy", el.item(), global_step)
            w.add_scalar("losses/old_approx_kl", old_kl.item(), global_step)
            w.add_scalar("losses/approx_kl", approx_kl.item(), global_step)
            w.add_scalar("losses/clipfrac", float(np.mean(clipfracs)), global_step)
            w.add_scalar("losses/explained_variance", float(np.nan if var_y == 0 else 1 - np.var(yt - yp) / var_y), global_step)
            w.add_scalar("charts/SPS", int(global_step / (time.time() - start)), global_step)
            halving.tick(global_step)
            if halving.done:
                break
    except ValueError as e:  # a NaN policy: torch's distributions refuse it
        print(f"  ended by {type(e).__name__}: {str(e)[:80]}")
    w.close()


@run
def cleanrl_ppo_cartpole(d: Path) -> Dict[str, Any]:
    cleanrl_ppo(d, "torch")
    return {"framework": "cleanrl", "writer": "torch", "faults": []}


@run
def cleanrl_ppo_cartpole_tally(d: Path) -> Dict[str, Any]:
    cleanrl_ppo(d, "tally", seed=2)
    return {"framework": "cleanrl", "writer": "tally", "faults": []}


@run
def cleanrl_ppo_pendulum(d: Path) -> Dict[str, Any]:
    cleanrl_ppo(d, "torch", continuous=True)
    return {"framework": "cleanrl", "writer": "torch", "faults": []}


@run
def cleanrl_ppo_cartpole_nan(d: Path) -> Dict[str, Any]:
    cleanrl_ppo(d, "tally", nan_at=5_000)
    return {"framework": "cleanrl", "writer": "tally",
            "faults": [fault("nonfinite", "losses/value_loss", 5_000, 256, "the value loss × NaN from this step")]}  # fmt: skip


@run
def cleanrl_ppo_cartpole_collapse(d: Path) -> Dict[str, Any]:
    cleanrl_ppo(d, "torch", ent_at=3_000)
    return {"framework": "cleanrl", "writer": "torch",
            "faults": [fault("collapse", "losses/entropy", 3_000, 6_000, "an entropy penalty (ent_coef -1) and a 20x learning rate from this step")]}  # fmt: skip


@run
def cleanrl_ppo_pendulum_collapse(d: Path) -> Dict[str, Any]:
    cleanrl_ppo(d, "tally", continuous=True, ent_at=3_000)
    return {"framework": "cleanrl", "writer": "tally",
            "faults": [fault("collapse", "losses/entropy", 3_000, 6_000, "an entropy penalty (ent_coef -1) and a 20x learning rate from this step")]}  # fmt: skip


@run
def cleanrl_ppo_cartpole_slow(d: Path) -> Dict[str, Any]:
    cleanrl_ppo(d, "torch", steps=1_000_000, slow=True)
    return {"framework": "cleanrl", "writer": "torch", "faults": [Halving.last.fault("charts/SPS", "each iteration twice as long from this step")]}


@run
def cleanrl_ppo_pendulum_diverge(d: Path) -> Dict[str, Any]:
    cleanrl_ppo(d, "torch", continuous=True, scale_at=5_000)
    return {"framework": "cleanrl", "writer": "torch",
            "faults": [fault("divergence", "losses/value_loss", 5_000, 4 * 256, "rewards × 1e4 from this step")]}  # fmt: skip


def cleanrl_dqn(d: Path, kind: str, *, steps: int = 10_000, seed: int = 1, slow: bool = False) -> None:
    """CleanRL's dqn.py, shortened: same tags, logged every 100 steps once learning starts."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    env = gym.wrappers.RecordEpisodeStatistics(gym.make("CartPole-v1"))
    q = nn.Sequential(nn.Linear(4, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 2))
    tq = nn.Sequential(nn.Linear(4, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 2))
    tq.load_state_dict(q.state_dict())
    opt = torch.optim.Adam(q.parameters(), lr=2.5e-4)
    learning_starts, size = 2_000, 10_000
    bo, ba, br, bn, bd = (np.zeros((size, 4), np.float32), np.zeros(size, np.int64), np.zeros(size, np.float32),
                          np.zeros((size, 4), np.float32), np.zeros(size, np.float32))  # fmt: skip
    w = writer(kind, d)
    obs, _ = env.reset(seed=seed)
    start = time.time()
    halving = Halving(slow)
    for global_step in range(steps):
        eps = max(0.05, 1.0 - 0.95 * global_step / 5_000)
        if rng.random() < eps:
            a = int(rng.integers(2))
        else:
            a = int(q(torch.tensor(obs)).argmax().item())
        nobs, r, term, trunc, info = env.step(a)
        if "episode" in info:
            w.add_scalar("charts/episodic_return", float(info["episode"]["r"]), global_step)
            w.add_scalar("charts/episodic_length", float(info["episode"]["l"]), global_step)
        i = global_step % size
        bo[i], ba[i], br[i], bn[i], bd[i] = obs, a, r, nobs, float(term)
        obs = nobs
        if term or trunc:
            obs, _ = env.reset()
        if global_step > learning_starts:
            if global_step % 10 == 0:
                j = rng.integers(min(global_step, size), size=128)
                with torch.no_grad():
                    target = torch.tensor(br[j]) + 0.99 * tq(torch.tensor(bn[j])).max(1).values * (1 - torch.tensor(bd[j]))
                old = q(torch.tensor(bo[j])).gather(1, torch.tensor(ba[j])[:, None]).squeeze()
                loss = nn.functional.mse_loss(target, old)
                if global_step % 100 == 0:
                    w.add_scalar("losses/td_loss", loss.item(), global_step)
                    w.add_scalar("losses/q_values", old.mean().item(), global_step)
                    w.add_scalar("charts/SPS", int(global_step / (time.time() - start)), global_step)
                opt.zero_grad()
                loss.backward()
                opt.step()
            if global_step % 500 == 0:
                tq.load_state_dict(q.state_dict())
        if global_step % 100 == 0:
            halving.tick(global_step)
            if halving.done:
                break
    w.close()


@run
def cleanrl_dqn_cartpole(d: Path) -> Dict[str, Any]:
    cleanrl_dqn(d, "torch")
    return {"framework": "cleanrl", "writer": "torch", "faults": []}


@run
def cleanrl_dqn_cartpole_tally(d: Path) -> Dict[str, Any]:
    cleanrl_dqn(d, "tally", seed=2)
    return {"framework": "cleanrl", "writer": "tally", "faults": []}


@run
def cleanrl_dqn_cartpole_slow(d: Path) -> Dict[str, Any]:
    cleanrl_dqn(d, "tally", steps=1_000_000, slow=True)
    return {"framework": "cleanrl", "writer": "tally", "faults": [Halving.last.fault("charts/SPS", "every 100 steps twice as long from this step")]}


# ---------------------------------------------------------------- rsl_rl-style and tally.Logger loops


def point_mass_ppo(d: Path, style: str, *, iters: int = 150, seed: int = 1, clamp_at: Optional[int] = None,
                   freeze_at: Optional[int] = None, slow: bool = False, stall_at: Optional[int] = None,
                   nan_at: Optional[int] = None) -> None:  # fmt: skip
    """A batched torch PPO on 256 1-D point masses, logged as rsl_rl's runner logs (rsl_rl's
    tags through tally.SummaryWriter, step = iteration) or through tally.Logger."""
    import tally

    torch.manual_seed(seed)
    n, horizon = 128, 16
    actor = nn.Sequential(nn.Linear(2, 32), nn.ELU(), nn.Linear(32, 1))
    critic = nn.Sequential(nn.Linear(2, 32), nn.ELU(), nn.Linear(32, 1))
    log_std = nn.Parameter(torch.zeros(1))
    opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()) + [log_std], lr=1e-3)
    state = torch.rand(n, 2) * 2 - 1
    ep_ret, ep_len = torch.zeros(n), torch.zeros(n)
    recent: List[float] = []
    halving = Halving(slow)
    if style == "rsl_rl":
        w = tally.SummaryWriter(str(d))
        log = None
    else:
        w = None
        log = tally.Logger(algo="ppo", task="point_mass", sim="torch", max_iterations=iters, num_envs=n, profile="onpolicy",
                           log_dir=str(d), panel="off", health=False)  # fmt: skip
    frozen: Optional[float] = None
    try:
        for it in range(iters):
            t0 = time.perf_counter()
            obs, acts, logps, rews, vals, dones = [], [], [], [], [], []
            for _ in range(horizon):
                with torch.no_grad():
                    mu = actor(state)
                    std = log_std.exp().expand_as(mu)
                    p = torch.distributions.Normal(mu, std)
                    a = p.sample()
                    obs.append(state.clone()), acts.append(a), logps.append(p.log_prob(a).sum(-1)), vals.append(critic(state).flatten())
                state[:, 1] += 0.05 * a.clamp(-1, 1)[:, 0]
                state[:, 0] += 0.05 * state[:, 1]
                r = -state[:, 0].abs()
                ep_ret += r
                ep_len += 1
                done = ep_len >= 100
                if freeze_at is None or it < freeze_at:
                    recent.extend(ep_ret[done].tolist())
                    recent = recent[-100:]
                ep_ret[done], ep_len[done] = 0, 0
                state[done] = torch.cat([torch.rand(int(done.sum()), 1) * 2 - 1, torch.zeros(int(done.sum()), 1)], 1)
                rews.append(r), dones.append(done.float())
            collect = time.perf_counter() - t0
            t1 = time.perf_counter()
            O, A, LP = torch.cat(obs), torch.cat(acts), torch.cat(logps)
            V = torch.stack(vals)
            ret = torch.zeros(horizon, n)
            g = critic(state).flatten().detach()
            for t in reversed(range(horizon)):
                g = rews[t] + 0.99 * g * (1 - dones[t])
                ret[t] = g
            RET = ret.flatten()
            ADV = RET - V.flatten()
            ADV = (ADV - ADV.mean()) / (ADV.std() + 1e-8)
            for _ in range(4):
                mu = actor(O)
                p = torch.distributions.Normal(mu, log_std.exp().expand_as(mu))
                ratio = (p.log_prob(A).sum(-1) - LP).exp()
                surr = torch.max(-ADV * ratio, -ADV * ratio.clamp(0.8, 1.2)).mean()
                vloss = ((critic(O).flatten() - RET) ** 2).mean()
                ent = p.entropy().sum(-1).mean()
                if nan_at is not None and it >= nan_at and _ == 3:
                    vloss = vloss * float("nan")  # the last epoch's value loss: logged, then the policy is NaN
                loss = surr + vloss - 0.005 * ent
                opt.zero_grad()
                loss.backward()
                opt.step()
            if clamp_at is not None and it >= clamp_at:
                with torch.no_grad():  # a bad std clamp: the policy stops exploring
                    log_std.clamp_(max=math.log(0.0067))
            learn = time.perf_counter() - t1
            if stall_at is not None and it == stall_at:
                time.sleep(75.0)
            halving.tick(it)
            if halving.done:
                break
            it_time = time.perf_counter() - t0
            fps = n * horizon / it_time
            mean_rew = float(np.mean(recent)) if recent else 0.0
            if freeze_at is not None and it >= freeze_at:
                frozen = mean_rew if frozen is None else frozen
                mean_rew = frozen
            std_now = float(log_std.exp().item())
            if w is not None:
                w.add_scalar("Loss/value_function", vloss.item(), it)
                w.add_scalar("Loss/surrogate", surr.item(), it)
                w.add_scalar("Loss/entropy", ent.item(), it)
                w.add_scalar("Loss/learning_rate", 1e-3, it)
                w.add_scalar("Policy/mean_noise_std", std_now, it)
                w.add_scalar("Perf/total_fps", int(fps), it)
                w.add_scalar("Perf/collection time", collect, it)
                w.add_scalar("Perf/learning_time", learn, it)
                if recent:
                    w.add_scalar("Train/mean_reward", mean_rew, it)
                    w.add_scalar("Train/mean_episode_length", 100.0, it)
            else:
                assert log is not None
                log.step(it, env_steps=(it + 1) * n * horizon, steps_this_iter=n * horizon, iteration_time=it_time,
                         metrics={"Loss/value": vloss.item(), "Loss/surrogate": surr.item(), "Loss/entropy": ent.item(),
                                  "Policy/mean_std": std_now},
                         episode_return=mean_rew if recent else None)  # fmt: skip
            if not math.isfinite(vloss.item()):
                raise ValueError("the loss is not finite")
    except ValueError as e:
        print(f"  ended by {type(e).__name__}: {str(e)[:80]}")
    if w is not None:
        w.close()
    if log is not None:
        log.close()


@run
def rsl_rl_point_mass(d: Path) -> Dict[str, Any]:
    point_mass_ppo(d, "rsl_rl")
    return {"framework": "rsl_rl-style", "writer": "tally", "faults": []}


@run
def tally_logger_point_mass(d: Path) -> Dict[str, Any]:
    point_mass_ppo(d, "logger", seed=2)
    return {"framework": "tally.Logger", "writer": "tally", "faults": []}


@run
def rsl_rl_point_mass_std_clamp(d: Path) -> Dict[str, Any]:
    point_mass_ppo(d, "rsl_rl", clamp_at=100)
    return {"framework": "rsl_rl-style", "writer": "tally",
            "faults": [fault("collapse", "Policy/mean_noise_std", 100, 5, "the action std clamped at 0.0067 from this iteration")]}  # fmt: skip


@run
def rsl_rl_point_mass_frozen(d: Path) -> Dict[str, Any]:
    point_mass_ppo(d, "rsl_rl", freeze_at=100)
    return {"framework": "rsl_rl-style", "writer": "tally",
            "faults": [fault("flat_for", "Train/mean_reward", 100, 40, "no episode counted from this iteration")]}  # fmt: skip


@run
def rsl_rl_point_mass_nan(d: Path) -> Dict[str, Any]:
    point_mass_ppo(d, "rsl_rl", nan_at=120)
    return {"framework": "rsl_rl-style", "writer": "tally",
            "faults": [fault("nonfinite", "Loss/value_function", 120, 0, "the value loss × NaN from this iteration")]}  # fmt: skip


@run
def tally_logger_point_mass_slow(d: Path) -> Dict[str, Any]:
    point_mass_ppo(d, "logger", iters=100_000, slow=True)
    return {"framework": "tally.Logger", "writer": "tally", "faults": [Halving.last.fault("Perf/total_fps", "each iteration twice as long from this iteration")]}


@run
def tally_logger_point_mass_collapse(d: Path) -> Dict[str, Any]:
    point_mass_ppo(d, "logger", clamp_at=100)
    return {"framework": "tally.Logger", "writer": "tally",
            "faults": [fault("collapse", "Policy/mean_std", 100, 5, "the action std clamped at 0.0067 from this iteration")]}  # fmt: skip


@run
def tally_logger_point_mass_frozen(d: Path) -> Dict[str, Any]:
    point_mass_ppo(d, "logger", freeze_at=100)
    return {"framework": "tally.Logger", "writer": "tally",
            "faults": [fault("flat_for", "Train/mean_reward", 100, 40, "the mean return frozen (a stale value) from this iteration")]}  # fmt: skip


@run
def tally_logger_point_mass_stall(d: Path) -> Dict[str, Any]:
    point_mass_ppo(d, "logger", iters=110, stall_at=80)
    return {"framework": "tally.Logger", "writer": "tally",
            "faults": [fault("stall", "", 80, 1, "the loop sleeps 75 s at this iteration")]}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help="runs to write again (default: every run)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        print("\n".join(RUNS))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    manifest_path = OUT / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"runs": {}}
    for name in args.only or list(RUNS):
        d = OUT / name
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        t = time.time()
        print(f"{name} ...", flush=True)
        for attempt in range(3):
            entry = RUNS[name](d)
            seen = [f["observed"] for f in entry["faults"] if "observed" in f]
            if not seen or max(seen) <= 0.6:
                break
            print(f"  the load hid the halving (pace × {max(seen)}): again", flush=True)
            shutil.rmtree(d)
            d.mkdir(parents=True)
        # Only the event files are fixtures: a Logger's config, summary and trace are not read.
        for p in list(d.rglob("*")):
            if p.is_file() and "tfevents" not in p.name:
                p.unlink()
        entry["healthy"] = not entry["faults"]
        manifest["runs"][name] = entry
        manifest_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
        size = sum(p.stat().st_size for p in d.rglob("*") if p.is_file())
        print(f"  {time.time() - t:.0f} s, {size / 1024:.0f} KiB", flush=True)
    manifest["runs"] = {k: manifest["runs"][k] for k in RUNS if k in manifest["runs"]}
    manifest_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
