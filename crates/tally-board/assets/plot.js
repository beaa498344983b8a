// plotly.js, as every chart uses it: the layout (in the theme's colours) and the one call that
// draws. plotly.js is served by the board itself from the `plotly` crate's embedded copy
// (crates/tally-board/src/assets.rs).
"use strict";

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
    // its own cursor (cursor.js).
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

function plot(chart, traces, layout) {
  layout.height = Math.max(160, chart.plot.clientHeight || 300);
  chart.drawing = true;
  chart.plotted = true;
  chart.stale = false;
  Plotly.react(chart.plot, traces, layout, PLOT_CONFIG).then(() => {
    chart.drawing = false;
    if (!chart.hooked) { chart.hooked = true; chart.hook(chart); }
    chart.el.dataset.drawn = String((Number(chart.el.dataset.drawn) || 0) + 1);
  });
}
