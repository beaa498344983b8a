"""Side-by-side benchmark: tally.metrics vs trinity.utils.metrics on a realistic eval step.

An eval step of TASKS tasks × RUNS runs × METRICS metrics, built the way Trinity's scheduler
builds `task.metrics` (each run's metrics + `time/run_execution`, then one
`{"time/task_execution": s}`), goes through `calculate_task_level_metrics(…, is_eval=True)` per
task and `aggregate_eval_metrics(…, prefix="eval/<taskset>")` once, as in
`rollout_coordinator`. A training step (is_eval=False + aggregate_metrics) is timed too.
Both implementations must return identical dicts (checked bit for bit) before timing counts.

    pip install --no-deps trinity-rft==0.6.0 numpy
    python bench/trinity_aggregate.py [--tasks 500 --runs 16 --metrics 8 --repeat 3]

Trinity is slow here (1000 `np.random.choice` calls per (key, k)), so `--trinity-tasks` lets
it time a prefix of the tasks; its time is then scaled linearly to all tasks (the work is
per task) and the report says so.
"""

from __future__ import annotations

import argparse
import math
import random
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


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--metrics", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3, help="best of N for tally (trinity: 1)")
    ap.add_argument("--trinity-tasks", type=int, default=None, help="time trinity on the first N tasks and scale")
    args = ap.parse_args()

    step = make_step(args.tasks, args.runs, args.metrics)
    t_tasks = min(args.trinity_tasks or args.tasks, args.tasks)
    sub = step[:t_tasks]
    scale = args.tasks / t_tasks

    print(f"eval step: {args.tasks} tasks x {args.runs} runs x {args.metrics} metrics; "
          f"python {sys.version.split()[0]}, builtin sum {tally.BUILTIN_SUM}")

    # correctness first: identical dicts on the timed subset
    want = eval_step(trinity, sub)
    got = eval_step(tally, sub)
    assert bits_equal(got, want), "tally and trinity disagree (eval)"
    assert bits_equal(train_step(tally, sub), train_step(trinity, sub)), "tally and trinity disagree (train)"
    print(f"outputs bit-identical on {t_tasks} tasks: {len(want)} eval keys")

    rows = []
    t_trin = (lambda: eval_step(trinity, sub))
    tt = best_of(t_trin, 1) * scale
    ty = best_of(lambda: eval_step(tally, step), args.repeat)
    te = best_of(lambda: eval_step(tally, step, estimator="exact"), args.repeat)
    rows.append(("eval step (bootstrap)", tt, ty))
    rows.append(("eval step (tally exact)", tt, te))
    tt2 = best_of(lambda: train_step(trinity, sub), 1) * scale
    ty2 = best_of(lambda: train_step(tally, step), args.repeat)
    rows.append(("train step", tt2, ty2))

    note = "" if scale == 1 else f"  (trinity timed on {t_tasks} tasks, scaled x{scale:g})"
    print(f"{'':26}{'trinity':>12}{'tally':>12}{'ratio':>10}{note}")
    for name, a, b in rows:
        print(f"{name:26}{a * 1e3:>10.1f}ms{b * 1e3:>10.1f}ms{a / b:>9.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
