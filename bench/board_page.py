"""The board's page in headless Chromium: its cost with 50 charts of 20 runs x 50 000 points
(BENCHMARKS.md "tally board's page"), measured with the browser's own Performance API, for
each `tally` given (e.g. this checkout's plotly.js page against an older build's canvas page).

Per binary, after the page is opened with every run selected:

1. first chart: navigation start until one chart draws all 20 runs;
2. every chart: until all 50 have drawn their 20 runs, the page scrolled down a screen at a
   time as a reader would, the next once every chart on screen is drawn (a page that draws
   charts as they come into view draws them then);
3. long tasks (the Long Tasks API, main thread > 50 ms) from navigation until 2, summed: the
   time the page could not answer input;
4. frame time while scrolling the whole page top to bottom (requestAnimationFrame deltas while
   the page scrolls 40 px a frame): mean, 95th percentile, worst;
5. frame time while the cursor crosses a chart (real mouse moves through chromedriver: the
   readout, and with it the cursor drawn on the other charts in view);
6. the JS heap once everything is drawn and garbage collected
   (`performance.memory.usedJSHeapSize`, Chromium's `--enable-precise-memory-info`).

Usage: .venv/bin/python bench/board_page.py --tally PATH [--tally PATH ...] [--dir DIR]
[--runs 20] [--tags 50] [--points 50000] [--repeat 2]
The logdir is written once into DIR (default: a temporary directory) by `tally`'s Python
module (`import tally`); a DIR already holding it is reused.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def write_logdir(root: Path, runs: int, tags: int, points: int) -> None:
    import tally

    names = [f"section{t % 5}/tag{t:02d}" for t in range(tags)]
    for r in range(runs):
        d = root / f"run{r:02d}"
        if d.exists():
            continue
        w = tally._tally.EventWriter(d)
        for step in range(points):
            base = math.sin(step / 700 + r) + r * 0.1
            w.write_scalars(step, 1e9 + step, {n: base + i + ((step * 7919 + r) % 101) / 200
                                               for i, n in enumerate(names)})
        w.close()


def serve(tally_bin: str, logdir: Path):
    proc = subprocess.Popen([tally_bin, "board", str(logdir), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.match(r"tally board: (http://\S+)", line)
    assert m, line
    return proc, m.group(1)


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    o = webdriver.ChromeOptions()
    o.binary_location = shutil.which("chromium")
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000",
              "--enable-precise-memory-info", "--js-flags=--expose-gc"):
        o.add_argument(a)
    return webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver")), options=o)


# Installed before the page's scripts run: long tasks from navigation on.
OBSERVE = """
window.__long = [];
new PerformanceObserver(l => { for (const e of l.getEntries()) window.__long.push(e.duration); })
  .observe({ type: 'longtask', buffered: true });
"""

DRAWN = """
const n = arguments[0];
const c = [...document.querySelectorAll('.chart[data-tag]')];
return c.filter(e => (e.dataset.points || '').split(',').filter(Boolean).length === n).length;"""

# Charts on screen not drawn with every run yet.
ON_SCREEN_PENDING = """
const n = arguments[0];
return [...document.querySelectorAll('.chart[data-tag]')].filter(e => {
  const r = e.getBoundingClientRect();
  return r.bottom > 0 && r.top < window.innerHeight
    && (e.dataset.points || '').split(',').filter(Boolean).length !== n;
}).length;"""

FRAMES = """
const done = arguments[arguments.length - 1];
const mode = arguments[0];
const deltas = [];
let last = performance.now(), y = 0;
window.scrollTo(0, 0);
function tick(now) {
  deltas.push(now - last); last = now;
  if (mode === 'scroll') {
    y += 40; window.scrollTo(0, y);
    if (y > document.documentElement.scrollHeight) return done(deltas.slice(1));
  } else if (window.__stop) { return done(deltas.slice(1)); }
  requestAnimationFrame(tick);
}
requestAnimationFrame(t => { last = t; requestAnimationFrame(tick); });"""


def summary(deltas: list[float]) -> dict:
    s = sorted(deltas)
    return {"frames": len(s), "mean_ms": round(statistics.mean(s), 2),
            "p95_ms": round(s[int(0.95 * (len(s) - 1))], 2), "max_ms": round(s[-1], 1)}


def measure(tally_bin: str, logdir: Path, runs: int, tags: int) -> dict:
    from selenium.webdriver.common.action_chains import ActionChains

    proc, url = serve(tally_bin, logdir)
    d = browser()
    try:
        # Warm the server (the runs read and held) so the page's own cost is what is measured.
        d.get(url)
        deadline = time.monotonic() + 600
        while d.execute_script("return typeof state === 'undefined' || state.order.length") != runs:
            assert time.monotonic() < deadline
            time.sleep(0.5)
        d.execute_script("state.order.forEach(n => state.selected.add(n)); refreshCharts(new Set())")
        while d.execute_script(DRAWN, runs) < 1:
            assert time.monotonic() < deadline
            time.sleep(0.5)
        d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVE})
        # The measured load: every run selected from the start.
        sel = "\n".join(d.execute_script("return state.order"))
        from urllib.parse import quote

        d.get("about:blank")
        d.get(f"{url}#sel={quote(sel)}")
        first = None
        while True:
            n = d.execute_script("return typeof state !== 'undefined' && state.order.length")
            if n == runs:
                d.execute_script("state.order.forEach(n => state.selected.add(n)); refreshCharts(new Set())")
                break
            time.sleep(0.05)
        while first is None:
            if d.execute_script(DRAWN, runs) >= 1:
                first = d.execute_script("return performance.now()")
            else:
                time.sleep(0.05)
        # Scroll a screen at a time, as a reader would: the next screen once every chart on this
        # one is drawn, until every chart is.
        while d.execute_script(DRAWN, runs) < tags:
            assert time.monotonic() < deadline, d.execute_script(DRAWN, runs)
            while d.execute_script(ON_SCREEN_PENDING, runs) and time.monotonic() < deadline:
                time.sleep(0.05)
            d.execute_script("window.scrollBy(0, window.innerHeight)")
            if d.execute_script("return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight"):
                d.execute_script("window.scrollTo(0, 0)")
            time.sleep(0.05)
        every = d.execute_script("return performance.now()")
        long_tasks = d.execute_script("return window.__long")
        time.sleep(1)
        scroll = d.execute_async_script(FRAMES, "scroll")
        # The cursor across the first chart, frames recorded meanwhile.
        d.execute_script("window.scrollTo(0, 0)")
        time.sleep(0.5)
        target = d.execute_script(
            "const c = document.querySelector('.chart[data-tag]');"
            "return c.querySelector('.plot') || c.querySelector('canvas')")
        d.execute_script("window.__stop = false")
        d.set_script_timeout(120)
        d.execute_script(FRAMES.replace("const done = arguments[arguments.length - 1];",
                                        "const done = r => { window.__hover = r; };"), "hover")
        w = target.size["width"]
        chain = ActionChains(d)
        chain.move_to_element_with_offset(target, int(-w / 2 + 60), 0)
        for _ in range(40):
            chain.move_by_offset(int((w - 90) / 40), 0)
            chain.pause(0.03)
        chain.perform()
        d.execute_script("window.__stop = true")
        time.sleep(0.3)
        hover = d.execute_script("return window.__hover")
        d.execute_script("window.gc && window.gc()")
        time.sleep(0.5)
        heap = d.execute_script("return performance.memory.usedJSHeapSize")
        return {
            "first_chart_s": round(first / 1000, 2),
            "every_chart_s": round(every / 1000, 2),
            "long_tasks": len(long_tasks), "long_tasks_ms": round(sum(long_tasks)),
            "scroll": summary(scroll), "hover": summary(hover),
            "js_heap_mb": round(heap / 2**20, 1),
        }
    finally:
        d.quit()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", action="append", required=True)
    ap.add_argument("--dir")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--tags", type=int, default=50)
    ap.add_argument("--points", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="board_page_"))
    root.mkdir(parents=True, exist_ok=True)
    t = time.monotonic()
    write_logdir(root, args.runs, args.tags, args.points)
    print(f"logdir {root} ready in {time.monotonic() - t:.0f} s", flush=True)
    for tally_bin in args.tally:
        for i in range(args.repeat):
            print(json.dumps({"tally": tally_bin, "repeat": i,
                              **measure(tally_bin, root, args.runs, args.tags)}), flush=True)


if __name__ == "__main__":
    main()
