"""`tally board` in a real browser: Debian's Chromium, headless, driven through Selenium and
Debian's chromedriver (docs/contract/board.md). Nothing is downloaded: the page's assets come
from the board itself."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tally import SummaryWriter

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER) and os.environ.get("CI") != "true",
    reason="Debian's chromium and chromium-driver (.ci/run installs them)",
)

SPIKE_STEP = 612_345
POINTS = 1_000_000


def write_logdir(root: Path) -> None:
    # A long run with a one-step spike, written with tally's torch-style writer.
    w = SummaryWriter(str(root / "long"))
    for step in range(POINTS):
        w.add_scalar("loss/total", 1000.0 if step == SPIKE_STEP else (step % 10) / 10, step)
    w.close()
    # A run of tensorboardX, the writer many RL scripts use.
    from tensorboardX import SummaryWriter as TbxWriter

    t = TbxWriter(str(root / "tbx"))
    for step in range(50):
        t.add_scalar("loss/total", 0.5, step)
    t.close()
    # A run whose file is corrupt in its middle.
    bad = root / "broken"
    w = SummaryWriter(str(bad))
    for step in range(20):
        w.add_scalar("loss/total", 1.0, step)
    w.close()
    (f,) = list(bad.glob("events.out.tfevents.*"))
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))


def serve(tally_bin: Path, logdir: Path):
    """`tally board LOGDIR` on a free port: its URL, then SIGINT ends it with exit 0."""
    proc = subprocess.Popen(
        [str(tally_bin), "board", str(logdir), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    match = re.match(r"tally board: (http://\S+)", line)
    assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
    yield match.group(1)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == 0


@pytest.fixture()
def board(tally_bin: Path, tmp_path: Path):
    write_logdir(tmp_path)
    for url in serve(tally_bin, tmp_path):
        yield url, tmp_path


@pytest.fixture()
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def wait_for(driver, script: str, timeout: float = 30.0):
    """Polls `script` in the page until it returns something truthy; returns it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for: {script}\nthe page then: {driver.execute_script(PAGE_STATE)}")


def plot_position(driver, tag: str, x: float, y: float, run: str | None = None):
    """Where (x, y) of the chart of `tag` is, in CSS pixels from the chart's plot element, and
    the run's colour (as [r, g, b])."""
    return driver.execute_script("""
        const c = state.charts.get(arguments[0]);
        const L = c.plot._fullLayout, s = L._size;
        const rgb = h => [1, 3, 5].map(i => parseInt(h.slice(i, i + 2), 16));
        return [s.l + L.xaxis.l2p(arguments[1]), s.t + L.yaxis.l2p(arguments[2]),
                arguments[3] ? rgb(colorOf(arguments[3])) : null];""", tag, x, y, run)


def screenshot_of(driver, tag: str):
    """A screenshot of the chart of `tag`'s plot (a PIL image, CSS pixels scaled by the
    device pixel ratio) and that ratio."""
    import io

    from PIL import Image

    driver.execute_script(
        "state.charts.get(arguments[0]).el.scrollIntoView({block: 'center'})", tag)
    time.sleep(0.3)
    element = driver.execute_script("return state.charts.get(arguments[0]).plot", tag)
    image = Image.open(io.BytesIO(element.screenshot_as_png)).convert("RGB")
    return image, driver.execute_script("return window.devicePixelRatio || 1")


def color_near(driver, tag: str, x: float, y: float, want, box: int = 3, tolerance: int = 40) -> bool:
    """Whether a pixel within `box` CSS pixels of (x, y) in the chart's screenshot is `want`."""
    image, dpr = screenshot_of(driver, tag)
    for dx in range(-box, box + 1):
        for dy in range(-box, box + 1):
            px = (int((x + dx) * dpr), int((y + dy) * dpr))
            if not (0 <= px[0] < image.width and 0 <= px[1] < image.height):
                continue
            if all(abs(a - b) <= tolerance for a, b in zip(image.getpixel(px), want)):
                return True
    return False


# What a timed-out wait prints of the page, so a failure under CI's load can be read afterwards.
PAGE_STATE = """
    if (typeof state === 'undefined') return 'no board state';
    return JSON.stringify({
      status: document.getElementById('status').textContent,
      tableTags: state.tableTags, generation: state.generation, pending: state.pending,
      groupBy: state.groupBy, x: state.x, selected: [...state.selected],
      rows: [...state.runs.values()].map(r => Object.keys(r).filter(k => k.includes(':')).join(' ') || r.run),
      cells: document.querySelectorAll('#runs tbody tr[data-run]').length,
      now: new Date().toLocaleTimeString(),
    });"""


def test_the_page_lists_runs_draws_a_one_step_spike_and_follows_a_live_run(board, browser):
    url, logdir = board
    browser.get(url)

    # The runs table: every run, the corrupt one with the reader's message (file and offset).
    names = wait_for(browser, "return [...document.querySelectorAll('#runs tbody tr[data-run]')]"
                              ".map(r => r.dataset.run).join(',')")
    assert names.split(",") == ["broken", "long", "tbx"]
    message = browser.execute_script(
        "return document.querySelector('#runs tr.error td.message').textContent")
    assert "broken" in message and "byte" in message, message

    # The chart of loss/total overlays the two readable runs; every point of the long run is
    # behind it.
    totals = wait_for(browser, """
        const c = document.querySelector('.chart[data-tag="loss/total"]');
        return c && c.dataset.points && c.dataset.points.split(',').length === 2
            && c.dataset.points;""")
    assert sorted(int(t) for t in totals.split(",")) == [50, POINTS]

    # The spike is drawn at the default zoom: in a screenshot (what the user sees), the long
    # run's colour reaches the spike's height at the spike's x. Smoothing off (from the URL), so
    # the raw line is drawn in the run's full colour.
    browser.get(url + "#smoothing=0")
    wait_for(browser, """
        const c = state.charts.get('loss/total');
        return c && c.plotted && c.el.dataset.points && c.el.dataset.points.split(',').length === 2
            && c.plot._fullLayout && !c.drawing;""")
    assert browser.execute_script("return state.smoothing") == 0
    x, top, color = plot_position(browser, "loss/total", SPIKE_STEP, 1000, "long")
    assert color_near(browser, "loss/total", x, top + 3, color, box=4), \
        "the one-step spike is not drawn at the default zoom"

    # A bucket of one point (a sparse series) is drawn, and smoothed, as one point, not four:
    # smoothing over repeated copies would pull the line into stairs.
    once = browser.execute_script(
        "const p = () => [2048, 1.5, 20.75];"
        "return bucketPoints({first: p(), last: p(), min: p(), max: p(), count: 1, nonfinite: []}).length")
    assert once == 1

    # A live run: points appended to the tensorboardX run appear without reloading the page.
    from tensorboardX import SummaryWriter as TbxWriter

    browser.execute_script("""
        window.asked = [];
        const real = window.fetch;
        window.fetch = (url, ...rest) => { window.asked.push(String(url)); return real(url, ...rest); };""")
    t = TbxWriter(str(logdir / "tbx"))
    for step in range(50, 80):
        t.add_scalar("loss/total", 0.25, step)
    t.close()
    wait_for(browser, """
        const c = document.querySelector('.chart[data-tag="loss/total"]');
        return c.dataset.points.split(',').map(Number).includes(80);""")
    # Only what is new was asked for: the newest buckets from the last one drawn, at its span,
    # merged into what the chart held.
    asked = browser.execute_script(
        "return window.asked.filter(u => u.includes('/api/scalars') && u.includes('run=tbx'))")
    assert asked and all("span=" in u and "start=" in u for u in asked), asked
    merged = browser.execute_script("""
        const s = state.charts.get('loss/total').series.get('tbx');
        const b = s.buckets;
        return [b[0].first[0], b[b.length - 1].last[0], b.reduce((n, x) => n + x.count, 0), s.total];""")
    assert merged == [0, 79, 80, 80], merged


def test_runs_grouped_by_learning_rate_show_each_groups_band(tally_bin: Path, tmp_path: Path, browser):
    # 2 learning rates x 3 seeds: the seeds spread each group, so its band has a width.
    for lr, slope in (("0.1", 1.0), ("0.01", 2.0)):
        for seed in range(3):
            w = SummaryWriter(str(tmp_path / f"lr{lr}_s{seed}"), config={"lr": float(lr), "seed": seed})
            for step in range(0, 101):
                w.add_scalar("charts/return", slope * step + 30 * seed, step)
            w.close()
    for url in serve(tally_bin, tmp_path):
        browser.get(url)
        wait_for(browser, "return document.querySelector('.chart[data-tag=\"charts/return\"]')")
        # The table: configuration columns, a key=value filter, a sort, a tag's figures.
        rows = "return [...document.querySelectorAll('#runs tbody tr[data-run]')].map(r => r.dataset.run)"
        wait_for(browser, "return document.querySelector('#runs th[data-key$=\".lr\"]')")
        runs_filter = browser.find_element("id", "run-filter")
        runs_filter.send_keys("lr=0.01")
        assert sorted(browser.execute_script(rows)) == [f"lr0.01_s{s}" for s in range(3)]
        runs_filter.clear()
        browser.execute_script("arguments[0].dispatchEvent(new Event('input'))", runs_filter)
        browser.find_element("css selector", '#runs th[data-key$=".seed"]').click()
        seeds = browser.execute_script(
            "return [...document.querySelectorAll('#runs td[data-key$=\".seed\"]')].map(t => t.textContent)")
        assert seeds == ["0", "0", "1", "1", "2", "2"], seeds
        tags = browser.find_element("id", "table-tags")
        tags.send_keys("charts/return")
        browser.execute_script("arguments[0].dispatchEvent(new Event('change'))", tags)
        lasts = wait_for(browser, """
            const cells = [...document.querySelectorAll('#runs td[data-key="charts/return:last"]')];
            return cells.length === 6 && cells.map(t => Number(t.textContent));""")
        assert sorted(lasts) == sorted(slope * 100 + 30 * seed for slope in (1.0, 2.0) for seed in range(3))

        field = browser.find_element("id", "group-by")
        field.send_keys("config.lr")
        browser.execute_script("arguments[0].dispatchEvent(new Event('change'))", field)
        groups = wait_for(browser, """
            const c = state.charts.get('charts/return');
            return c.el.dataset.groups === '2' && c.groups;""")
        best = groups[0]
        assert best["key"] == {"config.lr": 0.01} and best["n"] == 3
        at = [p for p in best["curve"] if p["step"] == 50][0]
        assert at["mean"] == 130.0  # 100 + (0 + 30 + 60) / 3
        assert at["low"] < at["mean"] < at["high"]
        # The legend names each group, by its key's value and size.
        legend = wait_for(browser, """
            const t = [...state.charts.get('charts/return').el.querySelectorAll('.legendtext')]
                .map(e => e.textContent);
            return t.length === 2 && t;""")
        assert sorted(legend) == ["lr=0.01 (n=3)", "lr=0.1 (n=3)"], legend
        # The band is painted: in a screenshot, between the group's mean and its upper bound at
        # step 50, the group's colour shows through translucent (a fifth of it over white).
        wait_for(browser, "const c = state.charts.get('charts/return'); return c.plot._fullLayout && !c.drawing")
        x, y_high, color = plot_position(browser, "charts/return", 50, at["high"])
        _, y_mean, _ = plot_position(browser, "charts/return", 50, at["mean"])
        group_color = browser.execute_script(
            "const h = state.charts.get('charts/return').lines[0].color;"
            "return [1, 3, 5].map(i => parseInt(h.slice(i, i + 2), 16))")
        tinted = [round(0.2 * c + 0.8 * 255) for c in group_color]
        assert color_near(browser, "charts/return", x, (y_high + y_mean) / 2, tinted, box=2, tolerance=14), \
            "no band between the mean and the upper bound"
        # Group mode smooths as runs are (a smoothed line per group, smoothing being on by
        # default) and zooms: the zoom is kept when drawn again.
        smoothed = browser.execute_script(
            "return state.charts.get('charts/return').plot.data.filter(t => (t.hovertemplate || '').startsWith('smoothed')).length")
        assert smoothed == 2
        browser.execute_script(
            "Plotly.relayout(state.charts.get('charts/return').plot, {'xaxis.range': [20, 40]})")
        wait_for(browser, "return JSON.stringify(state.zooms['charts/return']) === '[20,40]'")
        browser.execute_script("redrawAll()")
        time.sleep(0.5)
        assert browser.execute_script(
            "return state.charts.get('charts/return').plot._fullLayout.xaxis.range") == [20, 40]

        # A key no run has: said beside the field (docs/contract/consumers.md "A run's
        # configuration"), not drawn as one group of nulls.
        field.clear()
        field.send_keys("config.nope")
        browser.execute_script("arguments[0].dispatchEvent(new Event('change'))", field)
        note = wait_for(browser, "const n = document.getElementById('group-note'); return !n.hidden && n.textContent;")
        assert 'no run has configuration key "config.nope"' in note, note


def test_a_group_drawn_as_its_iqm_leaves_an_outlier_seed_out(tally_bin: Path, tmp_path: Path, browser):
    # 4 seeds, one far off: the IQM cuts a run at each end (docs/contract/board.md "Runs grouped
    # over seeds"), so its line sits on the two middle seeds while the mean follows the outlier.
    for seed, offset in enumerate((0.0, 1.0, 2.0, 100.0)):
        w = SummaryWriter(str(tmp_path / f"s{seed}"), config={"lr": 0.1, "seed": seed})
        for step in range(0, 101):
            w.add_scalar("charts/return", step + offset, step)
        w.close()
    line_at_50 = """
        const c = state.charts.get('charts/return');
        if (!c || !c.plotted || c.el.dataset.groups !== '1') return null;
        const p = c.lines[0].pts.find(p => p[0] === 50);
        return p && [p[1], c.lines[0].band.find(b => b.step === 50)];"""
    for url in serve(tally_bin, tmp_path):
        browser.get(url)
        wait_for(browser, "return document.querySelector('.chart[data-tag=\"charts/return\"]')")
        field = browser.find_element("id", "group-by")
        field.send_keys("config.lr")
        browser.execute_script("arguments[0].dispatchEvent(new Event('change'))", field)
        mean, band = wait_for(browser, line_at_50)
        assert mean == 50 + (0 + 1 + 2 + 100) / 4
        stat = browser.find_element("id", "group-stat")
        browser.execute_script("arguments[0].value = 'iqm'; arguments[0].dispatchEvent(new Event('change'))", stat)
        # Redrawn from the groups already fetched: wait for the line to move off the mean.
        iqm, band = wait_for(browser, line_at_50.replace("return p &&", f"return p && p[1] !== {mean} &&"))
        assert iqm == 50 + (1 + 2) / 2
        # The band drawn is the IQM's own, not the mean's.
        point = browser.execute_script(
            "return state.charts.get('charts/return').groups[0].curve.find(p => p.step === 50)")
        assert (band["low"], band["high"]) == (point["iqm_low"], point["iqm_high"])
        assert (band["low"], band["high"]) != (point["low"], point["high"])


def test_table_tags_typed_while_a_poll_is_in_flight_still_fill_the_table(tally_bin: Path, tmp_path: Path, browser):
    # The poll that left before the tags were typed answers after: its generation must not
    # stand for rows that carry the new tags' figures (the next poll would then ask for
    # nothing and the figures never come).
    for seed in range(2):
        w = SummaryWriter(str(tmp_path / f"s{seed}"))
        for step in range(10):
            w.add_scalar("charts/return", step + 100 * seed, step)
        w.close()
    for url in serve(tally_bin, tmp_path):
        browser.get(url)
        wait_for(browser, "return document.querySelectorAll('#runs tbody tr[data-run]').length === 2")
        # Hold the next tag-less runs poll until released.
        browser.execute_script("""
            const real = window.fetch;
            window.held = null;
            window.fetch = (url, ...rest) => {
                if (String(url).includes('/api/runs') && !String(url).includes('tags=') && !window.held) {
                    return new Promise(resolve => {
                        window.held = () => resolve(real(url, ...rest));
                    });
                }
                return real(url, ...rest);
            };""")
        wait_for(browser, "return window.held !== null")
        tags = browser.find_element("id", "table-tags")
        tags.send_keys("charts/return")
        browser.execute_script("arguments[0].dispatchEvent(new Event('change'))", tags)
        browser.execute_script("window.held()")
        lasts = wait_for(browser, """
            const cells = [...document.querySelectorAll('#runs td[data-key="charts/return:last"]')];
            return cells.length === 2 && cells.map(t => Number(t.textContent));""", timeout=10)
        assert sorted(lasts) == [9.0, 109.0]


def test_a_runs_own_views_show_its_bottleneck_timelines_text_image_and_histogram(
    tally_bin: Path, tmp_path: Path, browser
):
    import json

    import numpy as np
    from tensorboardX import SummaryWriter as TbxWriter

    # A learner-bound tally demo run: its summary, bottleneck and timelines.
    demo = subprocess.run(
        [str(tally_bin), "demo", "--panel", "off", "--iterations", "120", "--slow", "learning=6",
         f"training.log_root={tmp_path / 'demo'}"],
        capture_output=True, text=True, check=True)
    run_dir = demo.stdout.strip().splitlines()[-1].removeprefix("run: ")
    diagnosis = json.loads(subprocess.run([str(tally_bin), "diagnose", "--json", run_dir],
                                          capture_output=True, text=True, check=True).stdout)
    # A tensorboardX run with text (CleanRL's hyperparameter table), an image and a histogram.
    t = TbxWriter(str(tmp_path / "tbx"))
    t.add_text("hyperparameters", "|param|value|\n|-|-|\n|learning_rate|0.00025|", 0)
    image = np.zeros((3, 8, 16), dtype=np.uint8)
    image[0] = 255
    t.add_image("frame", image, 5)
    t.add_histogram("weights", np.arange(100.0), 7)
    t.add_scalar("loss", 1.0, 0)
    t.add_scalar("loss", float("nan"), 1)
    t.close()

    for url in serve(tally_bin, tmp_path):
        browser.get(url)
        wait_for(browser, "return document.querySelector('#runs tr[data-run=\"tbx\"] td.name')").click()
        wait_for(browser, "return document.querySelector('#run-view[data-run=\"tbx\"]')")
        # The Markdown table is drawn as a table, as TensorBoard's Text tab draws it.
        cells = browser.execute_script(
            "return [...document.querySelectorAll('#run-view .text table.md tr')]"
            ".map(r => [...r.children].map(c => c.textContent))")
        assert cells == [["param", "value"], ["learning_rate", "0.00025"]], cells
        width = wait_for(browser, "const i = document.querySelector('#run-view .images img');"
                                  "return i && i.complete && i.naturalWidth")
        assert width == 16
        captions = browser.execute_script(
            "return [...document.querySelectorAll('#run-view figcaption')].map(f => f.textContent)")
        assert captions == ["frame · step 5", "weights · step 7"], captions
        buckets = browser.execute_script(
            "return Number(document.querySelector('#run-view .histograms canvas').dataset.buckets)")
        assert buckets > 1
        # The health rules: the NaN logged at step 1 is a finding (docs/contract/health.md).
        health = browser.execute_script(
            "return [...document.querySelectorAll('#run-view .health .finding')].map(f => f.textContent)")
        assert len(health) == 1 and health[0].startswith("nonfinite loss") and "steps 1–1" in health[0], health
        # The runs table says so too, in its health column (docs/contract/consumers.md "The runs table").
        column = browser.execute_script(
            "return [...document.querySelectorAll('#runs tbody tr[data-run]')]"
            ".map(r => [r.dataset.run, r.querySelector('td[data-key=findings]')?.textContent])")
        assert ["tbx", "nonfinite loss@1"] in column, column

        demo_name = browser.execute_script(
            "return [...document.querySelectorAll('#runs tr[data-run]')].map(r => r.dataset.run)"
            ".find(n => n.startsWith('demo'))")
        browser.execute_script(f"document.querySelector('#runs tr[data-run=\"{demo_name}\"] td.name').click()")
        bands = wait_for(browser, "const c = document.querySelector('#run-view .timelines canvas');"
                                  "return c && c.dataset.bands")
        assert "Learning" in bands.split(","), bands
        symptoms = browser.execute_script(
            "return [...document.querySelectorAll('#run-view .bottleneck .finding strong')].map(s => s.textContent)")
        assert symptoms == [f["symptom"] for f in diagnosis["findings"]] and symptoms, symptoms
        # A learner-bound run is slow, not unhealthy: no health rule fires on it.
        assert browser.execute_script(
            "return document.querySelector('#run-view .health .healthy')?.textContent") == "no health rule fired"
        assert [demo_name, "ok"] in column, column
