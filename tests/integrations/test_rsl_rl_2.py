"""rsl-rl-lib 2.x (the line Isaac Lab pins), whose runner creates its writer in `learn()` only
when it has none: `tally.integrations.rsl_rl.take_over(runner)` before `learn()` hands it a
tally writer. Run against the same training with its own torch writer.

rsl-rl-lib 2.x cannot share a virtualenv with 5.x: `make test-integrations` installs it without
dependencies into `$(INTEG_VENV)/rsl_rl_2` (RSL_RL_2_PATH), and each run is a subprocess with it
first on the path."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import EXAMPLES, scalars

RSL_RL_2 = Path(os.environ.get("RSL_RL_2_PATH", Path(sys.prefix) / "rsl_rl_2"))
pytestmark = pytest.mark.skipif(not (RSL_RL_2 / "rsl_rl").is_dir(), reason=f"rsl-rl-lib 2.x is not installed in {RSL_RL_2} (make test-integrations)")

SCRIPT = textwrap.dedent(
    """
    import sys
    import torch
    torch.set_num_threads(1)
    import rsl_rl.runners.on_policy_runner as runner_module
    assert runner_module.__file__.startswith(sys.argv[3]), runner_module.__file__  # 2.x, not the venv's 5.x
    from rsl_rl.runners import OnPolicyRunner
    from tally.integrations.rsl_rl import take_over
    from rsl_rl_ppo import PointMass  # the 5.x example's task, with 2.x's observation API


    class Env(PointMass):
        def get_observations(self):
            return self.state.clone(), {"observations": {}}

        def reset(self):
            return self.get_observations()

        def step(self, actions):
            (obs, _), rewards, dones, extras = super().step(actions)
            extras["observations"] = {}
            return obs, rewards, dones, extras


    writer, log_dir = sys.argv[1], sys.argv[2]
    cfg = {
        "num_steps_per_env": 24, "save_interval": 1000, "empirical_normalization": False,
        "algorithm": {"class_name": "PPO", "num_learning_epochs": 4, "num_mini_batches": 4, "learning_rate": 1e-3},
        "policy": {"class_name": "ActorCritic", "actor_hidden_dims": [32, 32], "critic_hidden_dims": [32, 32]},
    }
    torch.manual_seed(4)
    runner = OnPolicyRunner(Env(seed=4), cfg, log_dir=log_dir, device="cpu")
    if writer == "tally":
        take_over(runner)
    runner.learn(8)
    print(type(runner.writer).__module__, type(runner.writer).__name__)
    if writer == "torch":
        runner.writer.close()  # rsl_rl 2.x never closes its writer; take_over's closes at exit
    """
)


def run(writer: str, log_dir: Path) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(RSL_RL_2), str(EXAMPLES), *sys.path]), OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", SCRIPT, writer, str(log_dir), str(RSL_RL_2)], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()[-1]


def test_take_over_keeps_every_scalar(tmp_path):
    assert run("tally", tmp_path / "tally") == "tally.summary_writer SummaryWriter"
    assert run("torch", tmp_path / "torch") == "torch.utils.tensorboard.writer SummaryWriter"
    ref, ours = scalars(tmp_path / "torch"), scalars(tmp_path / "tally")
    assert {"Loss/value_function", "Loss/surrogate", "Train/mean_reward", "Metrics/final_distance", "Episode/return"} <= set(ref)
    assert set(ours) == set(ref)
    perf = {k for k in ref if k.startswith("Perf/")}
    by_time = {k for k in ref if k.endswith("/time")}
    assert {k: v for k, v in ours.items() if k not in perf | by_time} == {k: v for k, v in ref.items() if k not in perf | by_time}
    for k in perf:
        assert [s for s, _ in ours[k]] == [s for s, _ in ref[k]] == list(range(8)), k
    for k in by_time:
        assert [v for _, v in ours[k]] == [v for _, v in ref[k]], k
