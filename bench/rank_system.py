"""The cost of every rank's system metrics on `tally.distributed.RankLogger.step`
(docs/contract/ranks.md "System metrics of every rank"): 2 ranks under OpenMPI's mpirun, rank
0's and rank 1's own thread CPU per step (the collective's excluded: MPI polls, so waiting for the other
rank is CPU too) with system metrics off, on at the
default 5 s, and on at 0.1 s (a block carried every 0.1 s). A training iteration is stood in
for by a 1 ms sleep between steps. Each mode runs as its own job, alternated, `--runs` times;
prints min / median / max over the runs of the median and the mean step, and the carrying
steps' mean. Point PYTHONPATH at another checkout's `python/` to compare.

    .venv/bin/python bench/rank_system.py [--steps 3000] [--runs 3]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MODES = {"off": dict(system_metrics=False), "on 5 s": dict(system_interval=5.0), "on 0.1 s": dict(system_interval=0.1)}


def rank(root: str, mode: str, steps: int) -> None:
    from tally.distributed import RankLogger

    dist = RankLogger(algo="sac", task="bench", sim="mujoco", max_iterations=10**9, num_envs=64, log_root=root, panel="off", **MODES[mode])
    metrics = {f"bench/metric_{i:02d}": float(i) for i in range(10)}
    inner, spent = dist.comm.allreduce_sum, [0.0]

    def timed(values):  # type: ignore[no-untyped-def]
        c = time.thread_time()
        try:
            return inner(values)
        finally:
            spent[0] += time.thread_time() - c

    dist.comm.allreduce_sum = timed  # type: ignore[method-assign]
    cpu, carried = [], []
    for it in range(1, steps + 1):
        time.sleep(0.001)
        carry = getattr(dist, "_carry", False)
        c0, spent[0] = time.thread_time(), 0.0
        dist.step(it, metrics=metrics, learner={"learning": 0.01}, iteration_time=0.02, steps_this_iter=64.0)
        cpu.append(time.thread_time() - c0 - spent[0])
        if carry and it > 100:
            carried.append(cpu[-1])
    dist.close()
    with open(os.path.join(root, f"out{dist.rank}.json"), "w") as f:
        json.dump({"median": statistics.median(cpu[100:]), "mean": statistics.mean(cpu[100:]),
                   "carried": statistics.mean(carried) if carried else None, "n": len(carried)}, f)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rank", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.rank:
        return rank(a.rank[0], a.rank[1], a.steps)
    mpirun = shutil.which("mpirun")
    assert mpirun, "needs OpenMPI's mpirun and mpi4py"
    got = {(r, m): {"median": [], "mean": [], "carried": []} for r in (0, 1) for m in MODES}
    for _ in range(a.runs):
        for mode in MODES:
            with tempfile.TemporaryDirectory() as root:
                cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-n", "2", sys.executable, __file__, "--steps", str(a.steps), "--rank", root, mode]
                subprocess.run(cmd, check=True, timeout=600)
                outs = [json.load(open(os.path.join(root, f"out{r}.json"))) for r in (0, 1)]
            for r, out in enumerate(outs):
                for k in got[r, mode]:
                    if out[k] is not None:
                        got[r, mode][k].append(out[k])
    load = os.getloadavg()[0]
    print(f"own thread CPU per step over {a.steps - 100} steps, min / median / max over {a.runs} runs (load {load:.1f})")
    print("| rank | mode | median step | mean step | mean carrying step |")
    for (r, mode), v in got.items():
        row = [f"{min(x) * 1e6:.1f} / {statistics.median(x) * 1e6:.1f} / {max(x) * 1e6:.1f} µs" if x else "-" for x in v.values()]
        print(f"| {r} | {mode} | {' | '.join(row)} |")


if __name__ == "__main__":
    main()
