// A chart drawn: each run's line (and smoothed line), so every spike shows; NaN and infinities
// marked, never dropped. A chart in group mode draws its groups (groups.js).
"use strict";

const NONFINITE = "#d00000";

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
