"""Side-by-side: the same Python workload on native modules built with different Cargo profiles
(what a profile for the published wheel costs the user; BENCHMARKS.md "Building").

Each MODULE is a built ``_tally`` extension (e.g. ``target/wheel/lib_tally.so``); it is put in a
copy of ``python/tally`` and each workload runs in a fresh interpreter importing that copy, the
modules interleaved, --runs times:

    step        Logger.step with 60 values (python_hot_path.py's record), median per call
    add_scalar  SummaryWriter.add_scalar, median per call
    read        tally.read of a run of 40 tags x 60 000 steps (2.4 M points), points per second
    sql         tally.sql ``GROUP BY tag`` over that run, wall time

Prints each module's min-median-max over the runs and the ratio of each module's median to the
first's. Not a test: `.venv/bin/python bench/wheel_profile.py A.so B.so [--runs 3]`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# One fresh interpreter per workload and module: argv = (workload, scratch, package, bench dir).
CHILD = r"""
import json, sys, time
sys.path[:0] = [sys.argv[3], sys.argv[4]]
import tally
from python_hot_path import record, step_kwargs
work, scratch = sys.argv[1], sys.argv[2]
if work == "step":
    log = tally.Logger(algo="sac", task="bench", sim="mujoco", max_iterations=10**9, num_envs=4096,
                       log_dir=scratch + "/step", panel="off")
    recs = [step_kwargs(record(i)) for i in range(64)]
    times = []
    for i in range(20000):
        t = time.perf_counter()
        log.step(i, env_steps=4096 * i, **recs[i % 64])
        times.append(time.perf_counter() - t)
    log.close()
    times.sort()
    print(json.dumps(times[len(times) // 2] * 1e6))
elif work == "add_scalar":
    w = tally.SummaryWriter(log_dir=scratch + "/sw")
    times = []
    for i in range(200000):
        t = time.perf_counter()
        w.add_scalar("charts/x", 0.5 * i, i)
        times.append(time.perf_counter() - t)
    w.close()
    times.sort()
    print(json.dumps(times[len(times) // 2] * 1e6))
elif work == "read":
    t = time.perf_counter()
    table = tally.read(scratch + "/big")
    print(json.dumps(table.num_rows / (time.perf_counter() - t) / 1e6))
elif work == "sql":
    t = time.perf_counter()
    tally.sql(scratch + "/big", "SELECT tag, avg(value), max(step) FROM scalars GROUP BY tag")
    print(json.dumps((time.perf_counter() - t) * 1e3))
"""

UNITS = {"step": "µs", "add_scalar": "µs", "read": "M points/s", "sql": "ms"}


def package(module: Path, into: Path) -> Path:
    """A copy of python/tally with `module` as its native part; returns the copy's parent."""
    shutil.copytree(REPO / "python" / "tally", into / "tally", ignore=shutil.ignore_patterns("*.so"))
    shutil.copy(module, into / "tally" / "_tally.abi3.so")
    return into


def write_big_run(pkg: Path, scratch: Path) -> None:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import tally\n"
        "w = tally.SummaryWriter(log_dir=sys.argv[2])\n"
        "for s in range(60000):\n"
        "    for t in range(40):\n"
        "        w.add_scalar(f'tag/{t}', s * 0.001 + t, s)\n"
        "w.close()\n"
    )
    subprocess.run([sys.executable, "-c", code, str(pkg), str(scratch / "big")], check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("modules", nargs="+", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pkgs = [package(m, root / f"pkg{i}") for i, m in enumerate(args.modules)]
        write_big_run(pkgs[0], root)
        got = {(i, w): [] for i in range(len(pkgs)) for w in UNITS}
        for _ in range(args.runs):
            for work in UNITS:
                for i, pkg in enumerate(pkgs):
                    scratch = Path(tempfile.mkdtemp(dir=root))
                    (scratch / "big").symlink_to(root / "big")
                    out = subprocess.run(
                        [sys.executable, "-c", CHILD, work, str(scratch), str(pkg), str(REPO / "bench")],
                        check=True, capture_output=True, text=True,
                    )  # fmt: skip
                    got[(i, work)].append(json.loads(out.stdout.strip().splitlines()[-1]))
        for work, unit in UNITS.items():
            first = statistics.median(got[(0, work)])
            for i, m in enumerate(args.modules):
                xs = got[(i, work)]
                med = statistics.median(xs)
                print(f"{work:10s} {m}: {min(xs):.3f}-{med:.3f}-{max(xs):.3f} {unit}  x{med / first:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
