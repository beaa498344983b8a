"""Time to the first frame of `tally watch DIR --curves --panel off` (BENCHMARKS.md "Curves in
the terminal"): one run of 20 tags x 50 000 steps written by tally's event writer, the command
run from process start until its one text frame is written whole and it exits.

Usage: .venv/bin/python bench/watch_curves.py [--tally PATH] [--dir DIR] [--repeat N]
`--tally` defaults to target/release/tally (build it with `cargo build --release -p tally-cli`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import tally

ROOT = Path(__file__).resolve().parents[1]
TAGS = 20
STEPS = 50_000


def write_run(d: Path) -> None:
    """The run `bench/board.py` row 1 charts: 20 tags, one event per step holding all of them."""
    if (d / ".done").exists():
        return
    tags = [f"loss/t{i}" for i in range(TAGS)]
    w = tally._tally.EventWriter(d)
    for step in range(STEPS):
        w.write_scalars(step, 1e9 + step, {t: (step % 97) / 97 + i for i, t in enumerate(tags)})
    w.close()
    (d / ".done").touch()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", default=str(ROOT / "target" / "release" / "tally"))
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "tally_watch_curves"))
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    run = Path(args.dir) / "one_run"
    write_run(run)
    env = dict(os.environ, COLUMNS="160", LANG="C.UTF-8")
    env.pop("LC_ALL", None)
    times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        out = subprocess.run(
            [args.tally, "watch", str(run), "--curves", "--panel", "off"],
            env=env,
            capture_output=True,
            check=True,
        )
        times.append(time.perf_counter() - t)
    frame = out.stdout.decode()
    assert frame.count("loss/t") >= TAGS, frame[:2000]
    ms = sorted(1000 * t for t in times)
    print(
        f"{TAGS} tags x {STEPS} steps, {args.repeat} runs: first frame "
        f"median {statistics.median(ms):.0f} ms, min {ms[0]:.0f} ms, max {ms[-1]:.0f} ms "
        f"({len(frame.splitlines())} lines)"
    )


if __name__ == "__main__":
    main()
