"""GPU check of the system metrics (docs/contract/system-metrics.md "GPUs"), for a machine with
an NVIDIA GPU, its driver and torch with CUDA: a tally.Logger run samples every 0.5 s through
an idle phase, a known load (back-to-back matrix multiplies on cuda:0) and a second idle phase;
GPU 0's utilisation and memory must rise under the load and fall after it.

    python bench/gpu_system_metrics.py [--seconds 10] [--log-root /tmp/tally-gpu-check]

Exits 0 and prints the three phases' means when the GPU tags behave; 1 naming what did not.
BENCHMARKS.md "System metrics" says when to run it.
"""

import argparse
import statistics
import sys
import time

import tally
from tensorboard.backend.event_processing import event_accumulator


def phase(log, it, seconds, work):
    t0 = time.time()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        work()
        it += 1
        log.step(it, metrics={"charts/phase_marker": 1.0})
        time.sleep(0.01)
    return it, (t0, time.time())


def mean_in(events, span, settle=1.0):
    lo, hi = span
    vals = [e.value for e in events if lo + settle <= e.wall_time <= hi]
    return statistics.mean(vals) if vals else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--log-root", default="/tmp/tally-gpu-check")
    a = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: run this on a machine with an NVIDIA GPU", file=sys.stderr)
        return 1
    log = tally.Logger(algo="gpucheck", task="matmul", profile="onpolicy", log_root=a.log_root, panel="off", system_interval=0.5)
    x = torch.randn(4096, 4096, device="cuda:0")

    def load():
        for _ in range(8):
            x.matmul(x)
        torch.cuda.synchronize()

    it, idle1 = phase(log, 0, a.seconds / 2, lambda: None)
    it, busy = phase(log, it, a.seconds, load)
    del x
    torch.cuda.empty_cache()
    it, idle2 = phase(log, it, a.seconds / 2, lambda: None)
    log.close()
    acc = event_accumulator.EventAccumulator(str(log.run_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    tags = acc.Tags()["scalars"]
    problems = []
    for tag in ("system/gpu0/util_percent", "system/gpu0/memory_used_bytes", "system/gpu0/power_watts"):
        if tag not in tags:
            problems.append(f"{tag} missing (tags: {sorted(t for t in tags if t.startswith('system/'))})")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    util = acc.Scalars("system/gpu0/util_percent")
    mem = acc.Scalars("system/gpu0/memory_used_bytes")
    u = [mean_in(util, s) for s in (idle1, busy, idle2)]
    m = [mean_in(mem, s) for s in (idle1, busy, idle2)]
    print(f"util %: idle {u[0]:.1f}, load {u[1]:.1f}, idle {u[2]:.1f}")
    print(f"memory used MiB: idle {m[0] / 2**20:.0f}, load {m[1] / 2**20:.0f}, idle {m[2] / 2**20:.0f}")
    if not u[1] >= u[0] + 30 or not u[1] >= u[2] + 30:
        problems.append("utilisation did not rise by 30 points under the load")
    if not m[1] > m[0]:
        problems.append("memory used did not rise under the load")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(f"ok: {log.run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
