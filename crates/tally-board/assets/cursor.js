// The cursor: a vertical line and a readout of every line's value at its x. plotly's hover is
// off (plot.js): the page converts the pointer's pixel to x with the axis' own conversion,
// finds each line's point at or before it by bisection, and shows the line and readout on this
// chart and, at the same x, on every other chart in view, once a frame.
"use strict";

// The index of the last of `xs` (ascending) not past x; -1 when x is before the first.
function indexAt(xs, x) {
  let lo = 0, hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] <= x) lo = mid + 1; else hi = mid;
  }
  return lo - 1;
}



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
