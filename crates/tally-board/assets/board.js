// tally board's page, started: the runs polled, the header's controls, and the first draw.
// The page is the scripts index.html loads in order, each using only what the ones before it
// define (crates/tally-board/tests/page_scripts.rs checks it).
"use strict";

const POLL_MS = 2000;

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

function applyTheme() {
  document.documentElement.dataset.theme = dark() ? "dark" : "light";
  for (const chart of state.charts.values()) if (chart.plotted) draw(chart);
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
