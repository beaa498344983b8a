// One run's own views, opened by clicking its name in the runs table (docs/contract/board.md
// "One run's views"): its summary, the health rules' findings, the bottleneck reading `tally
// diagnose` gives, its learner and collector timelines as stacked shares over its steps, and
// its media (media.js).
"use strict";

const SHARE_W = 460, SHARE_H = 160, SHARE_PAD = { l: 40, r: 10, t: 8, b: 20 };

async function showRun(name) {
  state.focus = name;
  const view = document.getElementById("run-view");
  view.hidden = false;
  view.querySelector(".name").textContent = name;
  let run, media;
  try {
    [run, media] = await Promise.all([
      api("run", { run: name, width: SHARE_W - SHARE_PAD.l - SHARE_PAD.r }),
      api("media", { run: name }),
    ]);
  } catch (e) {
    if (state.focus === name) view.querySelector(".body").textContent = e.message;
    return;
  }
  if (state.focus !== name) return;
  const body = view.querySelector(".body");
  body.replaceChildren(summaryPart(run), healthPart(run), bottleneckPart(run), timelinesPart(run), mediaPart(name, media));
  view.dataset.run = name;
}

function closeRun() {
  state.focus = null;
  const view = document.getElementById("run-view");
  view.hidden = true;
  delete view.dataset.run;
}

// The summary's first plain fields; the rest in a collapsed block.
const SUMMARY_SHOWN = 10;
function summaryPart(run) {
  const s = run.summary;
  if (!s) return part("Summary", "summary", el("p", { className: "muted" }, "no run_summary.json"));
  const list = el("dl");
  const rest = {};
  for (const [k, v] of Object.entries(s)) {
    if (v === null || typeof v === "object" || list.children.length >= 2 * SUMMARY_SHOWN) { rest[k] = v; continue; }
    list.append(el("dt", {}, k), el("dd", {}, typeof v === "number" && !Number.isInteger(v) ? fmt(v) : String(v)));
  }
  const more = el("details", {}, el("summary", {}, "everything else"), el("pre", {}, JSON.stringify(rest, null, 2)));
  return part("Summary", "summary", list, more);
}

// The default health rules' findings, as `tally health` gives them.
function healthPart(run) {
  const h = run.health;
  if (!Array.isArray(h)) return part("Health", "health", el("p", { className: "muted" }, h?.error || ""));
  if (!h.length) return part("Health", "health", el("p", { className: "healthy" }, "no health rule fired"));
  return part("Health", "health", el("ul", {}, ...h.map(f => el("li", { className: "finding" },
    el("strong", {}, `${f.rule}${f.tag ? ` ${f.tag}` : ""}`),
    ` steps ${f.first_step}–${f.last_step} (${f.count}×): ${f.message}`))));
}

// tally diagnose's reading: each finding with its evidence, meaning and what to check first.
function bottleneckPart(run) {
  const d = run.diagnosis;
  // Another writer's run has no timelines to read: nothing to say. A tally run that cannot be
  // read says why.
  if (!d && !run.summary) return el("div");
  if (!d) return part("Bottleneck", "bottleneck", el("p", { className: "muted" }, run.diagnosis_error || ""));
  const evidence = e => e.share_pct == null
    ? `${e.figure} ${fmt(e.ms)} ms`
    : `${e.figure} ${fmt(e.ms)} ms = ${e.share_pct.toFixed(1)} % of ${e.of} (${fmt(e.of_ms)} ms)`;
  if (!d.findings.length) {
    return part("Bottleneck", "bottleneck",
      el("p", { className: "healthy" }, `healthy: no row of the bottleneck table fires (means of the last ${d.last} values)`),
      el("ul", {}, ...d.checked.map(e => el("li", {}, evidence(e)))));
  }
  return part("Bottleneck", "bottleneck", ...d.findings.map(f => el("div", { className: "finding" },
    el("strong", {}, f.symptom),
    el("ul", {}, ...f.evidence.map(e => el("li", {}, evidence(e)))),
    el("p", {}, `meaning: ${f.meaning}`),
    el("p", {}, `check first: ${f.check_first}`))));
}

function timelinesPart(run) {
  const t = run.timelines;
  if (!t || !t.steps.length) return el("div");
  const charts = [];
  if (t.learner.length) charts.push(sharesChart("learner (of Iter Wall)", t.steps, t.learner));
  if (t.collector.length) charts.push(sharesChart("collector (of its cycle)", t.steps, t.collector));
  return part("Timelines", "timelines", ...charts);
}

// Stacked shares per step bucket, the panel's phases in the panel's order.
function sharesChart(title, steps, bands) {
  const dpr = window.devicePixelRatio || 1;
  const canvas = el("canvas");
  canvas.width = SHARE_W * dpr; canvas.height = SHARE_H * dpr;
  canvas.style.width = `${SHARE_W}px`; canvas.style.height = `${SHARE_H}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const x0 = steps[0][0], x1 = Math.max(steps[steps.length - 1][1], x0 + 1);
  const w = SHARE_W - SHARE_PAD.l - SHARE_PAD.r, h = SHARE_H - SHARE_PAD.t - SHARE_PAD.b;
  const px = x => SHARE_PAD.l + (x - x0) / (x1 - x0) * w;
  const py = pct => SHARE_PAD.t + h - Math.min(pct, 100) / 100 * h;
  ctx.strokeStyle = "#ccc"; ctx.fillStyle = "#555"; ctx.font = "10px sans-serif";
  ctx.strokeRect(SHARE_PAD.l, SHARE_PAD.t, w, h);
  for (const pct of [0, 50, 100]) ctx.fillText(`${pct} %`, 2, py(pct) + 3);
  ctx.fillText(`step ${x0}`, SHARE_PAD.l, SHARE_H - 6);
  ctx.textAlign = "right"; ctx.fillText(`${x1}`, SHARE_W - SHARE_PAD.r, SHARE_H - 6); ctx.textAlign = "left";
  const below = steps.map(() => 0);
  const legend = el("div", { className: "legend" });
  bands.forEach((band, i) => {
    const color = COLORS[i % COLORS.length];
    const top = band.pct.map((p, j) => below[j] + (p || 0));
    ctx.fillStyle = color;
    ctx.globalAlpha = 0.75;
    ctx.beginPath();
    steps.forEach(([a, b], j) => { ctx.lineTo(px(a), py(top[j])); ctx.lineTo(px(b + 1), py(top[j])); });
    for (let j = steps.length - 1; j >= 0; j--) {
      ctx.lineTo(px(steps[j][1] + 1), py(below[j])); ctx.lineTo(px(steps[j][0]), py(below[j]));
    }
    ctx.closePath(); ctx.fill();
    ctx.globalAlpha = 1;
    top.forEach((v, j) => { below[j] = v; });
    const shown = band.pct.filter(p => p != null);
    const mean = shown.length ? shown.reduce((a, b) => a + b, 0) / shown.length : 0;
    legend.append(el("span", { className: "band", title: band.tag || "derived: Iter Wall less the phases" },
      el("i", { style: `background:${color}` }), `${band.label} ${mean.toFixed(1)} %`));
  });
  canvas.dataset.bands = bands.map(b => b.label).join(",");
  return el("div", { className: "shares" }, el("div", { className: "title" }, title), canvas, legend);
}

document.querySelector("#run-view .close").onclick = closeRun;
