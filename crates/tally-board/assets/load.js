// What a chart fetches and when: its runs' series (or its groups) for the current view, again
// on a zoom, and redrawn from what it holds when only the drawing changes.
"use strict";

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
    const { groups, absent } = await fetchGroups(chart, width);
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

// The chart's own plotly events, hooked by plot() after a first draw (charts.js names this
// as each chart's `hook`): a zoom asks the server for the window again (bucketed anew, down to
// single raw points).
function followZoom(chart) {
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
