"""The runs table and seed statistics on a sweep, side by side with the tools users have
(BENCHMARKS.md "Questions across runs"): RUNS runs × 10 tags × 1 000 steps, 5 seeds per
learning rate. The question: each run's final return (mean of its last 10 % of steps) and, per
learning rate, the mean over seeds.

- tally.runs / tally.compare (one call each);
- tally.sql: a group-by over every point, and the sweep question as one query (the files read
  and the query answered, in one call);
- tally.read + pandas (the points as a table, the rest in pandas);
- tbparse + pandas (TensorBoard's own reader underneath), on a subset of runs, scaled.

Cold: the page cache is dropped before each cold read when this runs as root
(/proc/sys/vm/drop_caches); otherwise the reads are warm and the table says so.

Usage: .venv/bin/python bench/runs_table.py [--runs 1000] [--tbparse-runs 50] [--dir DIR]
"""

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import pyarrow  # noqa: F401  imported once up front: tally's readers import it on first use
import tally

TAGS = [f"charts/t{i}" for i in range(9)] + ["charts/episodic_return"]
STEPS = 1000
# Each run's final return (mean over its last 10 % of steps), then the mean per learning rate.
SWEEP_SQL = """
WITH span AS (SELECT run, min(step) AS lo, max(step) AS hi FROM scalars
              WHERE tag = 'charts/episodic_return' GROUP BY run),
     final AS (SELECT s.run, avg(s.value) AS final FROM scalars s JOIN span USING (run)
               WHERE s.tag = 'charts/episodic_return' AND s.step >= span.hi - 0.1 * (span.hi - span.lo)
               GROUP BY s.run)
SELECT r."config.config.lr" AS lr, avg(final) AS mean_final, count(*) AS runs
FROM final JOIN runs r USING (run) GROUP BY lr ORDER BY mean_final DESC
"""


def generate(root: Path, runs: int) -> None:
    for r in range(runs):
        lr, seed = 10 ** -(1 + r % 4), r // 4 % 5
        d = root / f"lr{lr}_s{seed}_{r}"
        w = tally._tally.EventWriter(d)
        for step in range(STEPS):
            w.write_scalars(step, 1e9 + step, {t: (step * (1 + r % 4) + i) / STEPS for i, t in enumerate(TAGS)})
        w.close()
        (d / "run_config.json").write_text(f'{{"config": {{"lr": {lr}, "seed": {seed}}}}}')


def drop_caches() -> bool:
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def timed(label, fn, cold):
    was_cold = drop_caches() if cold else False
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    print(f"| {label} | {dt:.2f} s | {'cold' if was_cold else 'warm'} |")
    return out, dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--tbparse-runs", type=int, default=50)
    ap.add_argument("--dir")
    args = ap.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="tally-runs-bench-"))
    if not any(root.iterdir()) if root.exists() else True:
        root.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        generate(root, args.runs)
        print(f"generated {args.runs} runs x {len(TAGS)} tags x {STEPS} steps in {time.perf_counter() - t0:.1f} s")
    print("| what | time | cache |\n|---|---|---|")
    timed("tally.runs (runs table, 1 tag summarized)", lambda: tally.runs(root, tags="charts/episodic_return"), True)
    timed("tally.compare by config.lr (50 000 resamples)", lambda: tally.compare(root, "charts/episodic_return", by="config.lr"), True)

    def with_pandas():
        df = tally.read_runs(root, config=True, tags="charts/episodic_return").to_pandas()
        last = df.groupby("run").step.transform("max")
        first = df.groupby("run").step.transform("min")
        tail = df[df.step >= last - 0.1 * (last - first)]
        final = tail.groupby("run").agg(final=("value", "mean"), lr=("config.config.lr", "first"))
        return final.groupby("lr").final.mean()

    timed("tally.read_runs + pandas (same answer)", with_pandas, True)
    timed(
        "tally.sql: count, avg, min, max of every point by tag",
        lambda: tally.sql(root, "SELECT tag, count(*), avg(value), min(value), max(value) FROM scalars GROUP BY tag"),
        True,
    )
    timed("tally.sql: the sweep question (same answer)", lambda: tally.sql(root, SWEEP_SQL), True)
    try:
        from tbparse import SummaryReader
    except ImportError:
        return
    subset = root.parent / (root.name + "-subset")
    if not subset.exists():
        subset.mkdir()
        for d in sorted(root.iterdir())[: args.tbparse_runs]:
            shutil.copytree(d, subset / d.name)

    def with_tbparse():
        df = SummaryReader(str(subset), extra_columns={"dir_name"}).scalars
        df = df[df.tag == "charts/episodic_return"]
        last = df.groupby("dir_name").step.transform("max")
        first = df.groupby("dir_name").step.transform("min")
        return df[df.step >= last - 0.1 * (last - first)].groupby("dir_name").value.mean()

    _, dt = timed(f"tbparse + pandas on {args.tbparse_runs} runs", with_tbparse, True)
    print(f"| tbparse + pandas, scaled to {args.runs} runs | {dt * args.runs / args.tbparse_runs:.1f} s | estimate |")


if __name__ == "__main__":
    main()
