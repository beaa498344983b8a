"""Side-by-side benchmark: tally.metrics vs trinity.utils.metrics on a realistic eval step.

An eval step of TASKS tasks × RUNS runs × METRICS metrics, built the way Trinity's scheduler
builds `task.metrics` (each run's metrics + `time/run_execution`, then one
`{"time/task_execution": s}`), goes through `calculate_task_level_metrics(…, is_eval=True)` per
task and `aggregate_eval_metrics(…, prefix="eval/<taskset>")` once, as in
`rollout_coordinator`. A training step (is_eval=False + aggregate_metrics) is timed too.
Both implementations must return identical dicts (checked bit for bit) before timing counts.

    pip install --no-deps trinity-rft==0.6.0 numpy
    python bench/trinity_aggregate.py [--tasks 500 --runs 16 --metrics 8 --repeat 5]
                                      [--trinity-tasks 20] [--clock wall|cpu]

Each step is timed `--repeat` times for both tools; the table gives min / median / max, the
ratio of the medians and whether the target is met (eval ≥ 30×, train ≥ 10×). Trinity's eval
step is slow (1000 `np.random.choice` calls per (key, k)), so `--trinity-tasks` times it on a
prefix of the tasks, scaled linearly to all tasks (the work is per task): without it each of
Trinity's eval runs takes about 100 s of CPU here. The train step is timed on every task,
trinity and tally alternating. `--clock cpu` times this thread's CPU (all the work of both
runs on it), which a busy machine does not inflate.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import struct
import sys
import time

import tally.metrics as tally
import trinity.utils.metrics as trinity


def make_step(tasks: int, runs: int, metrics: int, seed: int = 0):
    rng = random.Random(seed)
    names = ["accuracy", "format_score", "reward", "response_length", "pass", "score", "f1", "em"]
    names = [names[i % len(names)] + ("" if i < len(names) else f"_{i}") for i in range(metrics)]
    step = []
    for _ in range(tasks):
        task = []
        for _ in range(runs):
            d = {}
            for j, n in enumerate(names):
                # binary accuracies, bounded scores and lengths: what eval tasks produce
                d[n] = float(rng.random() < 0.6) if j % 3 == 0 else (rng.random() if j % 3 == 1 else float(rng.randint(10, 4096)))
            d["time/run_execution"] = rng.uniform(0.5, 20.0)
            task.append(d)
        task.append({"time/task_execution": rng.uniform(5.0, 60.0)})
        step.append(task)
    return step


def eval_step(mod, step, **kw):
    per_task = [mod.calculate_task_level_metrics(t, True, **kw) for t in step]
    return mod.aggregate_eval_metrics(per_task, prefix="eval/bench")


def train_step(mod, step):
    per_task = [mod.calculate_task_level_metrics(t, False) for t in step]
    return mod.aggregate_metrics(per_task, prefix="rollout")


def bits_equal(a: dict, b: dict) -> bool:
    if list(a) != list(b):
        return False
    for k in a:
        x, y = a[k], b[k]
        if not ((math.isnan(x) and math.isnan(y)) or struct.pack("<d", x) == struct.pack("<d", y)):
            return False
    return True


CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}


def timings(fn, repeat: int, clock) -> list:
    """Sorted times of `repeat` calls (all the work runs on this thread, so `cpu` is its CPU time)."""
    out = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        out.append(clock() - t0)
    return sorted(out)


def spread(ts: list, scale: float = 1.0) -> str:
    lo, med, hi = ts[0] * scale, statistics.median(ts) * scale, ts[-1] * scale
    return f"{lo * 1e3:9.1f} {med * 1e3:9.1f} {hi * 1e3:9.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--metrics", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each step, both tools")
    ap.add_argument("--trinity-tasks", type=int, default=None, help="time trinity on the first N tasks and scale")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall time, or this thread's CPU time (steadier on a shared machine)")
    args = ap.parse_args()
    clock = CLOCKS[args.clock]

    step = make_step(args.tasks, args.runs, args.metrics)
    t_tasks = min(args.trinity_tasks or args.tasks, args.tasks)
    sub = step[:t_tasks]
    scale = args.tasks / t_tasks

    print(f"eval step: {args.tasks} tasks x {args.runs} runs x {args.metrics} metrics; "
          f"python {sys.version.split()[0]}, builtin sum {tally.BUILTIN_SUM}; "
          f"load average {os.getloadavg()[0]:.2f}; {args.clock} clock, {args.repeat} runs each")

    # correctness first: identical dicts on the timed subset
    want = eval_step(trinity, sub)
    got = eval_step(tally, sub)
    assert bits_equal(got, want), "tally and trinity disagree (eval)"
    assert bits_equal(train_step(tally, sub), train_step(trinity, sub)), "tally and trinity disagree (train)"
    assert bits_equal(train_step(tally, step), train_step(trinity, step)), "tally and trinity disagree (train, all tasks)"
    print(f"outputs bit-identical on {t_tasks} tasks: {len(want)} eval keys (train: on all {args.tasks})")

    # (name, trinity times scaled to all tasks or None, tally times, target ratio or None)
    rows = []
    t_eval = [t * scale for t in timings(lambda: eval_step(trinity, sub), args.repeat, clock)]
    rows.append(("eval step (bootstrap)", t_eval, timings(lambda: eval_step(tally, step), args.repeat, clock), 30))
    rows.append(("eval step (tally exact)", None,
                 timings(lambda: eval_step(tally, step, estimator="exact"), args.repeat, clock), None))
    # The train step is cheap for both: trinity runs on every task, interleaved with tally.
    t_train, y_train = [], []
    for _ in range(args.repeat):
        t_train += timings(lambda: train_step(trinity, step), 1, clock)
        y_train += timings(lambda: train_step(tally, step), 1, clock)
    rows.append(("train step", sorted(t_train), sorted(y_train), 10))

    note = "" if scale == 1 else f"  (trinity eval timed on {t_tasks} tasks, scaled x{scale:g})"
    print(f"{'ms (min median max)':26}{'trinity':>30}{'tally':>30}{'ratio':>9}  target{note}")
    for name, t, y, target in rows:
        if t is None:
            print(f"{name:26}{'—':>30}{spread(y):>30}")
            continue
        ratio = statistics.median(t) / statistics.median(y)
        verdict = f">= {target}x {'met' if ratio >= target else 'NOT MET'}"
        print(f"{name:26}{spread(t):>30}{spread(y):>30}{ratio:>8.0f}x  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
