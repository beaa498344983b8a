"""How far the healthy runs of the health corpus stay from each rule's default: the margins
docs/contract/health.md quotes. Needs tensorboard (the corpus venv has it).

    .venv-corpus/bin/python tests/corpus/measure.py
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

ROOT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "health_corpus"
COLLAPSING = {"Loss/entropy", "Policy/mean_std", "Policy/mean_noise_std", "train/entropy_loss", "train/std", "losses/entropy"}
REWARD = {"Train/mean_reward", "rollout/ep_rew_mean", "charts/episodic_return"}
THROUGHPUT = {"Perf/total_fps", "time/fps", "charts/SPS"}
LOSS_PREFIXES = ("Loss/value", "Loss/surrogate", "Loss/value_function", "train/value_loss", "train/loss", "train/policy_gradient_loss",
                 "train/actor_loss", "train/critic_loss", "train/ent_coef_loss", "losses/value_loss", "losses/policy_loss",
                 "losses/td_loss")  # fmt: skip


def main() -> None:
    manifest = json.loads((ROOT / "manifest.json").read_text())
    lowest_collapse, longest_flat, slowest, top_z3 = [], [], [], []
    for name, run in manifest["runs"].items():
        if not run["healthy"]:
            continue
        ea = EventAccumulator(str(ROOT / name), size_guidance={"scalars": 0})
        ea.Reload()
        tags = ea.Tags()["scalars"]
        losses = [t for t in tags if t in LOSS_PREFIXES]
        trained_from = min((ea.Scalars(t)[0].step for t in losses), default=None)
        for t in tags:
            ev = ea.Scalars(t)
            vals = [e.value for e in ev]
            if t in COLLAPSING and len(vals) > 5:
                level = sum(vals[:5]) / 5
                sign = 1 if level > 0 else -1
                lowest_collapse.append((min(sign * v for v in vals[5:]) / abs(level), name, t))
            if t in REWARD:
                run_len, best, top = 1, vals[0], 0
                for a, b in zip(vals, vals[1:]):
                    run_len = run_len + 1 if a == b else 1
                    best = max(best, b)
                    solved = b >= best and float(b).is_integer()
                    if not solved:
                        top = max(top, run_len)
                longest_flat.append((top, name, t))
            if t in THROUGHPUT:
                pts = [(e.step, e.wall_time) for e in ev if trained_from is None or e.step >= trained_from]
                paces = [(s1 - s0) / (w1 - w0) for (s0, w0), (s1, w1) in zip(pts, pts[1:]) if s1 > s0 and w1 > w0]
                if len(paces) < 10:
                    continue
                med = statistics.median(paces)
                worst = 1.0
                for i in range(len(pts)):
                    for j in range(i + 1, len(pts)):
                        if pts[j][1] - pts[i][1] >= 20:
                            worst = min(worst, (pts[j][0] - pts[i][0]) / (pts[j][1] - pts[i][1]) / med)
                            break
                slowest.append((worst, name, t))
            if t in LOSS_PREFIXES and len(vals) > 10:
                z3 = 0.0
                zs = []
                for i in range(10, len(vals)):
                    w = vals[max(0, i - 200) : i]
                    m = statistics.median(w)
                    mad = statistics.median([abs(x - m) for x in w])
                    scale = max(1.4826 * mad, 0.05 * abs(m), 1e-300)
                    zs.append(abs(vals[i] - m) / scale)
                for i in range(len(zs) - 2):
                    z3 = max(z3, min(zs[i : i + 3]))
                top_z3.append((z3, max(zs), name, t))
    print("collapse: lowest share of the early level on a healthy run")
    for r in sorted(lowest_collapse)[:5]:
        print(f"  {r[0]:.3f}  {r[1]} {r[2]}")
    print("flat_for: longest run of equal values (not a whole-number best) on a healthy run")
    for r in sorted(longest_flat, reverse=True)[:5]:
        print(f"  {r[0]}  {r[1]} {r[2]}")
    print("throughput: slowest 20 s stretch's pace over the median pace, on a healthy run")
    for r in sorted(slowest)[:5]:
        print(f"  {r[0]:.3f}  {r[1]} {r[2]}")
    print("divergence: largest abs(z) held 3 values in a row (and the largest single), on a healthy run")
    for r in sorted(top_z3, reverse=True)[:5]:
        print(f"  {r[0]:.1f} ({r[1]:.0f})  {r[2]} {r[3]}")
    print("divergence: largest single abs(z) on a healthy run")
    for r in sorted(top_z3, key=lambda r: -r[1])[:3]:
        print(f"  {r[1]:.0f}  {r[2]} {r[3]}")


if __name__ == "__main__":
    main()
