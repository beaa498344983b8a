// A run's series for a chart: its x (step, wall or relative time), its buckets as fetched from
// /api/scalars, already reduced to the chart's width with each bucket's first, last, lowest
// and highest point (docs/contract/board.md "Every point drawn"), and the line drawn through
// them, smoothed.
"use strict";

// The x a request asks for: relative time is wall time less the run's start.
function axisParam() { return state.x === "step" ? "step" : "wall"; }
function offsetOf(run) {
  return state.x === "relative" ? (state.runs.get(run)?.start || 0) : 0;
}

// A run's series for a chart. A run that grew under an unzoomed chart is asked for its newest
// buckets only, from its last bucket on at the bucket span already drawn, and they replace
// that bucket (docs/contract/board.md "Live runs"); once the series has grown to twice the
// chart's buckets it is asked for whole again, so buckets stay about a pixel wide.
async function fetchSeries(chart, run, width) {
  const params = { run, tag: chart.tag, width, x: axisParam() };
  if (state.smoothing > 0) params.smoothing = state.smoothing;
  if (chart.zoom) {
    params.start = chart.zoom[0] + offsetOf(run);
    params.end = chart.zoom[1] + offsetOf(run);
    return api("scalars", params);
  }
  const old = chart.series.get(run);
  if (old && old.x === params.x && old.span > 0 && old.buckets.length && !old.zoomed
      && old.smoothing === state.smoothing) {
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
      return { ...fresh, start: old.start, span: old.span, buckets, points, smoothing: old.smoothing };
    }
  }
  const whole = await api("scalars", params);
  whole.span = (whole.end - whole.start) / width;
  whole.smoothing = state.smoothing;
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
// plotly's date axis takes milliseconds.
function plotX(x) { return state.x === "wall" ? x * 1000 : x; }
function fromPlotX(v) {
  if (state.x !== "wall") return Number(v);
  const t = typeof v === "number" ? v : Date.parse(String(v).replace(" ", "T") + "Z");
  return t / 1000;
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

// TensorBoard's smoothing: an exponential moving average, debiased for its start. Used only
// when the server did not send each bucket's own (`smoothed`, over every raw point).
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

// A run's line: its raw points (every bucket's extremes, x order) and its smoothed line, from
// the server's per-bucket `smoothed` when it sent one, else smoothed here.
function runLine(run, s) {
  const pts = s.buckets.flatMap(bucketPoints);
  const x = pts.map(p => xOfPoint(p, run)), y = pts.map(p => num(p[2]));
  let sx = x, sy = null;
  if (state.smoothing > 0) {
    if (s.buckets.length && s.buckets.every(b => b.smoothed !== undefined)) {
      sx = s.buckets.map(b => xOfPoint(b.last, run));
      sy = s.buckets.map(b => b.smoothed === null ? NaN : num(b.smoothed));
    } else {
      sy = smooth(y, state.smoothing);
    }
  }
  const marks = s.buckets.flatMap(b => b.nonfinite).map(p => [xOfPoint(p, run), num(p[2]), p]);
  return { run, color: colorOf(run), x, y, sx, sy, marks, total: s.total };
}
