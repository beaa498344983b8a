// Group mode: runs grouped by configuration keys, each group's mean (or IQM) and its band, as
// /api/groups computes them over every run on aligned steps.
"use strict";

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

// A chart's groups and the group-by keys no run has. Groups are over every run under the
// board's paths, on aligned steps.
async function fetchGroups(chart, width) {
  try {
    const params = { tag: chart.tag, by: state.groupBy, width };
    if (state.smoothing > 0) params.smoothing = state.smoothing;
    const body = await api("groups", params);
    return { groups: body.groups, absent: body.absent || [] };
  } catch (e) { return { groups: [], absent: [] }; }
}
