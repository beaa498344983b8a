"""How many acknowledged steps a SIGKILL can take from a tally.Logger run (RELIABILITY.md
"The SIGKILL window"): a child logs steps at a fixed rate and, after each `step` returns, stores
the iteration in shared memory; the parent kills it at a random moment and compares the last
acknowledged iteration with the last one in the event file (read back by `tally.read`).

Also checks the durability point: the child calls `flush()` every FLUSH_EVERY steps and stores
the iteration it covered; no trial may lose a flushed step.

Usage: .venv/bin/python bench/sigkill_window.py [--trials N] [--rates 20,1000,10000,0]
(rate 0 = as fast as the loop goes).
"""

import argparse
import mmap
import os
import random
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import tally

FLUSH_EVERY = 500

CHILD = textwrap.dedent(
    """
    import mmap, sys, time, tally
    run_dir, shm, rate, flush_every = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    with open(shm, "r+b") as f:
        m = mmap.mmap(f.fileno(), 16)
    # One aligned 8-byte store per counter, as tests/python/test_signals.py stores them: a kill
    # can never leave a torn or zeroed counter behind.
    counters = memoryview(m).cast("q")
    log = tally.Logger(algo="sac", task="t", sim="mujoco", max_iterations=10**9, num_envs=1,
                       log_dir=run_dir, panel="off")
    period = 1.0 / rate if rate > 0 else 0.0
    t0 = time.perf_counter()
    i = 0
    while True:
        i += 1
        log.step(i, metrics={"Loss/critic": float(i)})
        counters[0] = i  # acknowledged
        if i % flush_every == 0:
            log.flush()
            counters[1] = i  # durable
        if period:
            due = t0 + i * period
            while (now := time.perf_counter()) < due:
                if due - now > 0.002:
                    time.sleep(due - now - 0.001)
    """
)


def trial(rate: float, rng: random.Random) -> tuple:
    with tempfile.TemporaryDirectory() as d:
        shm = Path(d) / "shm"
        shm.write_bytes(b"\0" * 16)
        run_dir = Path(d) / "run"
        p = subprocess.Popen([sys.executable, "-c", CHILD, str(run_dir), str(shm), str(rate), str(FLUSH_EVERY)],
                             stderr=subprocess.PIPE)
        with open(shm, "r+b") as f:
            m = mmap.mmap(f.fileno(), 16)
            deadline = time.monotonic() + 30
            while struct.unpack_from("<q", m, 0)[0] < 1:
                if p.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(p.stderr.read().decode())
                time.sleep(0.001)
            time.sleep(rng.uniform(0.3, 1.5))
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            acked, durable = struct.unpack_from("<qq", m, 0)
        table = tally.read(run_dir)
        steps = table.column("step").to_pylist()
        last = max(steps) if steps else 0
        return acked, durable, last


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--rates", default="20,1000,10000,0")
    args = ap.parse_args()
    rng = random.Random(7)
    print(f"{args.trials} trials per rate; killed 0.3-1.5 s after the first step; flush every {FLUSH_EVERY} steps")
    print("| steps/s | lost steps: median | p95 | max | lost time (max / rate) | flushed steps lost |")
    print("|---|---|---|---|---|---|")
    for rate in (float(r) for r in args.rates.split(",")):
        lost, flushed_lost, rates_seen = [], 0, []
        for _ in range(args.trials):
            acked, durable, last = trial(rate, rng)
            lost.append(acked - last)
            flushed_lost += int(last < durable)
        lost.sort()
        p95 = lost[min(len(lost) - 1, int(0.95 * len(lost)))]
        label = f"{rate:,.0f}" if rate else "unpaced"
        window = f"{max(lost) / rate * 1000:.1f} ms" if rate else "-"
        print(f"| {label} | {statistics.median(lost):g} | {p95} | {max(lost)} | {window} | {flushed_lost} of {args.trials} |")


if __name__ == "__main__":
    main()
