// tally board's page: the runs table, and one chart per tag overlaying the selected runs
// (one run's own views are run.js's). The charts are plotly.js's (served by the board itself
// from the `plotly` crate's embedded copy: ARCHITECTURE.md "tally-board").
// Every series comes from /api/scalars already reduced to the chart's width with each bucket's
// first, last, lowest and highest point (docs/contract/board.md "Every point drawn"), so the
// line drawn through them shows every spike; NaN and infinities are marked, never dropped.
// What the user chose (tags, runs, smoothing, x axis, zooms, group-by, ...) is kept in the
// URL's fragment, so a view can be shared and survives a reload.
"use strict";

// Twenty distinct colours (Tableau 10, then its lighter half): a run's colour is its place in
// the board's run order, so it stays the same across reloads; a user's own choice overrides it.
const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
  "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
  "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"];
const POLL_MS = 2000;
const NONFINITE = "#d00000";

const state = {
  token: new URLSearchParams(location.search).get("token"),
  generation: 0,
  looked: false,         // the first answer selects the first runs (or the URL's)
  runs: new Map(),       // name -> row
  order: [],             // names in table order
  selected: new Set(),
  colors: new Map(),     // name -> colour the user chose
  runTags: new Map(),    // name -> [tag]
  charts: new Map(),     // tag -> chart
  x: "step",
  logY: false,
  smoothing: 0.6,
  groupBy: "",           // configuration keys, comma-separated: charts show groups' bands
  groupStat: "mean",     // a group's line: "mean" or "iqm", each over its own band
  tableTags: "",         // tag globs, comma-separated: their last, min and max in the table
  runFilter: "",         // regex on names, and key=value on configuration: table and charts
  tagFilter: "",
  zooms: {},             // tag -> [x0, x1]
  wide: new Set(),       // tags drawn full width
  size: "m",
  theme: "auto",         // auto (the system's), light, dark
  sort: { key: null, dir: 1 },
  focus: null,           // the run whose own views are open (run.js)
  pending: 0,            // runs listed, not read yet
  urlSelection: null,    // the runs the URL named, applied at the first look
};

async function api(path, params, init) {
  const q = new URLSearchParams(params || {});
  if (state.token) q.set("token", state.token);
  const res = await fetch(`/api/${path}?${q}`, init);
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

// ---- the URL: what the user chose ----

function readUrl() {
  const h = new URLSearchParams(location.hash.slice(1));
  const get = (k, d) => h.has(k) ? h.get(k) : d;
  state.tagFilter = get("tags", "");
  state.runFilter = get("runs", "");
  state.smoothing = Math.min(0.999, Math.max(0, Number(get("smoothing", "0.6")) || 0));
  state.x = ["step", "relative", "wall"].includes(get("x")) ? get("x") : "step";
  state.logY = get("log", "") === "1";
  state.groupBy = get("group", "");
  state.groupStat = get("stat", "mean") === "iqm" ? "iqm" : "mean";
  state.size = ["s", "m", "l"].includes(get("size")) ? get("size") : "m";
  state.theme = ["auto", "light", "dark"].includes(get("theme")) ? get("theme") : "auto";
  try { state.zooms = JSON.parse(get("zoom", "{}")) || {}; } catch (e) { state.zooms = {}; }
  state.wide = new Set(get("wide", "") ? get("wide").split("\n") : []);
  if (h.has("sel")) state.urlSelection = h.get("sel") ? h.get("sel").split("\n") : [];
  try {
    for (const [run, c] of Object.entries(JSON.parse(get("colors", "{}")) || {})) {
      if (/^#[0-9a-f]{6}$/i.test(c)) state.colors.set(run, c);
    }
  } catch (e) { /* a hand-edited URL: default colours */ }
  document.getElementById("tag-filter").value = state.tagFilter;
  document.getElementById("run-filter").value = state.runFilter;
  document.getElementById("smoothing").value = state.smoothing;
  document.getElementById("smoothing-value").textContent = state.smoothing.toFixed(2);
  document.getElementById("x-axis").value = state.x;
  document.getElementById("log-y").checked = state.logY;
  document.getElementById("group-by").value = state.groupBy;
  document.getElementById("group-stat").value = state.groupStat;
  document.getElementById("chart-size").value = state.size;
  document.getElementById("theme").value = state.theme;
  document.getElementById("charts").dataset.size = state.size;
}

// A view pasted into the address bar (only the fragment changed: no reload by itself) is
// loaded as a page opened with it would be.
let written = null;
window.addEventListener("hashchange", () => {
  if (location.hash.slice(1) !== written) location.reload();
});

let urlTimer = null;
function saveUrl() {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(() => {
    const h = new URLSearchParams();
    if (state.tagFilter) h.set("tags", state.tagFilter);
    if (state.runFilter) h.set("runs", state.runFilter);
    h.set("sel", [...state.selected].join("\n"));
    h.set("smoothing", String(state.smoothing));
    if (state.x !== "step") h.set("x", state.x);
    if (state.logY) h.set("log", "1");
    if (state.groupBy) h.set("group", state.groupBy);
    if (state.groupStat !== "mean") h.set("stat", state.groupStat);
    if (Object.keys(state.zooms).length) h.set("zoom", JSON.stringify(state.zooms));
    if (state.wide.size) h.set("wide", [...state.wide].join("\n"));
    if (state.size !== "m") h.set("size", state.size);
    if (state.theme !== "auto") h.set("theme", state.theme);
    if (state.colors.size) h.set("colors", JSON.stringify(Object.fromEntries(state.colors)));
    written = h.toString();
    history.replaceState(null, "", `${location.pathname}${location.search}#${written}`);
  }, 50);
}

// ---- the theme: the system's, or the user's ----

function dark() {
  return state.theme === "dark"
    || (state.theme === "auto" && window.matchMedia("(prefers-color-scheme: dark)").matches);
}

function applyTheme() {
  document.documentElement.dataset.theme = dark() ? "dark" : "light";
  for (const chart of state.charts.values()) if (chart.plotted) draw(chart);
}

function themeColors() {
  return dark()
    ? { paper: "#16181d", plot: "#16181d", text: "#d8dadf", grid: "#2e323a", line: "#555b66" }
    : { paper: "#ffffff", plot: "#ffffff", text: "#333333", grid: "#e6e6e6", line: "#aaaaaa" };
}

// ---- the runs table ----

async function pollRuns() {
  try {
    const asked = state.tableTags;
    const params = { since: state.generation };
    if (asked) params.tags = asked;
    const body = await api("runs", params);
    const names = new Set(body.names);
    for (const name of [...state.runs.keys()]) {
      if (!names.has(name)) { state.runs.delete(name); state.selected.delete(name); }
    }
    const grown = [];
    for (const row of body.runs) {
      const old = state.runs.get(row.run);
      state.runs.set(row.run, row);
      if (old && (old.points !== row.points || old.written !== row.written)) grown.push(row.run);
    }
    state.order = body.names;
    if (!state.looked) {
      state.looked = true;
      if (state.urlSelection !== null) {
        for (const name of state.urlSelection) if (names.has(name)) state.selected.add(name);
      } else {
        // The first look: the first runs are selected, as TensorBoard shows every run.
        for (const name of state.order.slice(0, 10)) {
          const row = state.runs.get(name);
          if (row && !row.error) state.selected.add(name);
        }
      }
      saveUrl();
    }
    // Rows asked with other table tags lack the new tags' figures: ask for every row again.
    state.generation = asked === state.tableTags ? body.generation : 0;
    const notice = document.getElementById("notice");
    notice.hidden = !body.notice;
    notice.textContent = body.notice || "";
    renderRuns();
    // Runs still to read are read at the next request: ask again at once.
    state.pending = body.pending || 0;
    document.getElementById("status").textContent = state.pending
      ? `${state.order.length} runs · reading ${state.pending}`
      : `${state.order.length} runs · updated ${new Date().toLocaleTimeString()}`;
    if (state.focus && grown.includes(state.focus)) showRun(state.focus);
    if (grown.length || body.runs.length) await refreshCharts(new Set(grown));
  } catch (e) {
    document.getElementById("status").textContent = `board unreachable: ${e.message}`;
  }
  setTimeout(pollRuns, state.pending ? 0 : POLL_MS);
}

function colorOf(name) {
  if (state.colors.has(name)) return state.colors.get(name);
  const i = state.order.indexOf(name);
  return COLORS[(i < 0 ? state.order.length : i) % COLORS.length];
}

function duration(secs) {
  if (secs == null) return "";
  const s = Math.floor(secs);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s % 3600 / 60)).padStart(2, "0")}m`;
}

// The table's columns: the run's own, its configuration's (those that differ between runs
// first), then the figures of the tags typed in "table tags".
const BASE_COLUMNS = [["state", "state"], ["last_step", "last step"], ["duration", "duration"],
  ["findings", "health"]];
const MAX_CONFIG_COLUMNS = 6;

function columns() {
  const rows = state.order.map(n => state.runs.get(n)).filter(Boolean);
  const config = new Map();
  for (const r of rows) for (const k of Object.keys(r)) {
    if (!k.startsWith("config.")) continue;
    if (!config.has(k)) config.set(k, new Set());
    config.get(k).add(JSON.stringify(r[k]));
  }
  // The keys a sweep varies (all of them for one run), most distinct values first.
  const varying = [...config.keys()]
    .filter(k => rows.length < 2 || config.get(k).size > 1)
    .sort((a, b) => config.get(b).size - config.get(a).size);
  const figures = new Set();
  for (const r of rows) for (const k of Object.keys(r)) {
    if (/:(last|min|max)$/.test(k)) figures.add(k);
  }
  return [...BASE_COLUMNS,
    ...varying.slice(0, MAX_CONFIG_COLUMNS).map(k => [k, configLabel(k)]),
    ...[...figures].sort().map(k => [k, k.slice(k.lastIndexOf("/") + 1)])];
}

// A configuration column's short name: tally's run_config.json nests a writer's config under
// "config", so "config.config.lr" reads "lr".
function configLabel(key) {
  return key.replace(/^config\.(config\.)?/, "");
}

function cell(row, key) {
  const v = row[key];
  if (key === "duration") return duration(v);
  // The default health rules' findings (the runs table's `health`), or ok when none fired.
  if (key === "findings") return v == null ? "" : v === 0 ? "ok" : row.health;
  if (typeof v === "number" && !Number.isInteger(v)) return fmt(v);
  return v == null ? "" : String(v);
}

// "filter runs": each word a regular expression on the run's name (a plain word is one too),
// `key=value` a configuration value; a run must match every word. The filter restricts the
// charts as well as the table.
function matches(name, row, filter) {
  for (const word of filter.split(/\s+/).filter(Boolean)) {
    const eq = word.indexOf("=");
    if (eq > 0 && /^[\w.]+$/.test(word.slice(0, eq))) {
      const key = word.slice(0, eq), want = word.slice(eq + 1).toLowerCase();
      const hit = row && Object.keys(row).some(k => k.startsWith("config.")
        && (k === key || configLabel(k) === configLabel(key))
        && String(row[k]).toLowerCase() === want);
      if (!hit) return false;
    } else {
      let re;
      try { re = new RegExp(word, "i"); } catch (e) { re = null; }
      if (re ? !re.test(name) : !name.toLowerCase().includes(word.toLowerCase())) return false;
    }
  }
  return true;
}

function filterError() {
  for (const word of state.runFilter.split(/\s+/).filter(Boolean)) {
    if (word.indexOf("=") > 0) continue;
    try { new RegExp(word); } catch (e) { return e.message; }
  }
  return "";
}

function passes(name) { return matches(name, state.runs.get(name), state.runFilter); }

// The runs the charts draw: selected, and passing the filter.
function shownRuns() { return state.order.filter(n => state.selected.has(n) && passes(n)); }

function sortedNames() {
  const names = [...state.order];
  const { key, dir } = state.sort;
  if (!key) return names;
  const value = n => { const v = state.runs.get(n)?.[key]; return v == null ? null : v; };
  names.sort((a, b) => {
    const x = value(a), y = value(b);
    if (x === y) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    return (x < y ? -1 : 1) * dir;
  });
  return names;
}

function selectionChanged() {
  renderRuns();
  saveUrl();
  refreshCharts(new Set());
}

function renderRuns() {
  const cols = columns();
  const error = filterError();
  const filterBox = document.getElementById("run-filter");
  filterBox.classList.toggle("invalid", !!error);
  filterBox.title = error || "each word a regular expression on run names, or key=value on configuration";
  const head = document.querySelector("#runs thead tr");
  head.replaceChildren();
  for (const [key, label] of [[null, ""], ["run", "run"], ...cols]) {
    const th = document.createElement("th");
    th.textContent = label + (state.sort.key === key && key ? (state.sort.dir > 0 ? " ▲" : " ▼") : "");
    if (key) {
      th.dataset.key = key;
      th.onclick = () => {
        state.sort = { key, dir: state.sort.key === key ? -state.sort.dir : 1 };
        renderRuns();
      };
    }
    head.append(th);
  }
  const body = document.querySelector("#runs tbody");
  body.replaceChildren();
  let listed = 0;
  for (const name of sortedNames()) {
    const row = state.runs.get(name);
    if (!row || !passes(name)) continue;
    listed += 1;
    const tr = document.createElement("tr");
    tr.dataset.run = name;
    if (row.error) tr.className = "error";
    const box = document.createElement("input");
    box.type = "checkbox";
    box.checked = state.selected.has(name);
    box.disabled = !!row.error;
    box.title = "draw this run";
    box.onchange = () => {
      if (box.checked) state.selected.add(name); else state.selected.delete(name);
      selectionChanged();
    };
    // The run's colour, changeable.
    const swatch = document.createElement("input");
    swatch.type = "color";
    swatch.className = "swatch";
    swatch.value = colorOf(name);
    swatch.title = "this run's colour (click to change)";
    swatch.onchange = () => {
      state.colors.set(name, swatch.value);
      saveUrl();
      renderRuns();
      for (const chart of state.charts.values()) if (chart.plotted) draw(chart);
    };
    const td0 = document.createElement("td");
    td0.className = "pick";
    td0.append(box, swatch);
    const tdName = document.createElement("td");
    tdName.className = "name";
    tdName.title = name;
    tdName.textContent = name;
    tdName.onclick = () => showRun(name);
    tr.append(td0, tdName);
    for (const [key] of cols) {
      const td = document.createElement("td");
      td.textContent = cell(row, key);
      td.dataset.key = key;
      if (key === "state") td.className = `state-${row.state}`;
      if (key === "findings" && row.findings > 0) td.className = "unhealthy";
      tr.append(td);
    }
    body.append(tr);
    const damage = row.damage || [];
    if (row.error || damage.length) {
      const msg = document.createElement("tr");
      msg.className = "error";
      const td = document.createElement("td");
      td.colSpan = cols.length + 2;
      td.className = "message";
      td.textContent = row.error ||
        damage.map(d => `${d.file} @ byte ${d.offset}: ${d.kind} ${d.detail || ""}`).join("\n");
      msg.append(td);
      body.append(msg);
    }
  }
  document.getElementById("run-count").textContent =
    `${state.selected.size} of ${state.order.length} selected · ${listed} listed`;
}

// ---- charts ----

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

// A chart's runs to fetch again, fetched once it is in view (charts out of view cost nothing).
// A chart whose runs and view did not change is not drawn again.
async function update(chart) {
  const runs = [...chart.dirty].filter(r => r !== "(groups)");
  const groups = chart.dirty.has("(groups)");
  chart.dirty.clear();
  if (!runs.length && !groups) {
    if (!chart.plotted || chart.stale) draw(chart);
    return;
  }
  await loadChart(chart, runs);
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
    cursorLine, readout: readoutBox,
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

// The x a request asks for: relative time is wall time less the run's start.
function axisParam() { return state.x === "step" ? "step" : "wall"; }
function offsetOf(run) {
  return state.x === "relative" ? (state.runs.get(run)?.start || 0) : 0;
}

// What a chart's request depends on: an answer asked under another view is dropped, since the
// change of view started its own request.
function viewOf(chart) {
  return JSON.stringify([state.x, state.groupBy, state.smoothing, chart.zoom]);
}

// The chart's plot width in pixels: the buckets asked for.
function plotWidth(chart) {
  const size = chart.plotted && chart.plot._fullLayout && chart.plot._fullLayout._size;
  const w = size ? size.w : chart.plot.clientWidth - 70;
  return Math.max(50, Math.min(4096, Math.round(w || 400)));
}

async function loadChart(chart, runs) {
  const view = viewOf(chart);
  const width = plotWidth(chart);
  chart.askedWidth = width;
  if (state.groupBy) {
    // Groups are over every run under the board's paths, on aligned steps.
    let groups = [], absent = [];
    try {
      const params = { tag: chart.tag, by: state.groupBy, width };
      if (state.smoothing > 0) params.smoothing = state.smoothing;
      const body = await api("groups", params);
      groups = body.groups;
      absent = body.absent || [];
    } catch (e) { groups = []; }
    if (view !== viewOf(chart)) return;
    // A key no run has is said, not drawn as one group of nulls.
    const note = document.getElementById("group-note");
    note.hidden = !absent.length;
    note.textContent = absent.join("; ");
    chart.groups = groups;
    draw(chart);
    return;
  }
  chart.groups = null;
  document.getElementById("group-note").hidden = true;
  await Promise.all(runs.map(async run => {
    let body = null;
    try { body = await fetchSeries(chart, run, width); } catch (e) { body = null; }
    if (view !== viewOf(chart)) return;
    if (body) chart.series.set(run, body); else chart.series.delete(run);
  }));
  if (view === viewOf(chart)) draw(chart);
}

// A run's series for a chart. A run that grew under an unzoomed chart is asked for its newest
// buckets only, from its last bucket on at the bucket span already drawn, and they replace
// that bucket (docs/contract/board.md "Live runs"); once the series has grown to twice the
// chart's buckets it is asked for whole again, so buckets stay about a pixel wide.
async function fetchSeries(chart, run, width) {
  const params = { run, tag: chart.tag, width, x: axisParam() };
  if (state.smoothing > 0) params.smoothing = state.smoothing;
  if (chart.zoom) {
    params.start = chart.zoom[0] + offsetOf(run);
    params.end = chart.zoom[1] + offsetOf(run);
    return api("scalars", params);
  }
  const old = chart.series.get(run);
  if (old && old.x === params.x && old.span > 0 && old.buckets.length && !old.zoomed
      && old.smoothing === state.smoothing) {
    const slot = b => Math.floor((rawX(b.first) - old.start) / old.span);
    const from = slot(old.buckets[old.buckets.length - 1]);
    let fresh = null;
    try {
      fresh = await api("scalars", { ...params, start: old.start + from * old.span, span: old.span });
    } catch (e) { fresh = null; } // e.g. grown past the buckets one answer may hold: whole again
    const kept = old.buckets.filter(b => slot(b) < from);
    if (fresh && (fresh.end - old.start) / old.span <= 2 * width) {
      const buckets = kept.concat(fresh.buckets);
      const points = buckets.reduce((n, b) => n + b.count, 0);
      return { ...fresh, start: old.start, span: old.span, buckets, points, smoothing: old.smoothing };
    }
  }
  const whole = await api("scalars", params);
  whole.span = (whole.end - whole.start) / width;
  whole.smoothing = state.smoothing;
  return whole;
}

// A point's x as the server has it (relative time is the client's).
function rawX(p) {
  return state.x === "step" ? p[0] : p[1];
}

const num = v => typeof v === "number" ? v : Number(v);
function xOfPoint(p, run) {
  return (state.x === "step" ? p[0] : p[1]) - offsetOf(run);
}
// plotly's date axis takes milliseconds.
function plotX(x) { return state.x === "wall" ? x * 1000 : x; }
function fromPlotX(v) {
  if (state.x !== "wall") return Number(v);
  const t = typeof v === "number" ? v : Date.parse(String(v).replace(" ", "T") + "Z");
  return t / 1000;
}

// A bucket's points in x order: the line through them keeps the bucket's extremes.
function bucketPoints(b) {
  const pts = [b.first, b.min, b.max, b.last].filter(Boolean);
  const k = state.x === "step" ? 0 : 1;
  pts.sort((p, q) => p[k] - q[k]);
  // One point may be several of first, min, max and last: drawn (and smoothed) once.
  const same = (p, q) => p[0] === q[0] && p[1] === q[1] && String(p[2]) === String(q[2]);
  return pts.filter((p, i) => !pts.slice(0, i).some(q => same(p, q)));
}

// TensorBoard's smoothing: an exponential moving average, debiased for its start. Used only
// when the server did not send each bucket's own (`smoothed`, over every raw point).
function smooth(values, weight) {
  if (weight <= 0) return values;
  const constant = values.every(v => v === values[0]);
  let last = 0, n = 0;
  return values.map(v => {
    if (constant || !Number.isFinite(v)) return v;
    last = last * weight + (1 - weight) * v;
    n += 1;
    return last / (1 - Math.pow(weight, n));
  });
}

// A run's line: its raw points (every bucket's extremes, x order) and its smoothed line, from
// the server's per-bucket `smoothed` when it sent one, else smoothed here.
function runLine(run, s) {
  const pts = s.buckets.flatMap(bucketPoints);
  const x = pts.map(p => xOfPoint(p, run)), y = pts.map(p => num(p[2]));
  let sx = x, sy = null;
  if (state.smoothing > 0) {
    if (s.buckets.length && s.buckets.every(b => b.smoothed !== undefined)) {
      sx = s.buckets.map(b => xOfPoint(b.last, run));
      sy = s.buckets.map(b => b.smoothed === null ? NaN : num(b.smoothed));
    } else {
      sy = smooth(y, state.smoothing);
    }
  }
  const marks = s.buckets.flatMap(b => b.nonfinite).map(p => [xOfPoint(p, run), num(p[2]), p]);
  return { run, color: colorOf(run), x, y, sx, sy, marks, total: s.total };
}

// A non-finite value's name, as the marks and the readout say it.
function kind(v) { return Number.isNaN(v) ? "NaN" : v > 0 ? "+inf" : "-inf"; }

function baseLayout(chart) {
  const c = themeColors();
  const axis = { gridcolor: c.grid, linecolor: c.line, zeroline: false, showline: true,
    ticks: "outside", tickcolor: c.line, automargin: true };
  return {
    paper_bgcolor: c.paper, plot_bgcolor: c.plot,
    font: { color: c.text, size: 11, family: "system-ui, sans-serif" },
    margin: { l: 50, r: 12, t: 6, b: 28 },
    xaxis: { ...axis, type: state.x === "wall" ? "date" : "linear",
      title: { text: state.x === "relative" ? "seconds since start" : "", font: { size: 10 } } },
    yaxis: { ...axis, type: state.logY ? "log" : "linear", exponentformat: state.logY ? "power" : "SI",
      ...(state.logY ? { dtick: 1 } : {}) },
    yaxis2: { overlaying: "y", range: [0, 1], visible: false, fixedrange: true },
    // plotly's own hover scans every point of every trace on each move: off, the page draws
    // its own cursor (showCursor below).
    hovermode: false,
    showlegend: true,
    legend: { orientation: "h", x: 0, y: -0.12, yanchor: "top", font: { size: 10 } },
    uirevision: `${chart.tag} ${state.x} ${state.logY}`,
    dragmode: "zoom",
  };
}

const PLOT_CONFIG = {
  displaylogo: false, responsive: false, scrollZoom: false,
  modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d", "toImage"],
};

function draw(chart) {
  if (chart.groups) return drawGroups(chart);
  const layout = baseLayout(chart);
  const traces = [], lines = [];
  for (const run of state.order) {
    const s = chart.series.get(run);
    if (!s) continue;
    const line = runLine(run, s);
    lines.push(line);
    const smoothing = line.sy !== null;
    traces.push({
      type: "scatter", mode: "lines", name: run, legendgroup: run,
      x: line.x.map(plotX), y: line.y, connectgaps: false,
      line: { color: line.color, width: smoothing ? 1 : 1.5 }, opacity: smoothing ? 0.35 : 1,
      showlegend: !smoothing,
    });
    if (smoothing) {
      traces.push({
        type: "scatter", mode: "lines", name: run, legendgroup: run, meta: "smoothed",
        x: line.sx.map(plotX), y: line.sy, line: { color: line.color, width: 1.75 },
      });
    }
  }
  // NaN as an × at the top edge, infinities as triangles at the edge they run off.
  const marks = lines.flatMap(l => l.marks.map(m => ({ ...l, m })));
  if (marks.length) {
    traces.push({
      type: "scatter", mode: "markers", yaxis: "y2", name: "NaN / ±inf", showlegend: false,
      x: marks.map(k => plotX(k.m[0])),
      y: marks.map(k => Number.isNaN(k.m[1]) || k.m[1] > 0 ? 0.97 : 0.03),
      marker: { color: NONFINITE, size: 9,
        symbol: marks.map(k => Number.isNaN(k.m[1]) ? "x-thin-open" : k.m[1] > 0 ? "triangle-up" : "triangle-down"),
        line: { color: NONFINITE, width: 2 } },
      text: marks.map(k => `${k.run}: ${kind(k.m[1])} at step ${k.m[2][0]}`),
    });
  }
  if (chart.zoom) layout.xaxis.range = chart.zoom.map(plotX), layout.xaxis.autorange = false;
  chart.lines = lines;
  plot(chart, traces, layout);
  chart.el.dataset.points = lines.map(l => l.total).join(",");
  chart.el.dataset.runs = lines.map(l => l.run).join("\n");
  chart.el.dataset.marks = String(marks.length);
}

// A curve point's figure the page shows: [value, low, high] of the mean or of the IQM.
function groupFigure(p) {
  return state.groupStat === "iqm" ? [p.iqm, p.iqm_low, p.iqm_high] : [p.mean, p.low, p.high];
}

// Each group's mean (or IQM) as a line over its 95 % bootstrap band, smoothed as runs are.
function drawGroups(chart) {
  const layout = baseLayout(chart);
  layout.xaxis.type = "linear";
  const traces = [], lines = [];
  chart.groups.filter(g => g.curve.length).forEach((g, i) => {
    const name = Object.entries(g.key).map(([k, v]) => `${configLabel(k)}=${v}`).join(" ") + ` (n=${g.n})`;
    const color = COLORS[i % COLORS.length];
    const curve = g.curve.map(p => {
      const [mean, low, high] = groupFigure(p);
      return { step: p.step, n: p.n, mean, low, high, smoothed: state.groupStat === "iqm" ? p.iqm_smoothed : p.smoothed };
    });
    const steps = curve.map(p => p.step), means = curve.map(p => p.mean);
    let smoothed = null;
    if (state.smoothing > 0) {
      smoothed = curve.every(p => p.smoothed !== undefined)
        ? curve.map(p => p.smoothed === null ? NaN : num(p.smoothed))
        : smooth(means, state.smoothing);
    }
    // The same shape as a run's line (runLine), so the cursor reads both alike.
    lines.push({ run: name, color, x: steps, y: means, sx: steps, sy: smoothed, marks: [],
      pts: curve.map(p => [p.step, p.mean]), band: curve });
    traces.push({
      type: "scatter", mode: "lines", x: [...steps, ...[...steps].reverse()],
      y: [...curve.map(p => p.high), ...[...curve].reverse().map(p => p.low)],
      fill: "toself", fillcolor: color, opacity: 0.2, line: { width: 0 },
      hoverinfo: "skip", showlegend: false, legendgroup: name, name,
    });
    traces.push({
      type: "scatter", mode: "lines", x: steps, y: means, name, legendgroup: name,
      line: { color, width: smoothed ? 1 : 1.75 }, opacity: smoothed ? 0.45 : 1,
      showlegend: !smoothed,
    });
    if (smoothed) {
      traces.push({
        type: "scatter", mode: "lines", x: steps, y: smoothed, name, legendgroup: name,
        meta: "smoothed", line: { color, width: 1.75 },
      });
    }
  });
  if (chart.zoom) layout.xaxis.range = chart.zoom, layout.xaxis.autorange = false;
  chart.lines = lines;
  plot(chart, traces, layout);
  chart.el.dataset.groups = String(lines.length);
}

function plot(chart, traces, layout) {
  layout.height = Math.max(160, chart.plot.clientHeight || 300);
  chart.drawing = true;
  chart.plotted = true;
  chart.stale = false;
  Plotly.react(chart.plot, traces, layout, PLOT_CONFIG).then(() => {
    chart.drawing = false;
    if (!chart.hooked) { chart.hooked = true; hook(chart); }
    chart.el.dataset.drawn = String((Number(chart.el.dataset.drawn) || 0) + 1);
  });
}

// ---- the cursor: a vertical line and a readout of every line's value at its x ----
// plotly's hover is off (baseLayout): the page converts the pointer's pixel to x with the
// axis' own conversion, finds each line's point at or before it by bisection, and shows the
// line and readout on this chart and, at the same x, on every other chart in view, once a
// frame.

// The index of the last of `xs` (ascending) not past x; -1 when x is before the first.
function indexAt(xs, x) {
  let lo = 0, hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] <= x) lo = mid + 1; else hi = mid;
  }
  return lo - 1;
}

const g5 = v => Number.isFinite(v) ? String(Number(v.toPrecision(5))) : kind(v);

function xLabel(x) {
  if (state.x === "wall") return new Date(x * 1000).toISOString().replace("T", " ").slice(0, 23);
  if (state.x === "relative") return `${g5(x)} s`;
  return `step ${Math.floor(x)}`; // the step at or before the cursor, as the values are
}

// The readout at x: one row per line (its colour, name, smoothed and raw value, a group's n
// and band), and a row for each NaN or infinity within `near` of x.
function readout(chart, x, near) {
  const rows = [`<div class="at">${xLabel(x)}</div>`];
  const esc = t => t.replace(/[&<>"]/g, c => `&#${c.charCodeAt(0)};`);
  for (const line of chart.lines) {
    const i = indexAt(line.x, x);
    if (i < 0) continue;
    const raw = g5(line.y[i]);
    const smoothed = line.sy ? g5(line.sy[Math.max(0, indexAt(line.sx, x))]) : null;
    let text;
    if (line.band) {
      const b = line.band[i], stat = state.groupStat === "iqm" ? "IQM" : "mean";
      const band = `n=${b.n}, 95%: ${g5(b.low)}..${g5(b.high)}`;
      text = smoothed ? `smoothed ${smoothed} (${stat} ${raw}, ${band})` : `${stat} ${raw} (${band})`;
    } else {
      text = smoothed ? `${smoothed} (raw ${raw})` : raw;
    }
    rows.push(`<div><i style="background:${line.color}"></i>${esc(line.run)} <b>${text}</b></div>`);
    for (const m of line.marks) {
      if (Math.abs(m[0] - x) <= near) {
        rows.push(`<div class="nonfinite">${esc(line.run)}: ${kind(m[1])} at step ${m[2][0]}</div>`);
      }
    }
  }
  return rows.join("");
}

// The chart's plot area on screen and its x axis, or null when not drawn.
function plotArea(chart) {
  const L = chart.plotted && !chart.drawing && chart.plot._fullLayout;
  if (!L || !L.xaxis || !L._size) return null;
  const r = chart.plot.getBoundingClientRect();
  return { xa: L.xaxis, left: r.left + L._size.l, top: r.top + L._size.t, w: L._size.w, h: L._size.h };
}

// An x in the page's units (seconds for time) from a pixel in the plot area, and back.
const pixelToX = (a, px) => fromPlotX(a.xa.p2l(px));
const xToPixel = (a, x) => a.xa.l2p(plotX(x));

let cursor = null, cursorFrame = 0;
const cursorShown = new Set();

function hideCursor(chart) {
  chart.cursorLine.hidden = true;
  chart.readout.hidden = true;
  cursorShown.delete(chart);
}

// Draws the cursor wanted (`cursor`: the chart under the pointer, its x and the pointer's
// place) on that chart and every other chart in view; hides it elsewhere.
function showCursor() {
  cursorFrame = 0;
  const want = new Set();
  // The page's sticky header covers what scrolls under it: readouts stay below it.
  const below = document.querySelector("header").getBoundingClientRect().bottom + 4;
  if (cursor) {
    for (const chart of state.charts.values()) {
      if (!chart.visible) continue;
      const a = plotArea(chart);
      if (!a || a.top + a.h < 0 || a.top > window.innerHeight) continue;
      const px = xToPixel(a, cursor.x);
      if (!(px >= 0 && px <= a.w)) continue;
      const own = chart === cursor.chart;
      const near = Math.abs(pixelToX(a, px + 3) - cursor.x);
      const box = chart.readout, line = chart.cursorLine;
      const elRect = chart.el.getBoundingClientRect();
      line.style.left = `${a.left - elRect.left + px}px`;
      line.style.top = `${a.top - elRect.top}px`;
      line.style.height = `${a.h}px`;
      line.hidden = false;
      box.innerHTML = readout(chart, cursor.x, near);
      box.classList.toggle("compact", !own);
      box.hidden = false;
      // Beside the pointer (on another chart: at its line's top), flipped to the left of the
      // line and moved up when it would run off the window.
      const cx = a.left + px, cy = own ? cursor.y : Math.max(a.top, below);
      const bw = box.offsetWidth, bh = box.offsetHeight;
      let left = cx + 12;
      if (left + bw > window.innerWidth - 4) left = cx - 12 - bw;
      left = Math.max(4, Math.min(left, window.innerWidth - 4 - bw));
      const top = Math.max(below, Math.min(cy + 12, window.innerHeight - 4 - bh));
      // Another chart's readout only where its plot area shows.
      if (!own && top + bh > a.top + a.h) box.hidden = true;
      box.style.left = `${left}px`;
      box.style.top = `${top}px`;
      want.add(chart);
      cursorShown.add(chart);
    }
  }
  for (const chart of [...cursorShown]) if (!want.has(chart)) hideCursor(chart);
}

function moveCursor(value) {
  cursor = value;
  if (!cursorFrame) cursorFrame = requestAnimationFrame(showCursor);
}

// The pointer over a chart's plot area sets the cursor; off it (or scrolling), none.
function followPointer(chart) {
  chart.plot.addEventListener("mousemove", ev => {
    const a = plotArea(chart);
    const px = a && ev.clientX - a.left, py = a && ev.clientY - a.top;
    if (!a || px < 0 || px > a.w || py < 0 || py > a.h || !chart.lines.length) {
      if (cursor) moveCursor(null);
      return;
    }
    moveCursor({ chart, x: pixelToX(a, px), y: ev.clientY });
  });
  chart.plot.addEventListener("mouseleave", () => moveCursor(null));
}
window.addEventListener("scroll", () => { if (cursor) moveCursor(null); }, { passive: true });

// The chart's own events: a zoom asks the server for the window again (bucketed anew, down to
// single raw points).
function hook(chart) {
  const gd = chart.plot;
  gd.on("plotly_relayout", ev => {
    if (chart.drawing) return;
    if (ev["xaxis.range[0]"] !== undefined || Array.isArray(ev["xaxis.range"])) {
      const r = ev["xaxis.range"] || [ev["xaxis.range[0]"], ev["xaxis.range[1]"]];
      chart.zoom = r.map(fromPlotX);
    } else if (ev["xaxis.autorange"]) {
      chart.zoom = null;
    } else {
      return;
    }
    if (chart.zoom) state.zooms[chart.tag] = chart.zoom; else delete state.zooms[chart.tag];
    saveUrl();
    if (state.groupBy) return;
    loadChart(chart, [...chart.series.keys()]);
  });
}

function fmt(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

// ---- controls ----

function redrawAll() {
  for (const chart of state.charts.values()) if (chart.plotted) draw(chart);
}

// Charts whose series depend on the view: fetched again when in view.
function refetchAll() {
  for (const chart of state.charts.values()) {
    chart.series.clear();
    for (const r of chart.runs || []) chart.dirty.add(r);
    if (chart.visible) update(chart);
  }
}

document.getElementById("run-filter").oninput = ev => {
  state.runFilter = ev.target.value.trim();
  saveUrl();
  renderRuns();
  refreshCharts(new Set());
};
document.getElementById("select-all").onclick = () => {
  for (const n of state.order) if (!state.runs.get(n)?.error) state.selected.add(n);
  selectionChanged();
};
document.getElementById("select-none").onclick = () => { state.selected.clear(); selectionChanged(); };
document.getElementById("select-matching").onclick = () => {
  state.selected = new Set(state.order.filter(n => passes(n) && !state.runs.get(n)?.error));
  selectionChanged();
};
document.getElementById("table-tags").onchange = ev => {
  state.tableTags = ev.target.value.trim();
  // Every row again, with the new tags' figures (the flat rows drop the rest).
  state.generation = 0;
};
document.getElementById("tag-filter").oninput = ev => {
  state.tagFilter = ev.target.value;
  saveUrl();
  refreshCharts(new Set());
};
document.getElementById("x-axis").onchange = ev => {
  state.x = ev.target.value;
  state.zooms = {};
  for (const chart of state.charts.values()) chart.zoom = null;
  saveUrl();
  refetchAll();
};
document.getElementById("group-by").onchange = ev => {
  state.groupBy = ev.target.value.trim();
  if (state.groupBy) document.getElementById("x-axis").value = state.x = "step";
  state.zooms = {};
  for (const chart of state.charts.values()) { chart.zoom = null; chart.groups = null; }
  saveUrl();
  refetchAll();
};
document.getElementById("group-stat").onchange = ev => {
  state.groupStat = ev.target.value;
  saveUrl();
  redrawAll();
};
document.getElementById("log-y").onchange = ev => {
  state.logY = ev.target.checked;
  saveUrl();
  redrawAll();
};
let smoothTimer = null;
document.getElementById("smoothing").oninput = ev => {
  state.smoothing = Number(ev.target.value);
  document.getElementById("smoothing-value").textContent = state.smoothing.toFixed(2);
  saveUrl();
  // Drawn at once from what is held (smoothed here), then asked again for the server's.
  redrawAll();
  clearTimeout(smoothTimer);
  smoothTimer = setTimeout(refetchAll, 300);
};
document.getElementById("chart-size").onchange = ev => {
  state.size = ev.target.value;
  document.getElementById("charts").dataset.size = state.size;
  saveUrl();
};
document.getElementById("theme").onchange = ev => {
  state.theme = ev.target.value;
  saveUrl();
  applyTheme();
};
window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
  if (state.theme === "auto") applyTheme();
});

readUrl();
applyTheme();
pollRuns();
