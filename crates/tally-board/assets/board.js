// tally board's page: the runs table, and one chart per tag overlaying the selected runs
// (one run's own views are run.js's).
// Every series comes from /api/scalars already reduced to the chart's width with each bucket's
// first, last, lowest and highest point (docs/contract/board.md "Every point drawn"), so the
// line drawn through them shows every spike; NaN and infinities are marked, never dropped.
"use strict";

const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
  "#7f7f7f", "#bcbd22", "#17becf"];
const CHART_W = 460, CHART_H = 240, PAD = { l: 56, r: 10, t: 8, b: 24 };
const POLL_MS = 2000;

const state = {
  token: new URLSearchParams(location.search).get("token"),
  generation: 0,
  looked: false,         // the first answer selects the first runs
  runs: new Map(),       // name -> row
  order: [],             // names in table order
  selected: new Set(),
  colors: new Map(),     // name -> color
  runTags: new Map(),    // name -> [tag]
  charts: new Map(),     // tag -> chart
  x: "step",
  logY: false,
  smoothing: 0.6,
  groupBy: "",           // configuration keys, comma-separated: charts show groups' bands
  groupStat: "mean",     // a group's line: "mean" or "iqm", each over its own band
  tableTags: "",         // tag globs, comma-separated: their last, min and max in the table
  sort: { key: null, dir: 1 },
  focus: null,           // the run whose own views are open (run.js)
  pending: 0,            // runs listed, not read yet
};

async function api(path, params) {
  const q = new URLSearchParams(params || {});
  if (state.token) q.set("token", state.token);
  const res = await fetch(`/api/${path}?${q}`);
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
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
      // The first look: the first runs are selected, as TensorBoard shows every run.
      for (const name of state.order.slice(0, 10)) {
        if (!state.runs.get(name).error) state.selected.add(name);
      }
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
  if (!state.colors.has(name)) state.colors.set(name, COLORS[state.colors.size % COLORS.length]);
  return state.colors.get(name);
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

// "filter runs": words match the run's name; `key=value` matches a configuration value.
function matches(name, row, filter) {
  for (const word of filter.split(/\s+/).filter(Boolean)) {
    const eq = word.indexOf("=");
    if (eq > 0) {
      const key = word.slice(0, eq), want = word.slice(eq + 1);
      const hit = Object.keys(row).some(k => k.startsWith("config.")
        && (k === key || configLabel(k) === configLabel(key))
        && String(row[k]).toLowerCase() === want);
      if (!hit) return false;
    } else if (!name.toLowerCase().includes(word)) {
      return false;
    }
  }
  return true;
}

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

function renderRuns() {
  const filter = document.getElementById("run-filter").value.toLowerCase();
  const cols = columns();
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
  for (const name of sortedNames()) {
    const row = state.runs.get(name);
    if (!row || (filter && !matches(name, row, filter))) continue;
    const tr = document.createElement("tr");
    tr.dataset.run = name;
    if (row.error) tr.className = "error";
    const box = document.createElement("input");
    box.type = "checkbox";
    box.checked = state.selected.has(name);
    box.disabled = !!row.error;
    box.onchange = () => {
      if (box.checked) state.selected.add(name); else state.selected.delete(name);
      renderRuns();
      refreshCharts(new Set());
    };
    const td0 = document.createElement("td");
    td0.append(box);
    const tdName = document.createElement("td");
    tdName.className = "name";
    tdName.title = name;
    tdName.textContent = name;
    tdName.onclick = () => showRun(name);
    if (state.selected.has(name)) tdName.style.borderLeft = `4px solid ${colorOf(name)}`;
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
}

// ---- charts ----

async function refreshCharts(grown) {
  const selected = [...state.selected];
  for (const name of selected) {
    if (!state.runTags.has(name) || grown.has(name)) {
      try {
        const body = await api("tags", { run: name });
        state.runTags.set(name, body.tags.map(t => t.tag));
      } catch (e) { state.runTags.set(name, []); }
    }
  }
  const tags = new Set();
  for (const name of selected) for (const t of state.runTags.get(name) || []) tags.add(t);
  let re = null;
  try { re = new RegExp(document.getElementById("tag-filter").value, "i"); } catch (e) { re = null; }
  const shown = [...tags].filter(t => !re || re.test(t)).sort();
  layoutCharts(shown);
  await Promise.all(shown.map(tag => {
    const chart = state.charts.get(tag);
    const has = selected.filter(r => (state.runTags.get(r) || []).includes(tag));
    const stale = has.filter(r => !chart.series.has(r) || grown.has(r));
    for (const r of [...chart.series.keys()]) if (!has.includes(r)) chart.series.delete(r);
    return loadChart(chart, stale);
  }));
}

function layoutCharts(tags) {
  const root = document.getElementById("charts");
  const groups = new Map();
  for (const tag of tags) {
    const group = tag.includes("/") ? tag.slice(0, tag.indexOf("/")) : "(no prefix)";
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(tag);
  }
  for (const [tag, chart] of state.charts) if (!tags.includes(tag)) {
    chart.el.remove(); state.charts.delete(tag);
  }
  for (const [group, members] of groups) {
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
    for (const tag of members) if (!state.charts.has(tag)) state.charts.set(tag, newChart(tag, grid));
  }
  for (const d of root.querySelectorAll("details")) {
    if (!d.querySelector(".chart")) d.remove();
  }
}

function newChart(tag, grid) {
  const el = document.createElement("div");
  el.className = "chart";
  el.dataset.tag = tag;
  const title = document.createElement("div");
  title.className = "title";
  title.textContent = tag;
  const canvas = document.createElement("canvas");
  const dpr = window.devicePixelRatio || 1;
  canvas.width = CHART_W * dpr; canvas.height = CHART_H * dpr;
  canvas.style.width = `${CHART_W}px`; canvas.style.height = `${CHART_H}px`;
  el.append(title, canvas);
  grid.append(el);
  const chart = { tag, el, canvas, series: new Map(), zoom: null, drag: null, frame: null };
  canvas.addEventListener("mousedown", ev => { chart.drag = { from: ev.offsetX, to: ev.offsetX }; });
  canvas.addEventListener("mousemove", ev => {
    if (chart.drag) { chart.drag.to = ev.offsetX; draw(chart); } else hover(chart, ev);
  });
  canvas.addEventListener("mouseleave", () => { document.getElementById("tooltip").hidden = true; });
  canvas.addEventListener("mouseup", () => {
    const d = chart.drag; chart.drag = null;
    if (!d || Math.abs(d.to - d.from) < 4 || !chart.frame) { draw(chart); return; }
    const f = chart.frame;
    const a = f.xOf(Math.min(d.from, d.to)), b = f.xOf(Math.max(d.from, d.to));
    chart.zoom = [a, b];
    loadChart(chart, [...chart.series.keys()]);
  });
  canvas.addEventListener("dblclick", () => { chart.zoom = null; loadChart(chart, [...chart.series.keys()]); });
  return chart;
}

// The x a request asks for: relative time is wall time less the run's start.
function axisParam() { return state.x === "step" ? "step" : "wall"; }
function offsetOf(run) {
  return state.x === "relative" ? (state.runs.get(run)?.start || 0) : 0;
}

// What a chart's request depends on: an answer asked under another view is dropped, since the
// change of view started its own request.
function viewOf(chart) { return JSON.stringify([state.x, state.groupBy, chart.zoom]); }

async function loadChart(chart, runs) {
  const view = viewOf(chart);
  if (state.groupBy) {
    // Groups are over every run under the board's paths, on aligned steps.
    let groups = [], absent = [];
    try {
      const body = await api("groups", { tag: chart.tag, by: state.groupBy, width: CHART_W - PAD.l - PAD.r });
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
    try { body = await fetchSeries(chart, run); } catch (e) { body = null; }
    if (view !== viewOf(chart)) return;
    if (body) chart.series.set(run, body); else chart.series.delete(run);
  }));
  if (view === viewOf(chart)) draw(chart);
}

// A run's series for a chart. A run that grew under an unzoomed chart is asked for its newest
// buckets only, from its last bucket on at the bucket span already drawn, and they replace
// that bucket (docs/contract/board.md "Live runs"); once the series has grown to twice the
// chart's buckets it is asked for whole again, so buckets stay about a pixel wide.
async function fetchSeries(chart, run) {
  const width = CHART_W - PAD.l - PAD.r;
  const params = { run, tag: chart.tag, width, x: axisParam() };
  if (chart.zoom) {
    params.start = chart.zoom[0] + offsetOf(run);
    params.end = chart.zoom[1] + offsetOf(run);
    return api("scalars", params);
  }
  const old = chart.series.get(run);
  if (old && old.x === params.x && old.span > 0 && old.buckets.length) {
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
      return { ...fresh, start: old.start, span: old.span, buckets, points };
    }
  }
  const whole = await api("scalars", params);
  whole.span = (whole.end - whole.start) / width;
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

// A bucket's points in x order: the line through them keeps the bucket's extremes.
function bucketPoints(b) {
  const pts = [b.first, b.min, b.max, b.last].filter(Boolean);
  const k = state.x === "step" ? 0 : 1;
  pts.sort((p, q) => p[k] - q[k]);
  // One point may be several of first, min, max and last: drawn (and smoothed) once.
  const same = (p, q) => p[0] === q[0] && p[1] === q[1] && String(p[2]) === String(q[2]);
  return pts.filter((p, i) => !pts.slice(0, i).some(q => same(p, q)));
}

// TensorBoard's smoothing: an exponential moving average, debiased for its start.
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

function draw(chart) {
  const ctx = chart.canvas.getContext("2d");
  const dpr = window.devicePixelRatio || 1;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, CHART_W, CHART_H);
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  const lines = [];
  if (chart.groups) return drawGroups(chart, ctx);
  for (const [run, s] of chart.series) {
    const pts = s.buckets.flatMap(bucketPoints).map(p => [xOfPoint(p, run), num(p[2]), p]);
    const marks = s.buckets.flatMap(b => b.nonfinite).map(p => [xOfPoint(p, run), num(p[2]), p]);
    for (const [x, y] of pts) {
      x0 = Math.min(x0, x); x1 = Math.max(x1, x);
      if (Number.isFinite(y) && (!state.logY || y > 0)) { y0 = Math.min(y0, y); y1 = Math.max(y1, y); }
    }
    lines.push({ run, pts, marks, total: s.total });
  }
  if (chart.zoom) { [x0, x1] = chart.zoom; }
  if (!lines.length || !Number.isFinite(x0)) { chart.frame = null; return; }
  if (!Number.isFinite(y0)) { y0 = 0; y1 = 1; }
  if (x1 === x0) { x1 = x0 + 1; }
  if (y1 === y0) { y0 -= 0.5; y1 += 0.5; }
  const ty = v => state.logY ? Math.log10(v) : v;
  const [ly0, ly1] = [ty(y0), ty(y1)];
  const W = CHART_W - PAD.l - PAD.r, H = CHART_H - PAD.t - PAD.b;
  const px = x => PAD.l + (x - x0) / (x1 - x0) * W;
  const py = y => PAD.t + H - (ty(y) - ly0) / (ly1 - ly0) * H;
  chart.frame = { px, py, xOf: p => x0 + (p - PAD.l) / W * (x1 - x0), lines };
  axes(ctx, x0, x1, y0, y1, px, py);
  ctx.save();
  ctx.beginPath(); ctx.rect(PAD.l, PAD.t, W, H); ctx.clip();
  for (const line of lines) {
    const color = colorOf(line.run);
    const ys = line.pts.map(p => p[1]);
    const smoothed = smooth(ys, state.smoothing);
    if (state.smoothing > 0) {
      path(ctx, line.pts.map((p, i) => [p[0], ys[i]]), px, py, color, 0.3);
      path(ctx, line.pts.map((p, i) => [p[0], smoothed[i]]), px, py, color, 1);
    } else {
      path(ctx, line.pts.map(p => [p[0], p[1]]), px, py, color, 1);
    }
    // NaN at the top edge as an ×, infinities as triangles at the edge they run off.
    ctx.fillStyle = ctx.strokeStyle = "#d00";
    for (const [x, y] of line.marks) {
      const X = px(x);
      if (Number.isNaN(y)) {
        ctx.beginPath();
        ctx.moveTo(X - 4, PAD.t + 1); ctx.lineTo(X + 4, PAD.t + 9);
        ctx.moveTo(X + 4, PAD.t + 1); ctx.lineTo(X - 4, PAD.t + 9);
        ctx.lineWidth = 1.5; ctx.stroke();
      } else {
        const Y = y > 0 ? PAD.t + 1 : PAD.t + H - 1, d = y > 0 ? 8 : -8;
        ctx.beginPath(); ctx.moveTo(X, Y); ctx.lineTo(X - 4, Y + d); ctx.lineTo(X + 4, Y + d);
        ctx.fill();
      }
    }
  }
  ctx.restore();
  if (chart.drag) {
    ctx.fillStyle = "rgba(0,0,255,0.1)";
    const a = Math.min(chart.drag.from, chart.drag.to), b = Math.max(chart.drag.from, chart.drag.to);
    ctx.fillRect(a, PAD.t, b - a, H);
  }
  chart.el.dataset.points = lines.map(l => l.total).join(",");
}

// A curve point's figure the page shows: [value, low, high] of the mean or of the IQM.
function groupFigure(p) {
  return state.groupStat === "iqm" ? [p.iqm, p.iqm_low, p.iqm_high] : [p.mean, p.low, p.high];
}

// Each group's mean (or IQM) as a line over its 95 % bootstrap band.
function drawGroups(chart, ctx) {
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  const groups = chart.groups.filter(g => g.curve.length).map(g => ({
    ...g, curve: g.curve.map(p => { const [mean, low, high] = groupFigure(p); return { step: p.step, n: p.n, mean, low, high }; }),
  }));
  for (const g of groups) for (const p of g.curve) {
    x0 = Math.min(x0, p.step); x1 = Math.max(x1, p.step);
    for (const v of [p.low, p.high, p.mean]) {
      if (Number.isFinite(v) && (!state.logY || v > 0)) { y0 = Math.min(y0, v); y1 = Math.max(y1, v); }
    }
  }
  if (!groups.length || !Number.isFinite(y0)) { chart.frame = null; chart.el.dataset.groups = "0"; return; }
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) { y0 -= 0.5; y1 += 0.5; }
  const ty = v => state.logY ? Math.log10(v) : v;
  const W = CHART_W - PAD.l - PAD.r, H = CHART_H - PAD.t - PAD.b;
  const px = x => PAD.l + (x - x0) / (x1 - x0) * W;
  const py = y => PAD.t + H - (ty(y) - ty(y0)) / (ty(y1) - ty(y0)) * H;
  const lines = groups.map((g, i) => ({
    run: Object.entries(g.key).map(([k, v]) => `${k}=${v}`).join(" ") + ` (n=${g.n})`,
    color: COLORS[i % COLORS.length],
    pts: g.curve.map(p => [p.step, p.mean, [p.step, null, p.mean, p.low, p.high, p.n]]),
    marks: [],
    band: g.curve,
  }));
  chart.frame = { px, py, xOf: p => x0 + (p - PAD.l) / W * (x1 - x0), lines };
  axes(ctx, x0, x1, y0, y1, px, py);
  for (const line of lines) {
    ctx.fillStyle = line.color; ctx.globalAlpha = 0.2;
    ctx.beginPath();
    line.band.forEach((p, i) => i ? ctx.lineTo(px(p.step), py(p.high)) : ctx.moveTo(px(p.step), py(p.high)));
    [...line.band].reverse().forEach(p => ctx.lineTo(px(p.step), py(p.low)));
    ctx.closePath(); ctx.fill(); ctx.globalAlpha = 1;
    path(ctx, line.pts.map(p => [p[0], p[1]]), px, py, line.color, 1);
  }
  chart.el.dataset.groups = String(lines.length);
}

function path(ctx, pts, px, py, color, alpha) {
  ctx.strokeStyle = color; ctx.globalAlpha = alpha; ctx.lineWidth = 1.25;
  ctx.beginPath();
  let pen = false;
  for (const [x, y] of pts) {
    if (!Number.isFinite(y) || (state.logY && y <= 0)) { pen = false; continue; }
    if (pen) ctx.lineTo(px(x), py(y)); else ctx.moveTo(px(x), py(y));
    pen = true;
  }
  ctx.stroke();
  ctx.globalAlpha = 1;
}

function fmt(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

function axes(ctx, x0, x1, y0, y1, px, py) {
  ctx.strokeStyle = "#ccc"; ctx.fillStyle = "#555"; ctx.lineWidth = 1;
  ctx.font = "10px sans-serif";
  const W = CHART_W - PAD.l - PAD.r, H = CHART_H - PAD.t - PAD.b;
  ctx.strokeRect(PAD.l, PAD.t, W, H);
  for (let i = 0; i <= 4; i++) {
    const y = state.logY ? Math.pow(10, Math.log10(y0) + (Math.log10(y1) - Math.log10(y0)) * i / 4)
      : y0 + (y1 - y0) * i / 4;
    const Y = py(y);
    ctx.fillText(fmt(y), 2, Y + 3);
    const x = x0 + (x1 - x0) * i / 4;
    const label = state.x === "wall" ? new Date(x * 1000).toLocaleTimeString()
      : state.x === "relative" ? duration(x) : fmt(x);
    ctx.fillText(label, Math.min(px(x) - 10, CHART_W - 50), CHART_H - 8);
  }
}

function hover(chart, ev) {
  const tip = document.getElementById("tooltip");
  const f = chart.frame;
  if (!f) { tip.hidden = true; return; }
  let best = null;
  for (const line of f.lines) {
    for (const [x, y, raw] of [...line.pts, ...line.marks]) {
      const X = f.px(x);
      const Y = Number.isFinite(y) ? f.py(y) : ev.offsetY;
      const d = Math.hypot(X - ev.offsetX, (Y - ev.offsetY) * 0.3);
      if (!best || d < best.d) best = { d, run: line.run, raw };
    }
  }
  if (!best) { tip.hidden = true; return; }
  const [step, wall, value, low, high, n] = best.raw;
  tip.textContent = wall === null
    ? `${best.run}\nstep  ${step}\n${state.groupStat === "iqm" ? "IQM " : "mean"}  ${fmt(value)} (n=${n})\n95%   ${fmt(low)} .. ${fmt(high)}`
    : `${best.run}\nstep  ${step}\nvalue ${value}\nwall  ${new Date(wall * 1000).toISOString()}`;
  tip.style.left = `${ev.clientX + 12}px`;
  tip.style.top = `${ev.clientY + 12}px`;
  tip.hidden = false;
}

// ---- controls ----

document.getElementById("run-filter").oninput = renderRuns;
document.getElementById("table-tags").onchange = ev => {
  state.tableTags = ev.target.value.trim();
  // Every row again, with the new tags' figures (the flat rows drop the rest).
  state.generation = 0;
};
document.getElementById("tag-filter").oninput = () => refreshCharts(new Set());
document.getElementById("x-axis").onchange = ev => {
  state.x = ev.target.value;
  for (const chart of state.charts.values()) { chart.zoom = null; chart.series.clear(); }
  refreshCharts(new Set());
};
document.getElementById("group-by").onchange = ev => {
  state.groupBy = ev.target.value.trim();
  if (state.groupBy) document.getElementById("x-axis").value = state.x = "step";
  for (const chart of state.charts.values()) { chart.zoom = null; loadChart(chart, [...chart.series.keys()]); }
};
document.getElementById("group-stat").onchange = ev => {
  state.groupStat = ev.target.value;
  for (const chart of state.charts.values()) draw(chart);
};
document.getElementById("log-y").onchange = ev => {
  state.logY = ev.target.checked;
  for (const chart of state.charts.values()) draw(chart);
};
document.getElementById("smoothing").oninput = ev => {
  state.smoothing = Number(ev.target.value);
  document.getElementById("smoothing-value").textContent = state.smoothing.toFixed(2);
  for (const chart of state.charts.values()) draw(chart);
};

pollRuns();
