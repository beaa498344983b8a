// What the user chose (tags, runs, smoothing, x axis, zooms, group-by, ...) kept in the URL's
// fragment, so a view can be shared and survives a reload.
"use strict";

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
