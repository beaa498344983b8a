"""Reading event files: tally against every anchor, on the same generated files (`make bench`).

    make bench                                   # or, with the release build and venv in place:
    .venv/bin/python bench/read_bench.py [--steps N] [--repeats R] [--anchor-repeats A]
                                         [--scaling] [--plot docs/read_scaling.png] [--json OUT]

Two files of STEPS x 10 scalars (1 000 000 by default), written by `gen_events` (release):
`per-tag`, one scalar per event as torch's and tensorboardX's `add_scalar` write them, and
`per-step`, ten scalars per event as tally writes them. Every tool reads every scalar of the
same file, each run in a fresh process (so peak RSS is the tool's own):

- floor: read every byte in 1 MiB chunks and CRC-32C it (`read_floor`, Rust); also the Rust
  reader's two paths, `prost` (general decode) and `fast` (scalar fast path);
- `tally.read` into a pyarrow Table (also its CPU over every thread and its page faults);
  `tally export` as Parquet, JSON lines and CSV (process start included: what a user waits for);
- the first touch of as much fresh memory as `tally.read`'s table holds (28 bytes per row,
  4 KiB pages): what the returned columns cost before a byte is read;
- tensorboard's EventAccumulator (`Reload` + `Scalars` per tag), tbparse's `SummaryReader`,
  a minimal Python TFRecord loop (framing only: no CRC, no protobuf);
- tensorboard-data-server (the wheel's `server` binary), `--reload once
  --samples-per-plugin scalars=all`: process start until its "Finished load cycle" log line,
  without `--checksum` (its default: it checks CRCs only when a record fails to parse) and with.

Python tools start their clock after their imports and a settle of `SETTLE` seconds (why:
`_clock`). Times are min/median/max over the repeats; ratios use medians. `--scaling` adds tally's reading
cost against file size (10 MB to 2 GB) and number of runs (1 to 1 000).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETTLE = 0.5
RELEASE = REPO / "target" / "release"
TAGS = 10


# ---------------------------------------------------------------- one tool, in this process


def one(tool: str, path: str) -> dict:
    """Runs `tool` once on `path` and returns its seconds (reading only), rows, and the CPU
    seconds (every thread) and minor page faults of the reading."""
    t, rows = _one(tool, path)
    return {
        "seconds": time.perf_counter() - t[0],
        "rows": rows,
        "cpu_seconds": time.process_time() - t[1],
        "minor_faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - t[2],
    }


def _clock() -> tuple[float, float, int]:
    """Wall clock, CPU of every thread, minor page faults: taken after the imports, once the
    process is settled.

    numpy (which pyarrow, tensorboard and tbparse import) starts OpenBLAS's thread pool, whose
    threads busy-wait for about a tenth of a second after starting: on two cores a read started
    at once shares its cores with that spin (it doubled `tally.read`'s CPU time here). Every
    tool waits the same `SETTLE` seconds first, so none is measured against it."""
    time.sleep(SETTLE)
    return time.perf_counter(), time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _one(tool: str, path: str) -> tuple[tuple[float, float, int], int]:
    if tool == "tally.read":
        import pyarrow  # noqa: F401  (imported before the clock starts, as a user has it)

        import tally

        t = _clock()
        rows = tally.read(path).num_rows
    elif tool == "event_accumulator":
        from tensorboard.backend.event_processing import event_accumulator as ea

        t = _clock()
        acc = ea.EventAccumulator(path, size_guidance={ea.SCALARS: 0})
        acc.Reload()
        rows = sum(len(acc.Scalars(tag)) for tag in acc.Tags()["scalars"])
    elif tool == "tbparse":
        from tbparse import SummaryReader

        t = _clock()
        rows = len(SummaryReader(path, extra_columns={"wall_time"}).scalars)
    elif tool == "tfrecord_loop":
        t = _clock()
        rows = 0
        for f in sorted(Path(path).rglob("*tfevents*")):
            with open(f, "rb", buffering=1 << 20) as fh:
                while True:
                    header = fh.read(12)
                    if len(header) < 12:
                        break
                    (length,) = struct.unpack("<Q", header[:8])
                    fh.read(length)
                    fh.read(4)
                    rows += 1
    elif tool == "first_touch":
        # The table's memory written once, fresh from the kernel, in 4 KiB pages as Rust's
        # allocator gets it (numpy's huge-page advice off): the cost of the pages alone.
        import numpy as np

        try:
            from numpy._core.multiarray import _set_madvise_hugepage
        except ImportError:
            from numpy.core.multiarray import _set_madvise_hugepage
        _set_madvise_hugepage(False)
        rows = int(path)
        t = _clock()
        np.ones(rows * 28 // 8)
    elif tool == "baseline":
        import pyarrow  # noqa: F401

        import tally  # noqa: F401

        t = _clock()
        rows = 0
    else:
        raise SystemExit(f"unknown tool {tool!r}")
    return t, rows


# ---------------------------------------------------------------- measuring processes


def run_child(argv: list[str], stdout=subprocess.DEVNULL) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS (KiB) and stdout of one child process."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE if stdout is None else stdout)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} failed with status {status}")
    return seconds, usage.ru_maxrss, out


def python_tool(tool: str, path: Path) -> tuple[float, int, int]:
    return python_tool_usage(tool, path)[:3]


def python_tool_usage(tool: str, path) -> tuple[float, int, int, float, int]:
    """Seconds, peak RSS, rows, CPU seconds and minor page faults of one read in a fresh process."""
    _, rss, out = run_child([sys.executable, __file__, "--one", tool, str(path)], stdout=None)
    r = json.loads(out)
    return r["seconds"], rss, r["rows"], r["cpu_seconds"], r["minor_faults"]


def data_server(path: Path, checksum: bool) -> tuple[float, int, float]:
    """Seconds from start to "Finished load cycle", peak RSS (KiB), and its own load time."""
    import tensorboard_data_server

    server = tensorboard_data_server.server_binary()
    if not server:
        raise FileNotFoundError("the tensorboard-data-server wheel ships no server binary here")
    argv = [server, "--logdir", str(path), "--reload", "once", "--samples-per-plugin", "scalars=all", "--port", "0", "-v"]
    argv += ["--checksum"] if checksum else ["--no-checksum"]
    with tempfile.TemporaryDirectory() as tmp:
        argv += ["--port-file", str(Path(tmp) / "port")]
        t = time.perf_counter()
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
        try:
            for line in iter(proc.stderr.readline, b""):
                m = re.search(rb"Finished load cycle \(([0-9.]+)(ms|s|\xc2\xb5s)\)", line)
                if m:
                    seconds = time.perf_counter() - t
                    own = float(m.group(1)) / {b"ms": 1e3, b"s": 1.0, b"\xc2\xb5s": 1e6}[m.group(2)]
                    status = Path(f"/proc/{proc.pid}/status").read_text()
                    rss = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))
                    return seconds, rss, own
            raise SystemExit(f"data server ended without finishing a load: {argv}")
        finally:
            proc.kill()
            proc.wait()


def stats(xs: list[float]) -> dict:
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs), "n": len(xs)}


def fmt(s: dict) -> str:
    return f"{s['median']:8.3f} s  ({s['min']:.3f} / {s['max']:.3f}, n={s['n']})"


# ---------------------------------------------------------------- the comparison


def generate(dir: Path, steps: int, tags: int, mode: str | None) -> Path:
    argv = [str(RELEASE / "examples" / "gen_events"), str(steps), str(tags), str(dir)]
    subprocess.run(argv + ([mode] if mode else []), check=True, stdout=subprocess.DEVNULL)
    (path,) = dir.glob("events.out.tfevents.*")
    return path


def measure_workload(name: str, run_dir: Path, repeats: int, anchor_repeats: int, rows: int, anchors: bool = True) -> dict:
    (file,) = run_dir.glob("events.out.tfevents.*")
    size = file.stat().st_size
    print(f"\n== {name}: {rows} scalars, {size / 1e6:.1f} MB ({file.name})", flush=True)
    res: dict = {"rows": rows, "bytes": size}
    _, _, out = run_child([str(RELEASE / "examples" / "read_floor"), str(repeats), str(file)], stdout=None)
    floor = json.loads(out)
    assert floor["scalars"] == rows, floor
    for key in ("floor", "prost", "fast"):
        res[f"rust {key}"] = {**stats(floor[key]), "rss_kib": None}

    def timed(label: str, fn, n: int) -> None:
        secs, rss = [], []
        for _ in range(n):
            s, r = fn()
            secs.append(s)
            rss.append(r)
        res[label] = {**stats(secs), "rss_kib": max(rss)}
        print(f"  {label:38s} {fmt(res[label])}  peak RSS {max(rss) / 1024:7.1f} MiB", flush=True)

    def py(tool: str):
        def f():
            s, r, n = python_tool(tool, run_dir)
            assert n == rows or tool in ("tfrecord_loop", "baseline"), (tool, n, rows)
            return s, r

        return f

    def export(fmt_: str):
        def f():
            with tempfile.TemporaryDirectory() as tmp:
                argv = [str(RELEASE / "tally"), "export", "--progress", "never", "--format", fmt_]
                if fmt_ == "parquet":
                    argv += ["--output", str(Path(tmp) / "out.parquet")]
                s, r, _ = run_child(argv + [str(run_dir)])
            return s, r

        return f

    for key in ("floor", "prost", "fast"):
        print(f"  {'rust ' + key:38s} {fmt(res['rust ' + key])}", flush=True)
    timed("python + pyarrow + tally imported", py("baseline"), 1)
    usage: list = []

    def tally_read():
        s, r, n, cpu, faults = python_tool_usage("tally.read", run_dir)
        assert n == rows, (n, rows)
        usage.append((cpu, faults))
        return s, r

    timed("tally.read (pyarrow Table)", tally_read, repeats)
    cpu, faults = zip(*usage)
    res["tally.read (pyarrow Table)"].update(cpu=stats(list(cpu)), minor_faults=statistics.median(faults))
    print(f"  {'  its CPU (every thread)':38s} {fmt(stats(list(cpu)))}  minor page faults {statistics.median(faults):.0f}", flush=True)
    def first_touch():
        s, r, _, cpu, faults = python_tool_usage("first_touch", rows)
        touch.append((cpu, faults))
        return s, r

    touch: list = []
    timed("first touch of 28 B/row fresh memory", first_touch, repeats)
    cpu, faults = zip(*touch)
    print(f"  {'  its CPU':38s} {fmt(stats(list(cpu)))}  minor page faults {statistics.median(faults):.0f}", flush=True)
    timed("tally export --format parquet", export("parquet"), repeats)
    timed("tally export --format jsonl", export("jsonl"), repeats)
    timed("tally export --format csv", export("csv"), repeats)
    if not anchors:
        return res
    timed("python TFRecord loop (framing only)", py("tfrecord_loop"), anchor_repeats)
    try:
        for checksum in (False, True):
            label = "data server" + (" --checksum" if checksum else "")
            own = []

            def ds(checksum=checksum, own=own):
                s, r, o = data_server(run_dir, checksum)
                own.append(o)
                return s, r

            timed(label, ds, repeats)
            res[label]["own_load"] = stats(own)
    except FileNotFoundError as e:
        print(f"  data server: not measured ({e})")
    timed("tbparse SummaryReader.scalars", py("tbparse"), anchor_repeats)
    timed("EventAccumulator Reload + Scalars", py("event_accumulator"), anchor_repeats)
    return res


def ratios(res: dict) -> None:
    m = lambda k: res[k]["median"]  # noqa: E731
    tr, pq = m("tally.read (pyarrow Table)"), m("tally export --format parquet")
    print("  ratios (medians):")
    for anchor in ("EventAccumulator Reload + Scalars", "tbparse SummaryReader.scalars", "data server", "data server --checksum", "python TFRecord loop (framing only)"):
        if anchor in res:
            print(f"    {anchor:38s} / tally.read {m(anchor) / tr:7.1f}x   / export parquet {m(anchor) / pq:7.1f}x")
    floor = m("rust floor")
    print(f"    tally.read / floor {tr / floor:5.1f}x   export parquet / floor {pq / floor:5.1f}x   rust fast / floor {m('rust fast') / floor:5.1f}x   rust prost / fast {m('rust prost') / m('rust fast'):5.1f}x")
    if "data server" in res:
        print(f"    peak RSS: tally.read {res['tally.read (pyarrow Table)']['rss_kib'] / 1024:.0f} MiB (interpreter and pyarrow {res['python + pyarrow + tally imported']['rss_kib'] / 1024:.0f} MiB of it), export parquet {res['tally export --format parquet']['rss_kib'] / 1024:.0f} MiB, data server {res['data server']['rss_kib'] / 1024:.0f} MiB")


def scaling(tmp: Path, repeats: int) -> dict:
    """Cost against file size (per-step files, 10 MB to 2 GB) and number of runs (1 to 1 000)."""
    out: dict = {"size": [], "runs": []}
    print("\n== scaling: file size (per-step events, 10 tags)")
    per_step_bytes = None
    for target_mb in (10, 100, 500, 1000, 2000):
        d = tmp / f"size{target_mb}"
        if per_step_bytes is None:
            probe = generate(tmp / "probe", 1000, TAGS, None)
            per_step_bytes = probe.stat().st_size / 1000
            shutil.rmtree(tmp / "probe")
        steps = int(target_mb * 1e6 / per_step_bytes)
        # The file and its Parquet export must fit with room to spare on a shared disk.
        free_mb = shutil.disk_usage(tmp).free / 1e6
        if free_mb < 2.5 * target_mb + 1000:
            print(f"  {target_mb} MB: skipped, {free_mb:.0f} MB free on {tmp}")
            continue
        file = generate(d, steps, TAGS, None)
        _, _, o = run_child([str(RELEASE / "examples" / "read_floor"), str(repeats), str(file)], stdout=None)
        floor = json.loads(o)
        secs, rss = [], []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(dir=tmp) as t:
                s, r, _ = run_child([str(RELEASE / "tally"), "export", "--progress", "never", "--format", "parquet", "--output", str(Path(t) / "o.parquet"), str(d)])
            secs.append(s)
            rss.append(r)
        row = {"mb": file.stat().st_size / 1e6, "scalars": floor["scalars"], "floor": statistics.median(floor["floor"]), "fast": statistics.median(floor["fast"]), "parquet": statistics.median(secs), "parquet_rss_kib": max(rss)}
        out["size"].append(row)
        print(f"  {row['mb']:8.0f} MB {row['scalars']:>11,} scalars: floor {row['floor']:.3f} s, rust fast {row['fast']:.3f} s, export parquet {row['parquet']:.3f} s ({row['parquet'] / row['scalars'] * 1e9:.0f} ns/scalar, peak RSS {max(rss) / 1024:.0f} MiB)", flush=True)
        shutil.rmtree(d)
    print("\n== scaling: number of runs (each 1 000 steps x 10 tags, per-step events)")
    root = tmp / "runs"
    made = 0
    for n in (1, 10, 100, 1000):
        for i in range(made, n):
            generate(root / f"run{i:04d}", 1000, TAGS, None)
        made = n
        secs, rss = [], []
        for _ in range(repeats):
            s, r, rows = python_tool("tally.read", root)
            assert rows == n * 1000 * TAGS
            secs.append(s)
            rss.append(r)
        row = {"runs": n, "scalars": n * 1000 * TAGS, "tally_read": statistics.median(secs), "rss_kib": max(rss)}
        out["runs"].append(row)
        print(f"  {n:5d} runs: tally.read {row['tally_read']:.3f} s ({row['tally_read'] / row['scalars'] * 1e9:.0f} ns/scalar, peak RSS {max(rss) / 1024:.0f} MiB)", flush=True)
    shutil.rmtree(root)
    return out


def plot(scal: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    mb = [r["mb"] for r in scal["size"]]
    for key, label in (("floor", "read + CRC floor"), ("fast", "Rust reader (fast path)"), ("parquet", "tally export --format parquet")):
        a.loglog(mb, [r[key] for r in scal["size"]], "o-", label=label)
    a.set_xlabel("event file size (MB)")
    a.set_ylabel("seconds")
    a.set_title("one file, 10 scalars per event")
    a.legend()
    runs = [r["runs"] for r in scal["runs"]]
    b.loglog(runs, [r["tally_read"] for r in scal["runs"]], "o-", label="tally.read (all runs)")
    b.set_xlabel("runs (10 000 scalars each)")
    b.set_ylabel("seconds")
    b.set_title("a directory of runs")
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def machine() -> str:
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("model name")), platform.processor())
    return f"{os.cpu_count()} cores, {cpu}, load average {os.getloadavg()[0]:.1f} at start"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=2, metavar=("TOOL", "PATH"))
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--anchor-repeats", type=int, default=3)
    ap.add_argument("--scaling", action="store_true")
    ap.add_argument("--plot", type=Path)
    ap.add_argument("--json", type=Path)
    # A/B runs of two builds: tally's rows only, from another build's target/release (with that
    # build's package first on PYTHONPATH).
    ap.add_argument("--tally-only", action="store_true", help="skip the anchors (EventAccumulator, tbparse, data server, TFRecord loop)")
    ap.add_argument("--release", type=Path, help="another build's target/release (default: this checkout's)")
    args = ap.parse_args()
    if args.release is not None:
        global RELEASE
        RELEASE = args.release
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    for exe in (RELEASE / "tally", RELEASE / "examples" / "gen_events", RELEASE / "examples" / "read_floor"):
        if not exe.is_file():
            raise SystemExit(f"{exe} missing: cargo build --release -p tally-cli -p tally-tfevents --examples --bins")
    print(f"machine: {machine()}")
    results: dict = {"machine": machine(), "steps": args.steps}
    with tempfile.TemporaryDirectory(prefix="tally-read-bench-") as tmp:
        tmp = Path(tmp)
        rows = args.steps * TAGS
        for name, mode in (("per-tag (one scalar per event, as torch/tensorboardX write)", "per-tag"), ("per-step (10 scalars per event, as tally writes)", None)):
            run_dir = tmp / (mode or "per-step")
            generate(run_dir, args.steps, TAGS, mode)
            results[name] = measure_workload(name, run_dir, args.repeats, args.anchor_repeats, rows, not args.tally_only)
            if not args.tally_only:
                ratios(results[name])
            shutil.rmtree(run_dir)
        if args.scaling:
            results["scaling"] = scaling(tmp, max(1, min(args.repeats, 3)))
            if args.plot:
                plot(results["scaling"], args.plot)
                print(f"plot: {args.plot}")
    results["load_average_at_end"] = os.getloadavg()[0]
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
