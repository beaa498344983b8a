// The charts: one per tag the shown runs have, in sections by the tag's prefix; fetched and
// drawn as they come near the view, let go of far from it, and resized.
"use strict";

async function refreshCharts(grown) {
  const shown = shownRuns();
  await Promise.all(shown.filter(n => !state.runTags.has(n) || grown.has(n)).map(async name => {
    try {
      const body = await api("tags", { run: name });
      state.runTags.set(name, body.tags.map(t => t.tag));
    } catch (e) { state.runTags.set(name, []); }
  }));
  const tags = new Set();
  for (const name of shown) for (const t of state.runTags.get(name) || []) tags.add(t);
  let re = null;
  try { re = new RegExp(state.tagFilter, "i"); } catch (e) { re = null; }
  const tagList = [...tags].filter(t => !re || re.test(t)).sort();
  layoutCharts(tagList);
  await Promise.all(tagList.map(tag => {
    const chart = state.charts.get(tag);
    const has = shown.filter(r => (state.runTags.get(r) || []).includes(tag));
    chart.runs = has;
    for (const r of [...chart.series.keys()]) {
      if (!has.includes(r)) { chart.series.delete(r); chart.stale = true; }
    }
    for (const r of has) if (!chart.series.has(r) || grown.has(r)) chart.dirty.add(r);
    if (state.groupBy) chart.dirty.add("(groups)");
    return chart.visible ? update(chart) : null;
  }));
}

function section(tag) {
  return tag.includes("/") ? tag.slice(0, tag.indexOf("/")) : "(no prefix)";
}

function layoutCharts(tags) {
  const root = document.getElementById("charts");
  const groups = new Map();
  for (const tag of tags) {
    const group = section(tag);
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(tag);
  }
  for (const [tag, chart] of state.charts) if (!tags.includes(tag)) {
    observer.unobserve(chart.el);
    farObserver.unobserve(chart.el);
    if (chart.plotted) Plotly.purge(chart.plot);
    chart.el.remove(); state.charts.delete(tag);
  }
  const sections = [...groups.keys()].sort();
  for (const group of sections) {
    let details = root.querySelector(`details[data-group="${CSS.escape(group)}"]`);
    if (!details) {
      details = document.createElement("details");
      details.open = true;
      details.dataset.group = group;
      const summary = document.createElement("summary");
      summary.textContent = group;
      const grid = document.createElement("div");
      grid.className = "grid";
      details.append(summary, grid);
      root.append(details);
    }
    const grid = details.querySelector(".grid");
    for (const tag of groups.get(group)) {
      if (!state.charts.has(tag)) state.charts.set(tag, newChart(tag, grid));
    }
    // Charts in tag order within their section.
    for (const tag of groups.get(group)) grid.append(state.charts.get(tag).el);
    details.querySelector("summary").dataset.count = String(groups.get(group).length);
  }
  // Sections in name order.
  for (const group of sections) root.append(root.querySelector(`details[data-group="${CSS.escape(group)}"]`));
  for (const d of root.querySelectorAll("details")) {
    if (!d.querySelector(".chart")) d.remove();
  }
}

// Charts are fetched and drawn when they come near the view, so a page of fifty tags draws the
// few on screen first and never the ones nobody scrolls to.
const observer = new IntersectionObserver(entries => {
  for (const e of entries) {
    const chart = [...state.charts.values()].find(c => c.el === e.target);
    if (!chart) continue;
    chart.visible = e.isIntersecting;
    if (chart.visible && (chart.dirty.size || !chart.plotted || chart.stale)) enqueue(chart);
  }
}, { rootMargin: "400px 0px" });

// Charts coming into view are drawn one at a time once the page stops scrolling (150 ms), so
// a fast scroll through many charts is not held up drawing each one it passes.
const drawQueue = new Set();
let lastScroll = 0, queueTimer = 0;
window.addEventListener("scroll", () => { lastScroll = performance.now(); }, { passive: true });
function enqueue(chart) { drawQueue.add(chart); pump(); }
function pump() {
  if (queueTimer) return;
  queueTimer = setTimeout(() => {
    queueTimer = 0;
    if (performance.now() - lastScroll < 150) { pump(); return; }
    for (const c of drawQueue) if (!c.visible || !state.charts.has(c.tag)) drawQueue.delete(c);
    const chart = drawQueue.values().next().value;
    if (!chart) return;
    drawQueue.delete(chart);
    if (chart.dirty.size || !chart.plotted || chart.stale) update(chart);
    if (drawQueue.size) pump();
  }, 16);
}

// A chart far out of view lets go of its drawing (plotly's per-point objects are most of a
// page's memory) and keeps its buckets; it is drawn again from them when it comes back.
const farObserver = new IntersectionObserver(entries => {
  for (const e of entries) {
    const chart = [...state.charts.values()].find(c => c.el === e.target);
    if (!chart || e.isIntersecting || !chart.plotted) continue;
    Plotly.purge(chart.plot);
    chart.plotted = false;
    chart.hooked = false;
  }
}, { rootMargin: "1500px 0px" });

const resizer = new ResizeObserver(entries => {
  for (const e of entries) {
    const chart = [...state.charts.values()].find(c => c.plot === e.target);
    if (chart && chart.plotted) {
      const w = Math.round(e.contentRect.width);
      Plotly.Plots.resize(chart.plot);
      // Wider than the buckets asked for: ask again, so a bucket stays about a pixel.
      if (w > (chart.askedWidth || 0) * 1.25 + 20) {
        chart.series.clear();
        for (const r of chart.runs || []) chart.dirty.add(r);
        update(chart);
      }
    }
  }
});

function newChart(tag, grid) {
  const el = document.createElement("div");
  el.className = "chart";
  el.dataset.tag = tag;
  if (state.wide.has(tag)) el.classList.add("wide");
  const head = document.createElement("div");
  head.className = "head";
  const title = document.createElement("span");
  title.className = "title";
  title.textContent = tag;
  title.title = tag;
  const wide = document.createElement("button");
  wide.className = "widen";
  wide.title = "full width";
  wide.textContent = "⤢";
  head.append(title, wide);
  const plot = document.createElement("div");
  plot.className = "plot";
  const cursorLine = document.createElement("div");
  cursorLine.className = "cursor";
  cursorLine.hidden = true;
  const readoutBox = document.createElement("div");
  readoutBox.className = "readout";
  readoutBox.hidden = true;
  el.append(head, plot, cursorLine, readoutBox);
  grid.append(el);
  const chart = {
    tag, el, plot, series: new Map(), zoom: state.zooms[tag] || null, groups: null,
    visible: false, plotted: false, dirty: new Set(), runs: [], lines: [],
    cursorLine, readout: readoutBox, hook: followZoom,
  };
  followPointer(chart);
  wide.onclick = () => {
    el.classList.toggle("wide");
    if (el.classList.contains("wide")) state.wide.add(tag); else state.wide.delete(tag);
    saveUrl();
  };
  observer.observe(el);
  farObserver.observe(el);
  resizer.observe(plot);
  return chart;
}
