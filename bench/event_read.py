"""Side-by-side: reading every scalar of an event file with tensorboard's EventAccumulator
versus `tally export`, on the same file. Prints the ratio.

    cargo build --release -p tally-cli -p tally-tfevents --examples --bins
    .venv/bin/python bench/event_read.py [EVENTS] [TAGS_PER_EVENT]
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tensorboard.backend.event_processing import event_accumulator

REPO = Path(__file__).resolve().parents[1]
RELEASE = REPO / "target" / "release"


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    tags = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([RELEASE / "examples" / "gen_events", str(events), str(tags), tmp], check=True, stdout=subprocess.DEVNULL)
        t = time.perf_counter()
        acc = event_accumulator.EventAccumulator(tmp, size_guidance={event_accumulator.SCALARS: 0})
        acc.Reload()
        n = sum(len(acc.Scalars(tag)) for tag in acc.Tags()["scalars"])
        ea = time.perf_counter() - t
        t = time.perf_counter()
        subprocess.run([RELEASE / "tally", "export", "--progress", "never", tmp], check=True, stdout=subprocess.DEVNULL)
        tl = time.perf_counter() - t
    print(f"{events} events x {tags} tags = {n} scalars")
    print(f"EventAccumulator.Reload + Scalars: {ea:8.3f} s")
    print(f"tally export (jsonl to /dev/null, incl. process start): {tl:8.3f} s")
    print(f"ratio: {ea / tl:.1f}x")


if __name__ == "__main__":
    main()
