"""Instructions the caller's thread spends per `log.step` with 60 values, and per no-op call
(the floor of bench/python_hot_path.py), counted by valgrind's callgrind: a count does not move
with the load of a shared machine, so two builds can be compared on one.

Each workload runs under callgrind twice, N and 2N calls, exactly as python_hot_path.py makes
them; the main thread's count for 2N minus the count for N, over N, is the cost of one call
with start-up removed. Not a test: run it by hand (needs `valgrind`),
`.venv/bin/python bench/python_step_instructions.py [--calls N]`; to compare with another build
of the package, put that build first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def child(workload: str, n: int) -> None:
    """Make the calls and leave without closing (only the caller's calls are counted)."""
    sys.path.insert(0, HERE)
    import python_hot_path as b

    if workload == "noop":
        recs = [b.flat(b.record(i)) for i in range(64)]

        def noop(**values: float) -> None:
            pass

        for i in range(1, n + 1):
            noop(**recs[i % 64])
    else:
        import tally

        root = tempfile.mkdtemp()
        log = tally.Logger(algo="sac", task="bench", sim="mujoco", max_iterations=10**9, num_envs=4096,
                           log_dir=os.path.join(root, "tally"), panel="off")  # fmt: skip
        steps = [b.step_kwargs(b.record(i)) for i in range(64)]
        for i in range(1, n + 1):
            log.step(i, env_steps=4096 * i, **steps[i % 64])
    sys.stdout.flush()
    os._exit(0)


def main_thread_count(workload: str, n: int, out: str) -> int:
    """The instructions of the process's main thread over a run of `n` calls."""
    prefix = os.path.join(out, f"{workload}.{n}")
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={prefix}.%p",
         sys.executable, os.path.abspath(__file__), "--child", workload, str(n)],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        # A fixed str hash: dict probes, and so the count, otherwise differ from run to run.
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )  # fmt: skip
    counts = []
    # Thread 1 of each process (a child process, if any, is smaller): the largest is ours.
    for path in glob.glob(f"{prefix}.*-01"):
        with open(path) as f:
            counts += [int(line.split()[1]) for line in f if line.startswith("summary:")]
    return max(counts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000, help="N: runs of N and 2N calls")
    ap.add_argument("--child", nargs=2, metavar=("WORKLOAD", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
    n = args.calls
    per_call = {}
    with tempfile.TemporaryDirectory() as out:
        for workload in ("noop", "tally"):
            per_call[workload] = (main_thread_count(workload, 2 * n, out) - main_thread_count(workload, n, out)) / n
    print(f"caller-thread instructions per call (callgrind, {2 * n} minus {n} calls)")
    print(f"  no-op Python call, 60 floats  {per_call['noop']:10.0f}")
    print(f"  tally Logger.step, 60 values  {per_call['tally']:10.0f}")
    print(f"  ratio                         {per_call['tally'] / per_call['noop']:10.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
