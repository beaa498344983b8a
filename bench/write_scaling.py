"""How the write side's cost grows: metrics per record (10 -> 1 000) and ranks (1 -> 64).

Rows (each min / median / max over --runs runs; per step and per unit of size):

    Rust  Logger::step, N user metrics     criterion bench `scaling` (crates/tally/benches/
                                           scaling.rs), caller-thread CPU, no file written
    Rust  reduce_ranks, R ranks x 60 values   the same bench
    Rust  reduce_ranks, 8 ranks x N metrics   the same bench
    Python log.step, N user metrics        TensorBoard backend; wall and caller-thread CPU per
                                           step, and process CPU (tally's writer thread and
                                           close included)
    Python RankLogger.step on rank 0, R ranks x 60 values
                                           tally.distributed without a real collective: the
                                           other ranks' vectors are packed beforehand by their
                                           own RankLoggers (outside the timing) and the
                                           all_reduce is SIMULATED by summing the R packed
                                           vectors in Python on rank 0. Reported with and
                                           without that sum (the sum stands in for the job's
                                           engine, it is not tally's work).

The growth of every CPU row is judged from the log-log slope between the two largest sizes:
<= 1.15 is "linear or better" (docs/contract/performance.md "Cost grows at most linearly with the step"). Run by `make bench`; by hand:
`.venv/bin/python bench/write_scaling.py [--runs 3] [--no-rust] [--plot docs/write_scaling.png]`
(the Rust rows run `cargo bench -p tally --bench scaling` --runs times and read criterion's
median of each run from target/criterion).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any, Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from python_hot_path import record, step_kwargs  # noqa: E402

METRICS = [10, 30, 100, 300, 1000]
RANKS = [1, 2, 4, 8, 16, 32, 64]
RUST_GROUPS = {
    "step_user_metrics_thread_cpu": ("Rust Logger::step, N user metrics (caller thread CPU)", "metric"),
    "reduce_ranks_60_values_thread_cpu": ("Rust reduce_ranks, R ranks x 60 values (thread CPU)", "rank"),
    "reduce_ranks_8_ranks_user_metrics_thread_cpu": ("Rust reduce_ranks, 8 ranks x N user metrics (thread CPU)", "metric"),
}


def stats(xs: List[float]) -> Tuple[float, float, float]:
    return min(xs), statistics.median(xs), max(xs)


def slope(sizes: List[int], secs: List[float]) -> float:
    """Log-log slope between the two largest sizes: 1 is linear, 2 quadratic."""
    return math.log(secs[-1] / secs[-2]) / math.log(sizes[-1] / sizes[-2])


def rust_rows(runs: int) -> Dict[str, Dict[int, List[float]]]:
    """Median seconds per step of every size of every group, one entry per bench run."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    out: Dict[str, Dict[int, List[float]]] = {g: {} for g in RUST_GROUPS}
    for r in range(runs):
        print(f"cargo bench -p tally --bench scaling (run {r + 1}/{runs}) ...", flush=True)
        subprocess.run(["cargo", "bench", "-q", "-p", "tally", "--bench", "scaling"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        for group in RUST_GROUPS:
            for d in (target / "criterion" / group).iterdir():
                if d.name.isdigit():
                    est = json.loads((d / "new" / "estimates.json").read_text())
                    out[group].setdefault(int(d.name), []).append(est["median"]["point_estimate"] * 1e-9)
    return out


def user_dicts(n: int) -> List[Dict[str, float]]:
    """Four records of n user metrics (fresh values each), cycled by the loop."""
    return [{f"bench/metric_{k:04}": 0.5 + k * 1e-3 + t for k in range(n)} for t in range(4)]


def python_step(n: int, root: str) -> Tuple[float, float, float]:
    """(wall, caller-thread CPU, process CPU) per `log.step` with n user metrics."""
    import tally

    iters = max(200, min(5000, 200_000 // n))
    log = tally.Logger(algo="sac", task="bench", sim="mujoco", max_iterations=10**9, num_envs=4096,
                       log_dir=os.path.join(root, f"user_{n}"), panel="off")  # fmt: skip
    recs = user_dicts(n)
    for i in range(1, 51):
        log.step(i, env_steps=4096 * i, metrics=recs[i % 4])
    w0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
    for i in range(51, 51 + iters):
        log.step(i, env_steps=4096 * i, metrics=recs[i % 4])
    w1, c1 = time.perf_counter(), time.thread_time()
    log.close()
    return (w1 - w0) / iters, (c1 - c0) / iters, (time.process_time() - p0) / iters


class SimulatedAllReduce:
    """Rank 0's communicator: the all_reduce sums rank 0's vector with the other ranks' vectors,
    packed beforehand; the thread CPU it spends summing is kept apart."""

    def __init__(self, size: int) -> None:
        from tally.distributed import Communicator

        class _Sim(Communicator):
            rank, name = 0, "simulated"

            def allreduce_sum(inner, values: "array[float]") -> List[float]:  # noqa: N805
                t0 = time.thread_time()
                total = list(values)
                for v in self.others:
                    total = [a + b for a, b in zip(total, v)]
                self.sum_cpu += time.thread_time() - t0
                return total

            def allgather(inner, obj: Any) -> List[Any]:  # noqa: N805
                return [obj] * size

        self.comm = _Sim()
        self.comm.size = size
        self.others: List["array[float]"] = []
        self.sum_cpu = 0.0


def python_ranks(ranks: int, root: str) -> Tuple[float, float, float]:
    """(wall, thread CPU, thread CPU without the simulated sum) per rank 0 `RankLogger.step`."""
    import tally
    from tally.distributed import MAP_FIELDS, Communicator, RankLogger

    iters = 1000
    sim = SimulatedAllReduce(ranks)
    log = tally.Logger(algo="sac", task="bench", sim="mujoco", max_iterations=10**9, num_envs=4096,
                       num_gpus=ranks, log_dir=os.path.join(root, f"ranks_{ranks}"), panel="off")  # fmt: skip
    rank0 = RankLogger(log, comm=sim.comm)

    class _Peer(Communicator):
        def __init__(self, r: int) -> None:
            self.rank, self.size = r, ranks

    others = [RankLogger(comm=_Peer(r)) for r in range(1, ranks)]
    recs = [step_kwargs(record(i)) for i in range(8)]
    keys = [(f, k) for f in MAP_FIELDS for k in (recs[0].get(f) or {})]
    # Every rank's layout holds every key from the start (a real job learns them in its first
    # iteration with one all_gather; the steady state is what is measured).
    for rl in [rank0, *others]:
        rl._extend(keys)

    def kw(i: int) -> Dict[str, Any]:
        return dict(env_steps=4096 * i, **recs[i % 8])

    wall, cpu = 0.0, 0.0
    for i in range(1, 51 + iters):
        sim.others = [o._pack(i, kw(i))[0] for o in others]
        if i == 51:
            sim.sum_cpu = 0.0
        w0, c0 = time.perf_counter(), time.thread_time()
        rank0.step(i, **kw(i))
        if i > 50:
            wall += time.perf_counter() - w0
            cpu += time.thread_time() - c0
    assert rank0.collectives == 50 + iters, "one collective per iteration in the steady state"
    rank0.close()
    return wall / iters, cpu / iters, (cpu - sim.sum_cpu) / iters


def fmt_t(s: float) -> str:
    return f"{s * 1e6:,.2f} µs" if s < 1e-3 else f"{s * 1e3:,.2f} ms"


def table(title: str, unit: str, rows: Dict[int, List[float]]) -> Dict[str, Any]:
    sizes = sorted(rows)
    print(f"\n{title}")
    print(f"| {unit}s | per step (min / median / max) | per {unit} (median) |")
    print("|---|---|---|")
    for n in sizes:
        lo, med, hi = stats(rows[n])
        print(f"| {n} | {fmt_t(lo)} / {fmt_t(med)} / {fmt_t(hi)} | {fmt_t(med / n)} |")
    meds = [statistics.median(rows[n]) for n in sizes]
    k = slope(sizes, meds)
    verdict = "linear or better" if k <= 1.15 else "SUPERLINEAR"
    if "(wall" in title:
        # Wall time on a shared machine is mostly waiting for a core: shown, not judged.
        verdict = "wall time: not judged"
    print(f"growth {sizes[-2]} -> {sizes[-1]}: exponent {k:.2f} ({verdict})")
    return {"title": title, "unit": unit, "sizes": sizes, "median": meds, "exponent": k}


def plot(series: List[Dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    # CPU rows only: wall times on a shared machine mostly measure waiting for a core.
    for s in (s for s in series if "(wall" not in s["title"]):
        ax = a if s["unit"] == "metric" else b
        ax.loglog(s["sizes"], s["median"], "o-", label=f'{s["title"]} (x^{s["exponent"]:.2f})')
    for ax, sizes in ((a, METRICS), (b, RANKS)):
        lo, hi = ax.get_ylim()
        ax.loglog(sizes, [lo * 2 * n / sizes[0] for n in sizes], "--", color="grey", label="linear (guide)")
    for ax, unit in ((a, "user metrics per record"), (b, "ranks (simulated inputs)")):
        ax.set_xlabel(unit)
        ax.set_ylabel("seconds per step (median)")
        ax.legend(fontsize=6.5)
        ax.grid(True, which="major", alpha=0.3)
    a.set_title("write cost vs metrics per record")
    b.set_title("write cost vs ranks")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-rust", action="store_true", help="skip the criterion bench")
    ap.add_argument("--plot", type=Path)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    series: List[Dict[str, Any]] = []
    if not args.no_rust:
        for group, rows in rust_rows(args.runs).items():
            title, unit = RUST_GROUPS[group]
            series.append(table(title, unit, rows))
    wall: Dict[int, List[float]] = {n: [] for n in METRICS}
    cpu: Dict[int, List[float]] = {n: [] for n in METRICS}
    proc: Dict[int, List[float]] = {n: [] for n in METRICS}
    rwall: Dict[int, List[float]] = {n: [] for n in RANKS}
    rcpu: Dict[int, List[float]] = {n: [] for n in RANKS}
    rown: Dict[int, List[float]] = {n: [] for n in RANKS}
    with tempfile.TemporaryDirectory() as root:
        # Interleaved: a change of load hits every size.
        for r in range(args.runs):
            print(f"python run {r + 1}/{args.runs} ...", flush=True)
            for n in METRICS:
                w, c, p = python_step(n, os.path.join(root, str(r)))
                wall[n].append(w), cpu[n].append(c), proc[n].append(p)
            for n in RANKS:
                w, c, o = python_ranks(n, os.path.join(root, str(r)))
                rwall[n].append(w), rcpu[n].append(c), rown[n].append(o)
    series.append(table("Python log.step, N user metrics (wall)", "metric", wall))
    series.append(table("Python log.step, N user metrics (caller thread CPU)", "metric", cpu))
    series.append(table("Python log.step, N user metrics (process CPU, writer included)", "metric", proc))
    series.append(table("Python RankLogger.step rank 0, R x 60 values (wall, simulated sum incl.)", "rank", rwall))
    series.append(table("Python RankLogger.step rank 0 (thread CPU, simulated sum incl.)", "rank", rcpu))
    series.append(table("Python RankLogger.step rank 0 (thread CPU, without the simulated sum)", "rank", rown))
    print(f"\nload average {os.getloadavg()[0]:.2f} at end")
    if args.plot:
        plot(series, args.plot)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
