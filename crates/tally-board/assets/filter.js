// Which runs are shown: the run filter and the selection, for the table and the charts alike.
"use strict";

// A configuration column's short name: tally's run_config.json nests a writer's config under
// "config", so "config.config.lr" reads "lr".
function configLabel(key) {
  return key.replace(/^config\.(config\.)?/, "");
}

// "filter runs": each word a regular expression on the run's name (a plain word is one too),
// `key=value` a configuration value; a run must match every word. The filter restricts the
// charts as well as the table.
function matches(name, row, filter) {
  for (const word of filter.split(/\s+/).filter(Boolean)) {
    const eq = word.indexOf("=");
    if (eq > 0 && /^[\w.]+$/.test(word.slice(0, eq))) {
      const key = word.slice(0, eq), want = word.slice(eq + 1).toLowerCase();
      const hit = row && Object.keys(row).some(k => k.startsWith("config.")
        && (k === key || configLabel(k) === configLabel(key))
        && String(row[k]).toLowerCase() === want);
      if (!hit) return false;
    } else {
      let re;
      try { re = new RegExp(word, "i"); } catch (e) { re = null; }
      if (re ? !re.test(name) : !name.toLowerCase().includes(word.toLowerCase())) return false;
    }
  }
  return true;
}

function filterError() {
  for (const word of state.runFilter.split(/\s+/).filter(Boolean)) {
    if (word.indexOf("=") > 0) continue;
    try { new RegExp(word); } catch (e) { return e.message; }
  }
  return "";
}

function passes(name) { return matches(name, state.runs.get(name), state.runFilter); }

// The runs the charts draw: selected, and passing the filter.
function shownRuns() { return state.order.filter(n => state.selected.has(n) && passes(n)); }
