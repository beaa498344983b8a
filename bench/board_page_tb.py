"""tally board's page against TensorBoard's own Scalars dashboard in headless Chromium, on the
same logdir (BENCHMARKS.md "Issue 40: rows after the server and page changed"): 20 runs x 50
tags x 50 000 steps by default, every run selected and every section open on both pages.

Both pages are driven the same way, through the DevTools protocol (real input events, so each
page scrolls whatever element it scrolls), and measured with the browser's Performance API:

1. every chart drawn with its runs, the page scrolled a screen at a time as a reader would (the
   next screen once the charts on this one are drawn), and settled (no long task for 2 s);
2. long tasks (main thread > 50 ms) from navigation until then: count and sum;
3. frame time (requestAnimationFrame deltas) while the page is scrolled 6 000 px by a wheel
   gesture (`Input.synthesizeScrollGesture`), and again over the gesture and the 3 s after it
   (tally's page draws the charts that came into view once scrolling stops);
4. frame time while the cursor crosses the first chart (60 mouse moves, 25 ms apart);
5. frame time while a zoom box is dragged on that chart and for 3 s after (the zoomed drawing);
6. the JS heap after a forced GC (`performance.memory.usedJSHeapSize`).

TensorBoard runs as users run it (`--load_fast=true`, its default 1 000 samples a series: its
page is sent 1 000 points a run and tag, tally's page about 4 a pixel), and is measured once its
data server has read every run.

Usage: .venv/bin/python bench/board_page_tb.py --tally PATH [--dir DIR] [--repeat 2] [--quick]
`--tally` is `tally` or the board example (`target/release/examples/board`); `--quick` is 8 tags
and one run each (about 3 minutes), for a check that the script still works.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).parent))
from board import free_port  # noqa: E402
from board_page import browser, serve, summary, write_logdir  # noqa: E402

# Installed before each page's scripts: long tasks from navigation on, and a frame recorder.
OBSERVE = """
window.__long = [];
new PerformanceObserver(l => { for (const e of l.getEntries()) window.__long.push([e.startTime, e.duration]); })
  .observe({ type: 'longtask', buffered: true });
window.__rec = null;
window.__startRec = () => {
  const d = []; let last = null; window.__rec = d;
  const tick = now => { if (last !== null) d.push(now - last); last = now; if (window.__rec === d) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
};
window.__stopRec = () => { const d = window.__rec; window.__rec = null; return d; };
window.__deepAll = (sel, root = document, out = []) => {
  for (const e of root.querySelectorAll('*')) {
    if (e.matches(sel)) out.push(e);
    if (e.shadowRoot) window.__deepAll(sel, e.shadowRoot, out);
  }
  return out;
};
"""

# Per page: its charts as [top, bottom, drawn with every run], the first chart's plot area,
# scrolling back to the top, and how far it is scrolled.
PAGES = {
    "tally": {
        "charts": """
const n = arguments[0];
return [...document.querySelectorAll('.chart[data-tag]')].map(e => {
  const r = e.getBoundingClientRect();
  return [r.top, r.bottom, (e.dataset.points || '').split(',').filter(Boolean).length === n];
});""",
        "plot": "const r = document.querySelector('.chart[data-tag] .plot').getBoundingClientRect();"
                "return [r.left + 70, r.top + 20, r.right - 20, r.bottom - 40];",
        "top": "window.scrollTo(0, 0)",
        "scrolled": "return window.scrollY",
    },
    "tensorboard": {
        # A chart is drawn once its runs' lines have their paths (raw and smoothed per run).
        "charts": """
const n = arguments[0];
for (const c of window.__deepAll('tf-category-paginated-view')) if (!c.opened) c.opened = true;
return window.__deepAll('vz-line-chart2').map(e => {
  const r = e.getBoundingClientRect();
  const lines = window.__deepAll('path.line', e.shadowRoot || e).filter(p => (p.getAttribute('d') || '').length > 100);
  return [r.top, r.bottom, r.height > 0 && lines.length >= n];
});""",
        "plot": "const r = window.__deepAll('vz-line-chart2')[0].getBoundingClientRect();"
                "return [r.left + 80, r.top + 20, r.right - 20, r.bottom - 30];",
        "top": "for (const e of window.__deepAll('div.center')) e.scrollTop = 0",
        "scrolled": "return Math.max(...window.__deepAll('div.center').map(e => e.scrollTop))",
    },
}


def get_json(url: str):
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return json.loads(r.read())
    except (OSError, ValueError):
        return None


def start_tensorboard(logdir: Path, runs: list[str], last_tag: str, points: int):
    port = free_port()
    exe = str(Path(sys.executable).with_name("tensorboard"))
    proc = subprocess.Popen([exe, "--logdir", str(logdir), "--port", str(port), "--host", "127.0.0.1",
                             "--load_fast=true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 1200
    # Read whole: every run's last step of the last tag written is served.
    while True:
        assert time.monotonic() < deadline, "TensorBoard never read every run"
        done = 0
        for r in runs:
            body = get_json(f"{url}/data/plugin/scalars/scalars?run={r}&tag={quote(last_tag)}")
            done += bool(body) and body[-1][1] == points - 1
        if done == len(runs):
            return proc, f"{url}/#scalars"
        time.sleep(1)


def start_tally(exe: str, runs: list[str]):
    proc, url = serve(exe, Path(ARGS.dir))
    url = url.rstrip("/")
    deadline = time.monotonic() + 1200
    # Read whole: every run listed and read, so the page's own cost is what is measured.
    while True:
        assert time.monotonic() < deadline, "the board never read every run"
        body = get_json(f"{url}/api/runs")
        if body and len(body["names"]) == len(runs) and body.get("pending") == 0:
            return proc, f"{url}/#sel={quote(chr(10).join(runs))}"
        time.sleep(0.5)


def measure(page: str, d, url: str, runs: int, tags: int) -> dict:
    js = PAGES[page]
    cdp = d.execute_cdp_cmd
    cdp("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVE})
    d.get(url)
    deadline = time.monotonic() + 600

    def charts():
        return d.execute_script(js["charts"], runs)

    def wheel(dy: float) -> None:
        cdp("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": 900, "y": 600, "deltaX": 0, "deltaY": dy})

    # A reader: the next screen once every chart on this one is drawn, until every chart is.
    first = None
    while True:
        c = charts()
        drawn = sum(1 for _, _, ok in c if ok)
        if drawn and first is None:
            first = d.execute_script("return performance.now()")
        if len(c) == tags and drawn == tags:
            break
        assert time.monotonic() < deadline, f"{page}: {drawn} of {tags} charts drawn"
        h = d.execute_script("return window.innerHeight")
        if c and all(ok for top, bottom, ok in c if bottom > 0 and top < h):
            wheel(h * 0.8)
            if c[-1][1] < h:  # at the bottom with charts not drawn yet (drawn away): back up
                d.execute_script(js["top"])
        time.sleep(0.1)
    every = d.execute_script("return performance.now()")
    # Settled: no long task for 2 s.
    while True:
        time.sleep(2)
        lt = d.execute_script("return window.__long")
        now = d.execute_script("return performance.now()")
        if not lt or now - (lt[-1][0] + lt[-1][1]) >= 2000:
            break
        assert time.monotonic() < deadline
    settled = max([every] + [s + du for s, du in lt])
    d.execute_script(js["top"])
    time.sleep(3)

    def frames(action) -> dict:
        d.execute_script("window.__startRec()")
        action()
        return summary(d.execute_script("return window.__stopRec()"))

    def wheel_down() -> None:
        cdp("Input.synthesizeScrollGesture", {
            "x": 900, "y": 600, "yDistance": -6000, "speed": 2000, "gestureSourceType": "mouse"})
        scrolled.append(d.execute_script(js["scrolled"]))  # the gesture did scroll the page

    # The gesture alone, then with the 3 s after it (a page may draw what came into view then).
    scrolled: list = []
    scroll = frames(wheel_down)
    d.execute_script(js["top"])
    time.sleep(3)

    def wheel_down_and_wait() -> None:
        wheel_down()
        time.sleep(3)

    scroll_after = frames(wheel_down_and_wait)
    scroll["scrolled_px"] = scrolled[0]
    d.execute_script(js["top"])
    time.sleep(3)
    x0, y0, x1, y1 = d.execute_script(js["plot"])
    ym = (y0 + y1) / 2

    def move(x: float, y: float, kind: str = "mouseMoved", button: str = "none") -> None:
        cdp("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": button,
                                         "buttons": 1 if button == "left" and kind == "mouseMoved" else 0,
                                         "clickCount": 1 if kind != "mouseMoved" else 0})

    def cross() -> None:
        for i in range(61):
            move(x0 + (x1 - x0) * i / 60, ym)
            time.sleep(0.025)

    hover = frames(cross)

    def drag() -> None:
        xa, xb = x0 + (x1 - x0) * 0.35, x0 + (x1 - x0) * 0.65
        move(xa, y0 + 10)
        move(xa, y0 + 10, "mousePressed", "left")
        for i in range(1, 16):
            move(xa + (xb - xa) * i / 15, y0 + 10 + (y1 - y0 - 20) * i / 15, "mouseMoved", "left")
            time.sleep(0.03)
        move(xb, y1 - 10, "mouseReleased", "left")
        time.sleep(3)

    zoom = frames(drag)
    d.execute_script("window.gc && window.gc()")
    time.sleep(0.5)
    heap = d.execute_script("return performance.memory.usedJSHeapSize")
    until = [x for x in lt if x[0] <= settled]
    assert first is not None
    return {
        "first_chart_s": round(first / 1000, 2), "every_chart_s": round(every / 1000, 2),
        "settled_s": round(settled / 1000, 2),
        "long_tasks": len(until), "long_tasks_ms": round(sum(du for _, du in until)),
        "scroll": scroll, "scroll_after": scroll_after, "hover": hover, "zoom": zoom, "js_heap_mb": round(heap / 2**20, 1),
    }


def run_once(page: str, runs: list[str], tags: int, points: int, last_tag: str) -> dict:
    if page == "tally":
        proc, url = start_tally(ARGS.tally, runs)
    else:
        proc, url = start_tensorboard(Path(ARGS.dir), runs, last_tag, points)
    d = browser()
    try:
        return measure(page, d, url, len(runs), tags)
    finally:
        d.quit()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def table(results: dict) -> None:
    """Medians per page, and TensorBoard's over tally's (above 1: tally's page costs less)."""
    def med(page: str, key: str, sub: str | None = None) -> float:
        return statistics.median(r[key][sub] if sub else r[key] for r in results[page])

    rows: list[tuple[str, str, str | None]] = [
        ("first chart drawn with its runs (s)", "first_chart_s", None),
        ("every chart drawn, settled (s)", "settled_s", None),
        ("long tasks until then (count)", "long_tasks", None),
        ("long tasks until then (ms)", "long_tasks_ms", None)]
    for phase in ("scroll", "scroll_after", "hover", "zoom"):
        rows += [(f"{phase}: frame mean (ms)", phase, "mean_ms"), (f"{phase}: frame p95 (ms)", phase, "p95_ms"),
                 (f"{phase}: frame max (ms)", phase, "max_ms"), (f"{phase}: frames", phase, "frames")]
    rows.append(("JS heap after GC (MB)", "js_heap_mb", None))
    print("| | tally | TensorBoard | TensorBoard / tally |\n|---|---|---|---|")
    for name, key, sub in rows:
        a, b = med("tally", key, sub), med("tensorboard", key, sub)
        print(f"| {name} | {a:g} | {b:g} | {b / a:.2f} |" if a else f"| {name} | {a:g} | {b:g} | |")


def main() -> None:
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--dir")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--tags", type=int, default=50)
    ap.add_argument("--points", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="8 tags, one run each")
    ARGS = ap.parse_args()
    if ARGS.quick:
        ARGS.tags, ARGS.repeat = 8, 1
    assert shutil.which("chromium") and shutil.which("chromedriver"), "needs chromium and chromedriver"
    root = Path(ARGS.dir) if ARGS.dir else Path(tempfile.mkdtemp(prefix="board_page_tb_"))
    ARGS.dir = str(root)
    root.mkdir(parents=True, exist_ok=True)
    write_logdir(root, ARGS.runs, ARGS.tags, ARGS.points)
    runs = [f"run{r:02d}" for r in range(ARGS.runs)]
    last_tag = f"section{(ARGS.tags - 1) % 5}/tag{ARGS.tags - 1:02d}"
    results: dict = {"tally": [], "tensorboard": []}
    for i in range(ARGS.repeat):
        for page in ("tally", "tensorboard"):
            r = run_once(page, runs, ARGS.tags, ARGS.points, last_tag)
            results[page].append(r)
            print(json.dumps({"page": page, "repeat": i, **r}), flush=True)
    table(results)


ARGS: argparse.Namespace

if __name__ == "__main__":
    main()
