// The page's state (what the user chose, the runs and charts held) and the one way it asks the
// board (api): the first of the page's scripts, which index.html loads in order, each using
// only what the ones before it define.
"use strict";

// Twenty distinct colours (Tableau 10, then its lighter half): a run's colour is its place in
// the board's run order, so it stays the same across reloads; a user's own choice overrides it.
const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
  "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
  "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"];

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

function colorOf(name) {
  if (state.colors.has(name)) return state.colors.get(name);
  const i = state.order.indexOf(name);
  return COLORS[(i < 0 ? state.order.length : i) % COLORS.length];
}
