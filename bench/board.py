"""`tally board` side by side with TensorBoard and its Rust data server (`--load_fast=true`) on
the same generated logdirs (BENCHMARKS.md "tally board"):

1. one run, 20 tags x 50 000 steps: process start until the first chart's data is served whole;
2. 1 000 runs x 10 tags x 1 000 steps: process start until the runs table lists every run and
   the first run's first chart is served whole;
3. one tag of 10 million points: a 1 000-pixel chart and a zoom (1 % of the steps), warm;
   TensorBoard's answer is the whole series (its frontend samples in the browser);
4. peak memory (VmHWM) of each server once 2 and 3 were served; TensorBoard's is the Python
   process and the data server it starts, each given;
5. 100 runs growing at 10 steps/s with the page open in headless Chromium: the server's CPU
   (user + system) over 30 s, in % of one core.
6. (only when asked, `--only 6`) a 2 GB event file: tally alone, first chart, the runs table's
   slowest answer meanwhile, peak memory.

TensorBoard runs with `--samples_per_plugin scalars=N`, N above every series' length, so it keeps
every point as tally does (with `scalars=0` the data server returns none).

Usage: .venv/bin/python bench/board.py [--tally PATH] [--only 1 2 3 4 5 6] [--dir DIR]
[--tally-only]
`--tally` defaults to the `tally` beside this interpreter (the installed wheel's, a release
build). Without the wheel (no `import tally`), the runs are written by the `bench_logdir`
example beside `--tally` (`cargo build --release -p tally-board --examples`); `--tally-only`
leaves TensorBoard out of every row (its side of row 3 takes minutes), e.g. to compare two
builds of the board back to back.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

try:
    import tally
except ImportError:  # written by the bench_logdir example instead (see the usage above)
    tally = None

WRITER: str | None = None

TB_SAMPLES = 20_000_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 120.0):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, ConnectionError, OSError):
        return None, b""


def write_run(d: Path, tags: list[str], steps: int) -> None:
    if tally is None:
        subprocess.run([WRITER, str(d), str(steps), *tags], check=True)
        return
    w = tally._tally.EventWriter(d)
    for step in range(steps):
        w.write_scalars(step, 1e9 + step, {t: (step % 97) / 97 + i for i, t in enumerate(tags)})
    w.close()


def generate(root: Path, only: list[int]) -> dict[int, Path]:
    dirs = {1: root / "one_run", 2: root / "thousand_runs", 3: root / "ten_million"}
    if 1 in only and not (dirs[1] / ".done").exists():
        write_run(dirs[1], [f"loss/t{i}" for i in range(20)], 50_000)
        (dirs[1] / ".done").touch()
    if (2 in only or 4 in only) and not (dirs[2] / ".done").exists():
        for r in range(1000):
            write_run(dirs[2] / f"run{r:04d}", [f"charts/t{i}" for i in range(10)], 1000)
        (dirs[2] / ".done").touch()
    if (3 in only or 4 in only) and not (dirs[3] / ".done").exists():
        write_run(dirs[3], ["loss"], 10_000_000)
        (dirs[3] / ".done").touch()
    return dirs


class Server:
    """A board or TensorBoard on a free port; `ready(check)` polls until check() is true."""

    def __init__(self, argv: list[str], port: int):
        self.port = port
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def ready(self, check, timeout: float = 1800.0) -> float:
        while time.perf_counter() - self.started < timeout:
            if check(self):
                return time.perf_counter() - self.started
            time.sleep(0.005)
        raise TimeoutError("server never served the data")

    def pids(self) -> list[int]:
        out = [self.proc.pid]
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        if children.exists():
            out += [int(p) for p in children.read_text().split()]
        return out

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pids: list[int]) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def tally_board(exe: str, logdir: Path) -> Server:
    port = free_port()
    return Server([exe, "board", str(logdir), "--port", str(port)], port)


def tensorboard(logdir: Path) -> Server:
    port = free_port()
    exe = str(Path(sys.executable).with_name("tensorboard"))
    argv = [exe, "--logdir", str(logdir), "--port", str(port), "--host", "127.0.0.1",
            "--load_fast=true", "--samples_per_plugin", f"scalars={TB_SAMPLES}"]
    return Server(argv, port)


def tally_has(run: str, tag: str, points: int):
    def check(s: Server) -> bool:
        code, body = get(s.url(f"/api/scalars?run={run}&tag={tag}&width=1000"))
        return code == 200 and json.loads(body)["points"] == points
    return check


def tb_has(run: str, tag: str, points: int):
    def check(s: Server) -> bool:
        code, body = get(s.url(f"/data/plugin/scalars/scalars?run={run}&tag={tag}"))
        return code == 200 and len(json.loads(body)) == points
    return check


def row(name: str, tally_v: float, tb_v: float, unit: str, lower_is_better: bool = True) -> None:
    ratio = tb_v / tally_v if lower_is_better else tally_v / tb_v
    fmt = lambda v: f"{v:,.0f}" if v >= 100 else f"{v:.2f}"  # noqa: E731
    print(f"| {name} | {fmt(tally_v)} {unit} | {fmt(tb_v)} {unit} | {ratio:.1f}x |", flush=True)


def timed(url: str, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        code, _ = get(url)
        assert code == 200, url
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def scenario_1(exe: str, d: Path, tally_only: bool = False) -> None:
    s = tally_board(exe, d)
    t_tally = s.ready(tally_has(".", "loss/t0", 50_000))
    s.stop()
    if tally_only:
        print(f"| 1. one run, 20 tags x 50 000 steps: first chart served | {t_tally * 1e3:,.1f} ms | | |", flush=True)
        return
    s = tensorboard(d)
    t_tb = s.ready(tb_has(".", "loss/t0", 50_000))
    s.stop()
    row("1. one run, 20 tags x 50 000 steps: first chart served", t_tally * 1e3, t_tb * 1e3, "ms")


def scenario_2_4(exe: str, d: Path, mem: dict, tally_only: bool = False) -> None:
    def tally_ready(s: Server) -> bool:
        code, body = get(s.url("/api/runs"))
        return code == 200 and len(json.loads(body)["names"]) == 1000 and tally_has("run0000", "charts/t0", 1000)(s)

    def tb_ready(s: Server) -> bool:
        code, body = get(s.url("/data/runs"))
        return code == 200 and len(json.loads(body)) == 1000 and tb_has("run0000", "charts/t0", 1000)(s)

    def tally_read_whole(s: Server) -> bool:
        code, body = get(s.url("/api/runs"))
        return code == 200 and json.loads(body).get("pending") == 0

    s = tally_board(exe, d)
    t_tally = s.ready(tally_ready)
    # Every row read (the figures of every run), as the page asks for them at once.
    t_tally_whole = s.ready(tally_read_whole)
    for r in range(0, 1000, 100):  # a few charts more, as a page would show
        get(s.url(f"/api/scalars?run=run{r:04d}&tag=charts/t0&width=1000"))
    mem["2 tally"] = max(status_kb(p, "VmHWM") for p in s.pids())
    s.stop()
    if tally_only:
        print(f"| 2. 1 000 runs: runs listed and first chart | {t_tally * 1e3:,.0f} ms | | |")
        print(f"| 2. the same: every row read | {t_tally_whole * 1e3:,.0f} ms | | |")
        print(f"| 4. peak memory after 2 | {mem.pop('2 tally') / 1024:,.0f} MB | | |", flush=True)
        return
    s = tensorboard(d)
    t_tb = s.ready(tb_ready)
    # TensorBoard loads every run; wait until the last one is whole before reading memory.
    t_tb_whole = s.ready(tb_has("run0999", "charts/t9", 1000))
    mem["2 tb"] = [status_kb(p, "VmHWM") for p in s.pids()]
    s.stop()
    row("2. 1 000 runs x 10 tags x 1 000 steps: runs listed and first chart", t_tally * 1e3, t_tb * 1e3, "ms")
    row("2. the same: every run read (tally: every row; TensorBoard: the last run whole)",
        t_tally_whole * 1e3, t_tb_whole * 1e3, "ms")


def scenario_3_4(exe: str, d: Path, mem: dict, tally_only: bool = False) -> None:
    n = 10_000_000
    s = tally_board(exe, d)
    first = s.ready(tally_has(".", "loss", n))
    chart = timed(s.url("/api/scalars?run=.&tag=loss&width=1000"))
    zoom = timed(s.url("/api/scalars?run=.&tag=loss&width=1000&start=5000000&end=5100000"))
    mem["3 tally"] = max(status_kb(p, "VmHWM") for p in s.pids())
    s.stop()
    if tally_only:
        print(f"| 3. 10 M points: first chart served | {first * 1e3:,.0f} ms | | |")
        print(f"| 3. 10 M points: a 1 000-px chart (warm) | {chart * 1e3:.1f} ms | | |")
        print(f"| 3. 10 M points: a zoom to 1 % (warm) | {zoom * 1e3:.1f} ms | | |")
        print(f"| 4. peak memory after 3 | {mem.pop('3 tally') / 1024:,.0f} MB | | |", flush=True)
        return
    s = tensorboard(d)
    first_tb = s.ready(tb_has(".", "loss", n))
    whole = timed(s.url("/data/plugin/scalars/scalars?run=.&tag=loss"), repeats=3)
    mem["3 tb"] = [status_kb(p, "VmHWM") for p in s.pids()]
    s.stop()
    row("3. 10 M points: first chart served", first * 1e3, first_tb * 1e3, "ms")
    row("3. 10 M points: a 1 000-px chart (warm; TensorBoard: the series)", chart * 1e3, whole * 1e3, "ms")
    row("3. 10 M points: a zoom to 1 % (warm; TensorBoard: the series)", zoom * 1e3, whole * 1e3, "ms")


def scenario_5(exe: str, root: Path, tally_only: bool = False) -> None:
    logdir = root / "growing"
    shutil.rmtree(logdir, ignore_errors=True)
    writer = subprocess.Popen([sys.executable, "-c", GROWER, str(logdir)])
    time.sleep(3)
    results = {}
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium")
        for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
            options.add_argument(a)
        servers = [("tally", lambda: tally_board(exe, logdir)), ("tb", lambda: tensorboard(logdir))]
        for name, start in servers[:1] if tally_only else servers:
            s = start()
            s.ready(lambda s: get(s.url("/"))[0] == 200)
            driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
            driver.get(s.url("/"))
            time.sleep(10)
            c0, t0 = cpu_seconds(s.pids()), time.perf_counter()
            time.sleep(30)
            results[name] = (cpu_seconds(s.pids()) - c0) / (time.perf_counter() - t0) * 100
            if name == "tally":
                # The page followed the runs: its charts hold the newest steps.
                shown = driver.execute_script(
                    "return [document.querySelectorAll('.chart[data-tag]').length, document.getElementById('status').textContent]")
                print(f"  (tally's page: {shown[0]} charts, {shown[1]})", flush=True)
            driver.quit()
            s.stop()
    finally:
        writer.terminate()
        writer.wait()
    if tally_only:
        print(f"| 5. 100 runs growing, page open: server CPU | {results['tally']:.2f} % of a core | | |", flush=True)
        return
    row("5. 100 runs growing at 10 steps/s, page open: server CPU", results["tally"], results["tb"], "% of a core")


# 100 runs, each a step every 0.1 s (10 steps/s), 10 tags a step.
GROWER = """
import sys, time, tally
from pathlib import Path
root = Path(sys.argv[1])
writers = [tally._tally.EventWriter(root / f"run{r:03d}") for r in range(100)]
step = 0
while True:
    t = time.time()
    for w in writers:
        w.write_scalars(step, t, {f"charts/t{i}": (step % 50) / 50 + i for i in range(10)})
        w.flush()
    step += 1
    time.sleep(max(0.0, 0.1 - (time.time() - t)))
"""


def scenario_6(exe: str, root: Path) -> None:
    """A 2 GB event file (one run, 20 tags x 5 M steps, 100 M points): tally alone (TensorBoard
    needs minutes and tens of GB here). Time to its first chart, the slowest answer of the runs
    table asked every 100 ms meanwhile (the board stays responsive while it reads), peak memory."""
    d = root / "two_gigabytes"
    if not (d / ".done").exists():
        write_run(d, [f"loss/t{i}" for i in range(20)], 5_000_000)
        (d / ".done").touch()
    size = sum(f.stat().st_size for f in d.glob("events.out.tfevents.*"))
    s = tally_board(exe, d)
    s.ready(lambda s: get(s.url("/api/runs"))[0] == 200)
    chart: dict = {}

    def ask_chart() -> None:
        t = time.perf_counter()
        code, _ = get(s.url("/api/scalars?run=.&tag=loss/t0&width=1000"), timeout=600)
        chart["code"], chart["secs"] = code, time.perf_counter() - t

    asker = threading.Thread(target=ask_chart)
    asker.start()
    slowest = 0.0
    while asker.is_alive():
        t = time.perf_counter()
        code, _ = get(s.url("/api/runs"))
        assert code == 200
        slowest = max(slowest, time.perf_counter() - t)
        time.sleep(0.1)
    asker.join()
    assert chart["code"] == 200, chart
    peak = max(status_kb(p, "VmHWM") for p in s.pids())
    # The whole chart, zooms to 1 % and 0.1 % of the steps, a hover: first asked, then warm.
    def first_then_warm(url: str) -> tuple[float, float]:
        t = time.perf_counter()
        assert get(url)[0] == 200, url
        return time.perf_counter() - t, timed(url)

    warm = {name: first_then_warm(s.url(path)) for name, path in (
        ("a 1 000-px chart", "/api/scalars?run=.&tag=loss/t0&width=1000"),
        ("a zoom to 1 %", "/api/scalars?run=.&tag=loss/t0&width=1000&start=2500000&end=2550000"),
        ("a zoom to 0.1 %", "/api/scalars?run=.&tag=loss/t0&width=1000&start=2500000&end=2505000"),
        ("a hover (nearest point)", "/api/nearest?run=.&tag=loss/t0&at=2500000.3"),
    )}
    rss = max(status_kb(p, "VmRSS") for p in s.pids())
    s.stop()
    print(f"| 6. a {size / 1e9:.2f} GB event file (100 M points): first chart | {chart['secs']:.1f} s | | |")
    print(f"| 6. the same: slowest runs-table answer during that read | {slowest * 1e3:.0f} ms | | |")
    print(f"| 6. the same: peak memory | {peak / 1024:,.0f} MB | | |", flush=True)
    for name, (first, secs) in warm.items():
        print(f"| 6. the same: {name}, first asked / warm | {first * 1e3:.1f} ms / {secs * 1e3:.1f} ms | | |")
    print(f"| 6. the same: memory held after those | {rss / 1024:,.0f} MB | | |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", default=str(Path(sys.executable).with_name("tally")))
    ap.add_argument("--only", nargs="*", type=int, default=[1, 2, 3, 4, 5])
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "tally-board-bench")
    ap.add_argument("--tally-only", action="store_true")
    a = ap.parse_args()
    global WRITER
    WRITER = str(Path(a.tally).with_name("bench_logdir"))
    a.dir.mkdir(parents=True, exist_ok=True)
    dirs = generate(a.dir, a.only)
    print("| | tally board | TensorBoard (data server) | ratio |\n|---|---|---|---|", flush=True)
    mem: dict = {}
    if 1 in a.only:
        scenario_1(a.tally, dirs[1], a.tally_only)
    if 2 in a.only or 4 in a.only:
        scenario_2_4(a.tally, dirs[2], mem, a.tally_only)
    if 3 in a.only or 4 in a.only:
        scenario_3_4(a.tally, dirs[3], mem, a.tally_only)
    for k in ("2", "3"):
        if f"{k} tally" in mem:
            tb = mem[f"{k} tb"]
            data_server = tb[1] if len(tb) > 1 else tb[0]
            row(f"4. peak memory after {k} (TensorBoard: its data server; Python {tb[0] / 1024:.0f} MB)",
                mem[f"{k} tally"] / 1024, data_server / 1024, "MB")
    if 5 in a.only:
        scenario_5(a.tally, a.dir, a.tally_only)
    if 6 in a.only:
        scenario_6(a.tally, a.dir)


if __name__ == "__main__":
    main()
