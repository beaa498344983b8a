"""Side-by-side: every scalar of one tensorboardX event file into a table, with `tally.read`,
tbparse and tensorboard's EventAccumulator. Prints the times and the ratios.

    make wheel-install
    .venv/bin/python bench/read_vs_tbparse.py [STEPS] [TAGS]

The file is written by tensorboardX's own `add_scalar` (one event per scalar, as training
scripts write it): STEPS x TAGS scalars, 100 000 x 10 = 1 000 000 by default.
"""

import sys
import tempfile
import time
from pathlib import Path

from tbparse import SummaryReader
from tensorboard.backend.event_processing import event_accumulator
from tensorboardX import SummaryWriter

import tally


def write(logdir: Path, steps: int, tags: int) -> Path:
    writer = SummaryWriter(str(logdir), max_queue=10_000, flush_secs=3600)
    names = [f"group{t % 3}/metric{t}" for t in range(tags)]
    for step in range(steps):
        for t, name in enumerate(names):
            writer.add_scalar(name, step * 0.001 + t, step, walltime=1_700_000_000.0 + step)
    writer.close()
    (path,) = logdir.glob("events.out.tfevents.*")
    return path


def timed(fn):
    t = time.perf_counter()
    n = fn()
    return time.perf_counter() - t, n


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    tags = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    with tempfile.TemporaryDirectory() as tmp:
        t, path = timed(lambda: write(Path(tmp), steps, tags))
        print(f"wrote {steps * tags} scalars with tensorboardX in {t:.1f} s ({path.stat().st_size / 1e6:.1f} MB)")

        def with_tally():
            return tally.read(path).num_rows

        def with_tally_pandas():
            return len(tally.read(path).to_pandas())

        def with_tbparse():
            return len(SummaryReader(str(path), extra_columns={"wall_time", "dir_name"}).scalars)

        def with_event_accumulator():
            acc = event_accumulator.EventAccumulator(str(path), size_guidance={event_accumulator.SCALARS: 0})
            acc.Reload()
            return sum(len(acc.Scalars(tag)) for tag in acc.Tags()["scalars"])

        results = {}
        for name, fn in [
            ("tally.read (pyarrow Table)", with_tally),
            ("tally.read(...).to_pandas()", with_tally_pandas),
            ("tbparse SummaryReader(...).scalars", with_tbparse),
            ("EventAccumulator.Reload + Scalars", with_event_accumulator),
        ]:
            seconds, rows = timed(fn)
            assert rows == steps * tags, (name, rows)
            results[name] = seconds
            print(f"{name:38s} {seconds:8.3f} s")
        base = results["tally.read (pyarrow Table)"]
        for name in ("tbparse SummaryReader(...).scalars", "EventAccumulator.Reload + Scalars"):
            print(f"{name} / tally.read: {results[name] / base:.0f}x")
        print(f"tbparse / tally.read(...).to_pandas(): {results['tbparse SummaryReader(...).scalars'] / results['tally.read(...).to_pandas()']:.0f}x")


if __name__ == "__main__":
    main()
