// The runs table: its columns (the run's own, its configuration's, the figures of "table
// tags"), sorting, selection and each run's colour.
"use strict";

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

function cell(row, key) {
  const v = row[key];
  if (key === "duration") return duration(v);
  // The default health rules' findings (the runs table's `health`), or ok when none fired.
  if (key === "findings") return v == null ? "" : v === 0 ? "ok" : row.health;
  if (typeof v === "number" && !Number.isInteger(v)) return fmt(v);
  return v == null ? "" : String(v);
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
