"""Side-by-side: the per-iteration cost a Python training loop pays to log 60 values.

    no-op       a Python function doing nothing, called with the 60 floats as 60 named
                arguments (the floor: what any call taking the values costs)
    tally       log.step(i, ...) with 60 values (20 metrics, 10 learner phases, 11 collector
                phases, 5 flight gauges, 8 reward terms, the dedicated scalar fields and the
                iteration), TensorBoard backend, validated against the schema, written by
                tally's thread
    tally SummaryWriter  add_scalar() x 60 (same tags and values)
    tensorboardX  SummaryWriter.add_scalar() x 60 (same tags and values)
    wandb.log   wandb.log(<the same 60-key dict>, step=i), WANDB_MODE=offline

Each workload runs --runs times, interleaved; prints min/median/max over the runs of the
median wall time per iteration, the caller thread's CPU and the process's CPU (every thread,
close included) per iteration, and the ratios the performance targets name. Not a test: run
it by hand, `.venv/bin/python bench/python_hot_path.py [--iterations N] [--runs R]
[--no-wandb]`, and record the result in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List

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
NOOP = "no-op Python call, 60 floats"
TALLY = "tally Logger.step"
TALLY_SW = "tally SummaryWriter.add_scalar x60"
TBX = "tensorboardX add_scalar x60"
WANDB = "wandb.log (offline)"
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


DEDICATED = {"iteration_time": 0.02, "episode_return": 3.0, "episode_length": 200.0, "timeout_rate": 0.1,
             "steps_this_iter": 4096.0}  # fmt: skip


def flat(rec: Dict[str, Dict[str, float]]) -> Dict[str, float]:
    """The same 60 values under 60 tag names (what a plain writer would log)."""
    out: Dict[str, float] = {}
    for field, values in rec.items():
        for k, v in values.items():
            out[k if "/" in k else f"{field}/{k}"] = v
    # The dedicated fields tally's step takes besides the maps, and the iteration on its axis.
    out.update(DEDICATED)
    out["Train/iteration"] = float(len(out))
    return out


class Sample:
    """One run of one workload: wall time per call, and CPU per call of the caller's thread and
    of the whole process (every thread, the writer's drain and close included)."""

    def __init__(self, wall: List[float], thread_cpu: float, process_cpu: float) -> None:
        self.wall, self.thread_cpu, self.process_cpu = wall, thread_cpu, process_cpu

    @property
    def median(self) -> float:
        return statistics.median(self.wall)


def timed(n: int, fn: Callable[[int], None], done: Callable[[], None] = lambda: None, warmup: int = 50) -> Sample:
    """Time `fn(i)` n times; `done` (close, flush) is counted in the process CPU only."""
    for i in range(1, warmup + 1):
        fn(i)
    out = []
    c0, p0 = time.thread_time(), time.process_time()
    for i in range(warmup + 1, warmup + n + 1):
        t0 = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - t0)
    c1 = time.thread_time()
    done()
    return Sample(out, (c1 - c0) / n, (time.process_time() - p0) / n)


def step_kwargs(r: Dict[str, Dict[str, float]]) -> Dict[str, Any]:
    return dict(metrics=r["metrics"], learner=r["learner"], collector=r["collector"],
                collector_inference=r["collector_inference"], rewards=r["rewards"], **DEDICATED)  # fmt: skip


def bench_noop(n: int, root: str) -> Sample:
    """The floor: a Python function that does nothing, called with the 60 floats as 60 named
    arguments (each float bound to a parameter, as any Python logging call taking them must)."""
    recs = [flat(record(i)) for i in range(64)]

    def noop(**values: float) -> None:
        pass

    return timed(n, lambda i: noop(**recs[i % 64]))


def bench_tally(n: int, root: str) -> Sample:
    import tally

    log = tally.Logger(algo="sac", task="bench", sim="mujoco", max_iterations=10**9, num_envs=4096,
                       log_dir=os.path.join(root, "tally"), panel="off")  # fmt: skip
    recs = [step_kwargs(record(i)) for i in range(64)]

    def one(i: int) -> None:
        log.step(i, env_steps=4096 * i, **recs[i % 64])

    return timed(n, one, log.close)


def bench_tally_add_scalar(n: int, root: str) -> Sample:
    import tally

    w = tally.SummaryWriter(os.path.join(root, "tally_sw"))
    recs = [list(flat(record(i)).items()) for i in range(64)]

    def one(i: int) -> None:
        for tag, v in recs[i % 64]:
            w.add_scalar(tag, v, 4096 * i)

    return timed(n, one, w.close)


def bench_tensorboardx(n: int, root: str) -> Sample:
    from tensorboardX import SummaryWriter

    w = SummaryWriter(os.path.join(root, "tbx"))
    recs = [list(flat(record(i)).items()) for i in range(64)]

    def one(i: int) -> None:
        for tag, v in recs[i % 64]:
            w.add_scalar(tag, v, 4096 * i)

    return timed(n, one, w.close)


def bench_wandb(n: int, root: str) -> Sample:
    os.environ["WANDB_MODE"] = "offline"
    os.environ.setdefault("WANDB_SILENT", "true")
    import wandb

    run = wandb.init(project="tally-bench", dir=root)
    recs = [flat(record(i)) for i in range(64)]

    def one(i: int) -> None:
        run.log(recs[i % 64], step=4096 * i)

    return timed(n, one, run.finish)


def spread(xs: List[float]) -> str:
    """min / median / max of several runs, in microseconds."""
    return f"{min(xs) * 1e6:8.2f} {statistics.median(xs) * 1e6:8.2f} {max(xs) * 1e6:8.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5, help="runs of each workload (min/median/max over runs)")
    ap.add_argument("--no-wandb", action="store_true")
    args = ap.parse_args()
    n = args.iterations
    workloads: Dict[str, Callable[[int, str], Sample]] = {
        NOOP: bench_noop,
        TALLY: bench_tally,
        TALLY_SW: bench_tally_add_scalar,
        TBX: lambda n, root: bench_tensorboardx(max(n // 20, 50), root),
    }
    if not args.no_wandb:
        try:
            import wandb  # noqa: F401

            workloads[WANDB] = lambda n, root: bench_wandb(max(n // 5, 50), root)
        except ImportError:
            print("wandb not installed: skipped", file=sys.stderr)
    runs: Dict[str, List[Sample]] = {name: [] for name in workloads}
    for _ in range(args.runs):  # interleaved, so a change in the machine's load hits every workload
        for name, fn in workloads.items():
            with tempfile.TemporaryDirectory() as root:
                runs[name].append(fn(n, root))
    print(f"per iteration (60 values), {args.runs} runs: min median max (us)")
    print(f"{'':34} {'wall (median of run)':>26} {'caller thread CPU':>26} {'process CPU':>26}")
    for name, samples in runs.items():
        print(f"{name:34} {spread([s.median for s in samples])} {spread([s.thread_cpu for s in samples])} "
              f"{spread([s.process_cpu for s in samples])}")  # fmt: skip
    med = {name: statistics.median([s.median for s in samples]) for name, samples in runs.items()}
    cpu = {name: statistics.median([s.thread_cpu for s in samples]) for name, samples in runs.items()}
    print("ratios of medians (target):")
    print(f"  tally log.step / no-op floor, wall        {med[TALLY] / med[NOOP]:8.2f}x  (<= 3x)")
    print(f"  tally log.step / no-op floor, thread CPU  {cpu[TALLY] / cpu[NOOP]:8.2f}x  (<= 3x)")
    print(f"  tensorboardX add_scalar x60 / tally step  {med[TBX] / med[TALLY]:8.1f}x  (>= 100x)")
    if WANDB in med:
        print(f"  wandb.log / tally step                    {med[WANDB] / med[TALLY]:8.1f}x  (>= 10x)")
    print(f"  tensorboardX / tally add_scalar (same calls) {med[TBX] / med[TALLY_SW]:6.1f}x  (>= 100x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
