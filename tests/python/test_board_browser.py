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

    # The runs table: every run, the corrupt one with its damage named (file and offset).
    names = wait_for(browser, "return [...document.querySelectorAll('#runs tbody tr[data-run]')]"
                              ".map(r => r.dataset.run).join(',')")
    assert names.split(",") == ["broken", "long", "tbx"]
    message = browser.execute_script(
        "return document.querySelector('#runs tr.error td.message').textContent")
    assert "broken" in message and "byte" in message, message

    # The chart of loss/total overlays the three runs, the corrupt one's points before its
    # damage among them (board.md "The runs table"); every point of the long run is behind it.
    totals = wait_for(browser, """
        const c = document.querySelector('.chart[data-tag="loss/total"]');
        return c && c.dataset.points && c.dataset.points.split(',').length === 3
            && c.dataset.points;""")
    broken, tbx, long = sorted(int(t) for t in totals.split(","))
    assert (tbx, long) == (50, POINTS) and 0 < broken < 20, totals

    # The spike is drawn at the default zoom: in a screenshot (what the user sees), the long
    # run's colour reaches the spike's height at the spike's x. Smoothing off (from the URL), so
    # the raw line is drawn in the run's full colour.
    browser.get(url + "#smoothing=0")
    wait_for(browser, """
        const c = state.charts.get('loss/total');
        return c && c.plotted && c.el.dataset.points && c.el.dataset.points.split(',').length === 3
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
        wait_for(browser, "const c = state.charts.get('charts/return'); return !!c.plot._fullLayout && !c.drawing")
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
            "return state.charts.get('charts/return').plot.data.filter(t => t.meta === 'smoothed').length")
        assert smoothed == 2
        # The cursor over a group chart reads out each group's smoothed line, its mean, n and
        # band at that step.
        text = hover_readout(browser, "charts/return", 50)
        assert "lr=0.01 (n=3)" in text and "lr=0.1 (n=3)" in text, text
        assert text.count("smoothed") == 2 and "(mean 130, n=3, 95%: " in text, text
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


def write_sweep(root: Path) -> None:
    """Three runs (a_0, a_1, b_0) of a tag in a section, a system tag and a tag of no section;
    b_0 has a NaN and a +inf."""
    for name, slope in (("a_0", 1.0), ("a_1", 2.0), ("b_0", 3.0)):
        w = SummaryWriter(str(root / name), config={"lr": slope / 10, "seed": 0})
        for step in range(100):
            value = slope * step
            if name == "b_0" and step == 40:
                value = float("nan")
            if name == "b_0" and step == 70:
                value = float("inf")
            w.add_scalar("loss/x", value, step)
            w.add_scalar("system/gpu", 50 + slope, step)
            w.add_scalar("plain", step, step)
        w.close()


def drawn(driver, tag: str):
    """The runs the chart of `tag` draws (its traces' names, the marks left out) once drawn."""
    return driver.execute_script("""
        const c = state.charts.get(arguments[0]);
        if (!c || !c.plotted || c.drawing || !c.plot.data) return null;
        return [...new Set(c.plot.data.filter(t => t.yaxis !== 'y2').map(t => t.name))];""", tag)


def hover_readout(driver, tag: str, step: float) -> str:
    """Moves the pointer over step `step` of the chart of `tag`, halfway up its plot area, and
    returns the readout the page then shows (its rows, one a line)."""
    from selenium.webdriver.common.action_chains import ActionChains

    wait_for(driver, "const c = state.charts.get(arguments[0]); return !!c.plot._fullLayout && !c.drawing"
             .replace("arguments[0]", repr(tag)))
    plot = driver.execute_script("return state.charts.get(arguments[0]).plot", tag)
    size = driver.execute_script("return state.charts.get(arguments[0]).plot._fullLayout._size", tag)
    # Four tenths of a step right of it (Selenium's offsets are whole pixels from the element's
    # centre), so the step's own point is the last at or before the pointer.
    x, _, _ = plot_position(driver, tag, step + 0.4, 1)
    ActionChains(driver).move_to_element_with_offset(
        plot, round(x - plot.size["width"] / 2), int(size["t"] + size["h"] / 2 - plot.size["height"] / 2)
    ).perform()
    return wait_for(driver, f"""
        const c = state.charts.get({tag!r});
        return !c.readout.hidden && c.readout.innerText.startsWith('step {round(step)}') && c.readout.innerText;""",
                    timeout=10)


def test_legend_readout_synced_cursor_sections_and_marks(tally_bin: Path, tmp_path: Path, browser):
    from selenium.webdriver.common.action_chains import ActionChains

    write_sweep(tmp_path)
    for url in serve(tally_bin, tmp_path):
        browser.get(url)
        wait_for(browser, "const d = state.charts.get('loss/x'); return d && d.el.dataset.runs === 'a_0\\na_1\\nb_0'")
        # Sections by the tags' first path segment.
        sections = wait_for(browser, "const s = [...document.querySelectorAll('#charts details')]"
                                     ".map(d => d.dataset.group); return s.length === 3 && s")
        assert sections == ["(no prefix)", "loss", "system"], sections
        # A legend entry per run, in the run's colour.
        legend = wait_for(browser, """
            const t = [...state.charts.get('loss/x').el.querySelectorAll('.legendtext')].map(e => e.textContent);
            return t.length === 3 && t;""")
        assert legend == ["a_0", "a_1", "b_0"], legend
        # The NaN and the +inf are marked on the chart (an × at the top, a triangle), not dropped.
        marks = browser.execute_script("""
            const t = state.charts.get('loss/x').plot.data.find(t => t.yaxis === 'y2');
            return t && [t.x, t.marker.symbol, t.text];""")
        assert marks[0] == [40, 70] and marks[1] == ["x-thin-open", "triangle-up"], marks
        assert all(t.startswith("b_0:") for t in marks[2]), marks
        wait_for(browser, "const c = state.charts.get('loss/x'); return !!c.plot._fullLayout && !c.drawing")
        x, _, _ = plot_position(browser, "loss/x", 40, 0)
        top = browser.execute_script(
            "const L = state.charts.get('loss/x').plot._fullLayout; return L._size.t + 0.03 * L._size.h")
        assert color_near(browser, "loss/x", x, top, [208, 0, 0], box=5, tolerance=60), "no NaN mark at step 40"

        # The cursor over one chart reads out every run at its step, smoothed and raw (the
        # page's own readout: plotly's hover is off), and names b_0's NaN at step 40.
        browser.execute_script(
            "document.querySelector('#charts details[data-group=\"loss\"]').scrollIntoView()")
        time.sleep(0.3)
        assert browser.execute_script("return state.charts.get('loss/x').plot._fullLayout.hovermode") is False
        readout = hover_readout(browser, "loss/x", 50)
        assert readout.startswith("step 50"), readout
        for run in ("a_0", "a_1", "b_0"):
            assert run in readout, readout
        assert readout.count("raw") == 3, readout
        # a_1 is 2 x step: raw 100 at step 50, its smoothed value below it (it rises).
        row = [r for r in readout.split("\n") if r.startswith("a_1")][0]
        smoothed, raw = re.match(r"a_1 (\S+) \(raw (\S+)\)", row).groups()
        assert float(raw) == 100 and 80 < float(smoothed) < 100, row
        assert "NaN" not in readout
        assert "b_0: NaN at step 40" in hover_readout(browser, "loss/x", 40)
        # Synced: the other charts in view show their cursor and readout at the same step
        # (system/gpu's in full below loss/x's).
        other = wait_for(browser, """
            const c = state.charts.get('system/gpu');
            return !c.readout.hidden && !c.cursorLine.hidden && c.readout.innerText;""", timeout=10)
        assert other.startswith("step 40") and all(run in other for run in ("a_0", "a_1", "b_0")), other
        # At the chart's right edge the readout flips to the cursor's left: inside the window.
        browser.execute_script("state.charts.get('loss/x').el.querySelector('button.widen').click()")
        wait_for(browser, "const c = state.charts.get('loss/x'); return c.plot._fullLayout.width > 900 && !c.drawing")
        hover_readout(browser, "loss/x", 98)
        box = browser.execute_script("""
            const c = state.charts.get('loss/x'), r = c.readout.getBoundingClientRect();
            return [r.left, r.right, r.top, r.bottom, window.innerWidth, window.innerHeight,
                    c.cursorLine.getBoundingClientRect().left];""")
        assert 0 <= box[0] < box[1] <= box[4] and 0 <= box[2] < box[3] <= box[5], box
        assert box[1] < box[6] and box[6] + box[1] - box[0] > box[4], box  # no room on its right
        # Off the chart: hidden, here and on the others.
        ActionChains(browser).move_to_element(browser.find_element("id", "status")).perform()
        wait_for(browser, "return state.charts.get('loss/x').readout.hidden && state.charts.get('system/gpu').readout.hidden"
                          " && state.charts.get('loss/x').cursorLine.hidden", timeout=10)
        browser.execute_script("state.charts.get('loss/x').el.querySelector('button.widen').click()")
        wait_for(browser, "return !location.hash.includes('wide=')")

        # The full-width view: the chart spans the page and plotly draws it that wide; the
        # choice is in the URL.
        before = browser.execute_script("return state.charts.get('loss/x').plot._fullLayout.width")
        browser.execute_script("state.charts.get('loss/x').el.querySelector('button.widen').click()")
        after = wait_for(browser, """
            const w = state.charts.get('loss/x').plot._fullLayout.width;
            return w > 1.5 * arguments[0] && w;""".replace("arguments[0]", str(before)), timeout=10)
        grid = browser.execute_script(
            "return state.charts.get('loss/x').el.parentElement.getBoundingClientRect().width")
        assert after > grid - 40, (before, after, grid)
        wait_for(browser, "return location.hash.includes('wide=loss%2Fx')")


def test_regex_filter_selection_colours_and_the_url_survive_a_reload(tally_bin: Path, tmp_path: Path, browser):
    write_sweep(tmp_path)
    for url in serve(tally_bin, tmp_path):
        browser.get(url)
        wait_for(browser, "return JSON.stringify(drawn_runs('loss/x')) === '[\"a_0\",\"a_1\",\"b_0\"]'"
                 .replace("drawn_runs('loss/x')", "(state.charts.get('loss/x')?.el.dataset.runs || '').split('\\n')"))
        # A regular expression on run names restricts the charts, not only the table.
        box = browser.find_element("id", "run-filter")
        box.send_keys("^a_")
        wait_for(browser, "return state.charts.get('loss/x').el.dataset.runs === 'a_0\\na_1'")
        assert drawn(browser, "loss/x") == ["a_0", "a_1"]
        legend = browser.execute_script(
            "return [...state.charts.get('loss/x').el.querySelectorAll('.legendtext')].map(e => e.textContent)")
        assert legend == ["a_0", "a_1"], legend
        rows = browser.execute_script("return [...document.querySelectorAll('#runs tbody tr[data-run]')].map(r => r.dataset.run)")
        assert rows == ["a_0", "a_1"]
        # Selection: none, then exactly the runs the filter lists, then a_1 left out by hand.
        browser.find_element("id", "select-none").click()
        wait_for(browser, "return !document.querySelector('#charts .chart')")
        browser.find_element("id", "select-matching").click()
        wait_for(browser, "return state.charts.get('loss/x')?.el.dataset.runs === 'a_0\\na_1'")
        assert browser.execute_script("return [...state.selected].sort()") == ["a_0", "a_1"]
        browser.find_element("css selector", '#runs tr[data-run="a_1"] input[type=checkbox]').click()
        wait_for(browser, "return state.charts.get('loss/x').el.dataset.runs === 'a_0'")
        # a_0's colour changed by the user.
        browser.execute_script("""
            const s = document.querySelector('#runs tr[data-run="a_0"] input.swatch');
            s.value = '#ff00ff'; s.dispatchEvent(new Event('change'));""")
        wait_for(browser, "return state.charts.get('loss/x').plot.data[0].line.color === '#ff00ff'")
        # Smoothing, log y, a tag filter and a zoom.
        browser.execute_script("""
            const s = document.getElementById('smoothing');
            s.value = '0.3'; s.dispatchEvent(new Event('input'));
            const l = document.getElementById('log-y');
            l.checked = true; l.dispatchEvent(new Event('change'));""")
        tags = browser.find_element("id", "tag-filter")
        tags.send_keys("loss|plain")
        wait_for(browser, "return !state.charts.has('system/gpu')")
        wait_for(browser, "const c = state.charts.get('loss/x'); return c.plotted && !c.drawing")
        browser.execute_script("Plotly.relayout(state.charts.get('loss/x').plot, {'xaxis.range': [10, 60]})")
        wait_for(browser, "return JSON.stringify(state.zooms['loss/x']) === '[10,60]' && location.hash.includes('zoom')")

        browser.refresh()
        wait_for(browser, "const c = state.charts.get('loss/x'); return c && c.plotted && !c.drawing && c.series.size === 1")
        assert browser.find_element("id", "run-filter").get_attribute("value") == "^a_"
        assert browser.find_element("id", "tag-filter").get_attribute("value") == "loss|plain"
        assert browser.find_element("id", "smoothing").get_attribute("value") == "0.3"
        assert browser.find_element("id", "log-y").is_selected()
        assert browser.execute_script("return [...state.selected]") == ["a_0"]
        assert not browser.execute_script("return state.charts.has('system/gpu')")
        layout = browser.execute_script(
            "const L = state.charts.get('loss/x').plot._fullLayout; return [L.xaxis.range, L.yaxis.type]")
        assert layout == [[10, 60], "log"], layout
        # The zoom was asked of the server: the window's points, not the whole series.
        window = browser.execute_script("const s = state.charts.get('loss/x').series.get('a_0'); return [s.start, s.end, s.points]")
        assert window[:2] == [10, 60] and window[2] == 51, window
        assert browser.execute_script("return state.charts.get('loss/x').plot.data[0].line.color") == "#ff00ff"
        # The smoothing asked of the server is the one restored.
        asked = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name).filter(u => u.includes('/api/scalars'))")
        assert asked and all("smoothing=0.3" in u for u in asked), asked


def test_the_smoothed_line_is_the_servers_when_it_sends_one(tally_bin: Path, tmp_path: Path, browser):
    write_sweep(tmp_path)
    for url in serve(tally_bin, tmp_path):
        # Every bucket answered with a `smoothed` of 42 (what the server's EMA over every raw
        # point sends): the smoothed line is drawn from it, not smoothed again here.
        browser.get(url + "#tags=loss&sel=a_0")
        browser.execute_script("""
            const real = window.fetch;
            window.fetch = async (url, ...rest) => {
                const res = await real(url, ...rest);
                if (!String(url).includes('/api/scalars')) return res;
                const body = await res.json();
                for (const b of body.buckets) b.smoothed = 42;
                return new Response(JSON.stringify(body), { status: res.status });
            };
            refetchAll();""")
        ys = wait_for(browser, """
            const c = state.charts.get('loss/x');
            const t = c && c.plotted && c.plot.data.find(t => t.meta === "smoothed");
            return t && t.y.length && t.y.every(v => v === 42) && t.y;""")
        assert set(ys) == {42}
        # The server's own, unaltered: TensorBoard's average at each bucket's last point.
        browser.get(url + "#tags=loss&sel=a_0&smoothing=0.5")
        ys = wait_for(browser, """
            const c = state.charts.get('loss/x');
            const t = c && c.plotted && c.plot.data.find(t => t.meta === "smoothed");
            return t && t.y.length > 50 && t.y;""")
        assert abs(ys[50] - 49.0) < 1e-6, ys[50]  # 50 - w/(1-w) + debiasing's w^51: 49.0
        # Without it (a server before its smoothing), the page smooths what it holds.
        browser.execute_script("""
            const real = window.fetch;
            window.fetch = async (url, ...rest) => {
                const res = await real(url, ...rest);
                if (!String(url).includes('/api/scalars')) return res;
                const body = await res.json();
                for (const b of body.buckets) delete b.smoothed;
                return new Response(JSON.stringify(body), { status: res.status });
            };
            refetchAll();""")
        ys = wait_for(browser, """
            const c = state.charts.get('loss/x');
            const s = c && c.series.get('a_0');
            const t = c && c.plotted && s && !s.buckets[0].hasOwnProperty('smoothed')
                && c.plot.data.find(t => t.meta === "smoothed");
            return t && t.y.length > 50 && t.y;""")
        assert 40 < ys[50] < 50, ys[50]  # an EMA of 0..99 lags its raw 50


def test_dark_mode_follows_the_system_and_its_toggle_and_800_px_do_not_overflow(tally_bin: Path, tmp_path: Path, browser):
    write_sweep(tmp_path)
    browser.set_window_size(800, 900)

    def background():
        import io

        from PIL import Image

        shot = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
        dpr = browser.execute_script("return window.devicePixelRatio || 1")
        # A point of the page's background (below the header, left of nothing) and one inside
        # the first chart's plot area.
        c = browser.execute_script("""
            const p = state.charts.get('loss/x').plot, r = p.getBoundingClientRect(), s = p._fullLayout._size;
            return [r.left + s.l + 5, r.top + s.t + s.h - 5];""")
        return shot.getpixel((int(3 * dpr), int((browser.execute_script("return window.innerHeight") - 3) * dpr))), \
            shot.getpixel((int(c[0] * dpr), int(c[1] * dpr)))

    def dark(page, plot):
        return max(page) < 60 and max(plot) < 60

    def light(page, plot):
        return min(page) > 200 and min(plot) > 200

    def repainted(theme, timeout=30.0):
        # A repaint takes its time on a loaded machine: the screen is read until it shows
        # `theme` or the time is up, and the caller asserts on the last reading.
        deadline = time.monotonic() + timeout
        while not theme(*(colours := background())) and time.monotonic() < deadline:
            time.sleep(0.1)
        return colours

    for url in serve(tally_bin, tmp_path):
        browser.get(url + "#tags=loss")
        wait_for(browser, "const c = state.charts.get('loss/x'); return c && c.plotted && !c.drawing && !!c.plot._fullLayout")
        # Usable at 800 px: nothing wider than the window.
        widths = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert widths[0] <= widths[1], widths
        chart_right = browser.execute_script(
            "return state.charts.get('loss/x').el.getBoundingClientRect().right")
        assert chart_right <= widths[1]
        page, plot = background()
        assert light(page, plot), (page, plot)
        # The toggle: dark.
        browser.execute_script("const t = document.getElementById('theme'); t.value = 'dark'; t.dispatchEvent(new Event('change'))")
        page, plot = repainted(dark)
        assert dark(page, plot), (page, plot)
        # The system's choice, followed while the toggle says "system".
        browser.execute_script("const t = document.getElementById('theme'); t.value = 'auto'; t.dispatchEvent(new Event('change'))")
        page, plot = repainted(light)
        assert light(page, plot), (page, plot)
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        page, plot = repainted(dark)
        assert dark(page, plot), (page, plot)


def test_image_slider_markdown_text_and_histograms_over_time(tally_bin: Path, tmp_path: Path, browser):
    import numpy as np
    from tensorboardX import SummaryWriter as TbxWriter

    t = TbxWriter(str(tmp_path / "tbx"))
    t.add_text("notes", "# Results\n\n**bold** and *it* and `code`\n\n- one\n- two\n\n"
                        "[home](https://example.org) [bad](javascript:window.pwned=1)\n\n"
                        "<script>window.pwned = 1</script> <img src=x onerror=\"window.pwned=1\">", 0)
    for step, channel in ((5, 0), (9, 1)):
        image = np.zeros((3, 8, 16), dtype=np.uint8)
        image[channel] = 255  # red at step 5, green at step 9
        t.add_image("frame", image, step)
    for step in (1, 2, 3):
        t.add_histogram("weights", np.arange(100.0) + 50 * step, step)
    t.add_scalar("loss", 1.0, 0)
    t.close()

    pixel = """
        const i = document.querySelector('#run-view figure[data-tag="frame"] img');
        if (!i.complete || !i.naturalWidth) return null;
        const c = document.createElement('canvas'); c.width = i.naturalWidth; c.height = i.naturalHeight;
        const x = c.getContext('2d'); x.drawImage(i, 0, 0);
        return [...x.getImageData(4, 4, 1, 1).data.slice(0, 3)];"""
    for url in serve(tally_bin, tmp_path):
        browser.get(url)
        wait_for(browser, "return document.querySelector('#runs tr[data-run=\"tbx\"] td.name')").click()
        wait_for(browser, "return document.querySelector('#run-view[data-run=\"tbx\"]')")
        # The newest image first, then the step the slider picks.
        assert wait_for(browser, pixel) == [0, 255, 0]
        caption = "return document.querySelector('#run-view figure[data-tag=\"frame\"] figcaption').textContent"
        assert browser.execute_script(caption) == "frame · step 9"
        browser.execute_script("""
            const s = document.querySelector('#run-view figure[data-tag="frame"] input.step-slider');
            s.value = '0'; s.dispatchEvent(new Event('input'));""")
        assert browser.execute_script(caption) == "frame · step 5"
        wait_for(browser, pixel.replace("return [...", "const p = [...").replace(
            ".slice(0, 3)];", ".slice(0, 3)]; return p[0] === 255 && p[1] === 0 && p;"))

        # Markdown rendered, and nothing in it run: the script and the handler show as text.
        md = browser.execute_script("""
            const m = document.querySelector('#run-view .text .markdown');
            return {h: m.querySelector('h3')?.textContent, strong: m.querySelector('strong')?.textContent,
                    em: m.querySelector('em')?.textContent, code: m.querySelector('code')?.textContent,
                    items: [...m.querySelectorAll('li')].map(l => l.textContent),
                    links: [...m.querySelectorAll('a')].map(a => a.href),
                    elements: [...m.querySelectorAll('script, img, iframe')].length,
                    text: m.textContent, pwned: window.pwned === undefined ? null : window.pwned};""")
        assert md["h"] == "Results" and md["strong"] == "bold" and md["em"] == "it" and md["code"] == "code", md
        assert md["items"] == ["one", "two"] and md["links"] == ["https://example.org/"], md
        assert md["elements"] == 0 and md["pwned"] is None, md
        assert "<script>window.pwned = 1</script>" in md["text"] and "[bad](javascript:" in md["text"], md

        # Histograms over time: one ridge per step, the caption naming the steps.
        steps = browser.execute_script(
            "return document.querySelector('#run-view .histograms canvas').dataset.steps")
        assert steps == "1,2,3"
        assert browser.execute_script(
            "return document.querySelector('#run-view .histograms figcaption').textContent") == "weights · steps 1–3 (3)"
