"""The live panel thread's CPU: share of one core used by the `tally-panel` thread at 2 Hz.

A child Python process runs `tally.Logger(panel="on")` in a 140x50 pseudo-terminal and steps
the 60-value record of bench/python_hot_path.py at each --rate in iterations per second (50, a
usual RL loop, and 500, past the 256 it/s from which the window holds all its slots; TensorBoard
backend), every value drifting from step to step so each frame redraws its numbers. This
process plays the terminal: it reads everything the child writes and answers the
cursor-position queries of the inline viewport. After --warmup seconds it reads the
`tally-panel` thread's utime+stime (/proc/PID/task/TID/stat, clock ticks) and its run time in
ns (/proc/PID/task/TID/schedstat) and again --seconds later; the share of one core is the
difference over the elapsed wall time. Prints min/median/max over --runs runs; the budget is
docs/contract/performance.md "The panel's share of a core".

`.venv/bin/python bench/panel_cpu.py [--runs 3] [--seconds 60] [--rate 50 500]`
(BENCHMARKS.md "Panel thread CPU").
"""

from __future__ import annotations

import argparse
import fcntl
import os
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
COLS, ROWS = 140, 50
TICK = os.sysconf("SC_CLK_TCK")

CHILD = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
from python_hot_path import record, step_kwargs
import tally
rate, seconds = float(sys.argv[2]), float(sys.argv[3])
log = tally.Logger(algo="sac", task="bench", sim="mujoco", max_iterations=10**9, num_envs=4096,
                   log_dir=sys.argv[4], panel="on")
recs = [step_kwargs(record(i)) for i in range(64)]
t0 = time.monotonic()
i = 0
while True:
    i += 1
    due = t0 + i / rate
    now = time.monotonic()
    if now - t0 > seconds:
        break
    if due > now:
        time.sleep(due - now)
    # Values drift every step, so every number on the panel changes from frame to frame.
    f = 1.0 + 1e-3 * (i % 997)
    kw = {k: ({t: v * f for t, v in m.items()} if isinstance(m, dict) else m) for k, m in recs[i % 64].items()}
    log.step(i, env_steps=4096 * i, **kw)
log.close()
"""


def thread_times(pid: int, tid: int) -> Tuple[float, float]:
    """(utime + stime in seconds, scheduler run time in seconds) of one thread."""
    stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat
    run_ns = int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
    return ticks / TICK, run_ns * 1e-9


def find_thread(pid: int, name: str, timeout: float) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for t in Path(f"/proc/{pid}/task").iterdir():
            try:
                if (t / "comm").read_text().strip() == name:
                    return int(t.name)
            except OSError:
                pass
        time.sleep(0.1)
    raise RuntimeError(f"no thread named {name!r} in process {pid} after {timeout} s: is the panel on?")


class Terminal:
    """The pseudo-terminal's master side: drains the child's output and answers `ESC [ 6 n`
    (cursor position) as a terminal would (row 1, column 1: the panel then draws from the top)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.bytes, self.stop = fd, 0, False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        tail = b""
        while not self.stop:
            r, _, _ = select.select([self.fd], [], [], 0.2)
            if not r:
                continue
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return
            if not data:
                return
            self.bytes += len(data)
            buf = tail + data
            for _ in range(buf.count(b"\x1b[6n")):
                os.write(self.fd, b"\x1b[1;1R")
            tail = buf[-3:]


def one_run(python: str, rate: float, warmup: float, seconds: float) -> Dict[str, float]:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(COLS), LINES=str(ROWS))
        child = subprocess.Popen([python, "-c", CHILD, str(HERE), str(rate), str(warmup + seconds + 5), os.path.join(d, "run")],
                                 stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)  # fmt: skip
        os.close(slave)
        term = Terminal(master)
        try:
            tid = find_thread(child.pid, "tally-panel", 30)
            time.sleep(warmup)
            w0, (c0, s0), b0 = time.monotonic(), thread_times(child.pid, tid), term.bytes
            time.sleep(seconds)
            w1, (c1, s1), b1 = time.monotonic(), thread_times(child.pid, tid), term.bytes
            rc = child.wait(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            term.stop = True
            term.thread.join(1)
            os.close(master)
        if rc != 0:
            raise RuntimeError(f"the stepping child exited with {rc}")
    wall = w1 - w0
    return {
        "stat_share": (c1 - c0) / wall,
        "sched_share": (s1 - s0) / wall,
        "bytes_per_s": (b1 - b0) / wall,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--warmup", type=float, default=5.0)
    ap.add_argument("--rate", type=float, nargs="+", default=[50.0, 500.0],
                    help="iterations per second; each rate is measured --runs times")  # fmt: skip
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; "
          f"{COLS}x{ROWS} pty, {args.seconds:g} s measured per run")  # fmt: skip
    res: Dict[float, List[Dict[str, float]]] = {rate: [] for rate in args.rate}
    # Interleaved: a change of load hits every rate.
    for r in range(args.runs):
        for rate in args.rate:
            x = one_run(args.python, rate, args.warmup, args.seconds)
            res[rate].append(x)
            print(f"run {r + 1}, {rate:g} it/s: tally-panel {100 * x['stat_share']:.3f} % of a core (utime+stime), "
                  f"{100 * x['sched_share']:.3f} % (schedstat); terminal output {x['bytes_per_s'] / 1024:.1f} KiB/s",
                  flush=True)  # fmt: skip

    def mmm(xs: List[float]) -> str:
        return f"{min(xs):.3f} / {statistics.median(xs):.3f} / {max(xs):.3f} %"

    print(f"\n| tally-panel thread, share of one core (min / median / max over {args.runs} runs) | utime+stime "
          "(/proc/PID/task/TID/stat) | run time (/proc/PID/task/TID/schedstat) |")  # fmt: skip
    print("|---|---|---|")
    for rate, xs in res.items():
        print(f"| {rate:g} it/s | {mmm([100 * x['stat_share'] for x in xs])} | {mmm([100 * x['sched_share'] for x in xs])} |")
    worst = max(statistics.median(x["sched_share"] for x in xs) for xs in res.values())
    print(f"target 5 (<= 0.2 % of a core at 2 Hz): {'met' if worst <= 0.002 else 'NOT met'} "
          f"({100 * worst:.3f} % median at the costliest rate); load average {os.getloadavg()[0]:.2f} at end")  # fmt: skip


if __name__ == "__main__":
    main()
