"""Side-by-side: the per-iteration cost a Python training loop pays to log 60 metrics.

    tally       log.step(i, ...) with 60 values (20 metrics, 10 learner phases, 11 collector
                phases, 5 flight gauges, 8 reward terms, plus the dedicated scalar fields),
                TensorBoard backend, validated against the schema, written by tally's thread
    tensorboardX  SummaryWriter.add_scalar() x 60 (same tags and values)
    wandb.log   wandb.log(<the same 60-key dict>, step=i), WANDB_MODE=offline

Prints the median per-iteration cost of each and the ratios. Not a test: run it by hand,
`.venv/bin/python bench/python_hot_path.py [--iterations N] [--no-wandb]`, and record the
result in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, List

METRICS = [
    "Loss/critic", "Loss/actor", "Loss/temperature", "Loss/entropy", "Policy/temperature",
    "Train/actor_gradient_norm", "Train/critic_gradient_norm", "Train/target_q_max", "Train/target_q_min",
    "Train/reward_scale_std", "Train/replay_ingress_depth", "Train/replay_ingress_occupancy",
    "Train/replay_ingress_high_water", "Train/replay_ingress_backpressure_wait_ms",
    "Train/replay_ingress_dropped_batches", "Perf/dp_gradient_sync_ms_per_rank",
    "Perf/dp_gradient_sync_calls_per_rank", "Episode_Termination/time_out",
    "Episode_Termination/base_contact", "Episode_Termination/joint_limit",
]  # fmt: skip
LEARNER = [
    "collector_wait", "inference", "collector_release", "replay_batch_wait", "replay_sample", "learning",
    "inference_h2d", "inference_forward", "inference_d2h", "replay_ingress_h2d_submit",
]  # fmt: skip
COLLECTOR = [
    "inference_request", "learner_action_wait", "env_step", "env_step_action_validate", "env_step_apply_action",
    "env_step_backend", "env_step_update_state", "env_step_reset_done", "transition_extract", "replay_write",
    "metrics_publish",
]  # fmt: skip
GAUGES = ["queue_depth", "in_flight", "max_in_flight", "publication_lag", "max_publication_lag"]
REWARDS = ["lin_vel", "ang_vel", "action_rate", "air_time", "orientation", "torques", "collision", "stand_still"]


def record(i: int) -> Dict[str, Dict[str, float]]:
    """One iteration's values, as a training loop holds them (fresh floats each time)."""
    x = 1.0 + (i % 7) * 0.01
    return {
        "metrics": {t: 1.5 * x for t in METRICS},
        "learner": {p: 0.001 * x for p in LEARNER},
        "collector": {p: 0.001 * x for p in COLLECTOR},
        "collector_inference": {g: 1.0 for g in GAUGES},
        "rewards": {r: 0.1 * x for r in REWARDS},
    }


def flat(rec: Dict[str, Dict[str, float]]) -> Dict[str, float]:
    """The same 60 values under 60 tag names (what a plain writer would log)."""
    out: Dict[str, float] = {}
    for field, values in rec.items():
        for k, v in values.items():
            out[k if "/" in k else f"{field}/{k}"] = v
    return out


def timed(n: int, fn: Callable[[int], None], warmup: int = 50) -> List[float]:
    for i in range(1, warmup + 1):
        fn(i)
    out = []
    for i in range(warmup + 1, warmup + n + 1):
        t0 = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - t0)
    return out


def bench_tally(n: int, root: str) -> List[float]:
    import tally

    log = tally.Logger(algo="sac", task="bench", sim="mujoco", max_iterations=10**9, num_envs=4096,
                       log_dir=os.path.join(root, "tally"), panel="off")
    recs = [record(i) for i in range(64)]

    def one(i: int) -> None:
        r = recs[i % 64]
        log.step(i, env_steps=4096 * i, metrics=r["metrics"], learner=r["learner"], collector=r["collector"],
                 collector_inference=r["collector_inference"], rewards=r["rewards"], iteration_time=0.02,
                 episode_return=3.0, episode_length=200.0, timeout_rate=0.1, steps_this_iter=4096.0)

    try:
        return timed(n, one)
    finally:
        log.close()


def bench_tensorboardx(n: int, root: str) -> List[float]:
    from tensorboardX import SummaryWriter

    w = SummaryWriter(os.path.join(root, "tbx"))
    recs = [flat(record(i)) for i in range(64)]

    def one(i: int) -> None:
        for tag, v in recs[i % 64].items():
            w.add_scalar(tag, v, 4096 * i)

    try:
        return timed(n, one)
    finally:
        w.close()


def bench_wandb(n: int, root: str) -> List[float]:
    os.environ["WANDB_MODE"] = "offline"
    os.environ.setdefault("WANDB_SILENT", "true")
    import wandb

    run = wandb.init(project="tally-bench", dir=root)
    recs = [flat(record(i)) for i in range(64)]

    def one(i: int) -> None:
        run.log(recs[i % 64], step=4096 * i)

    try:
        return timed(n, one)
    finally:
        run.finish()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=5000)
    ap.add_argument("--no-wandb", action="store_true")
    args = ap.parse_args()
    results: Dict[str, List[float]] = {}
    with tempfile.TemporaryDirectory() as root:
        results["tally log.step (60 values)"] = bench_tally(args.iterations, root)
        results["tensorboardX add_scalar x60"] = bench_tensorboardx(args.iterations, root)
        if not args.no_wandb:
            try:
                results["wandb.log (60 keys, offline)"] = bench_wandb(min(args.iterations, 2000), root)
            except ImportError:
                print("wandb not installed: skipped", file=sys.stderr)
    base = statistics.median(results["tally log.step (60 values)"])
    print(f"{'per iteration':34} {'median':>10} {'p90':>10}  ratio to tally")
    for name, xs in results.items():
        xs = sorted(xs)
        med, p90 = statistics.median(xs), xs[int(0.9 * (len(xs) - 1))]
        print(f"{name:34} {med * 1e6:8.2f}us {p90 * 1e6:8.2f}us  {med / base:8.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
