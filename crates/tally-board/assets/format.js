// How the page writes numbers, non-finite values and durations.
"use strict";

function duration(secs) {
  if (secs == null) return "";
  const s = Math.floor(secs);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s % 3600 / 60)).padStart(2, "0")}m`;
}

// A non-finite value's name, as the marks and the readout say it.
function kind(v) { return Number.isNaN(v) ? "NaN" : v > 0 ? "+inf" : "-inf"; }

const g5 = v => Number.isFinite(v) ? String(Number(v.toPrecision(5))) : kind(v);

function fmt(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}
