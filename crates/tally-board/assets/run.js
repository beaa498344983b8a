// One run's own views, opened by clicking its name in the runs table (docs/contract/board.md
// "One run's views"): its summary, the health rules' findings, the bottleneck reading `tally
// diagnose` gives, its learner and collector timelines as stacked shares over its steps, and
// its text (Markdown rendered), images (a step slider) and histograms (over time). Uses
// board.js's state and api().
"use strict";

const SHARE_W = 460, SHARE_H = 160, SHARE_PAD = { l: 40, r: 10, t: 8, b: 20 };
const HIST_W = 300, HIST_H = 120;

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

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  e.append(...children);
  return e;
}

function part(title, cls, ...children) {
  return el("div", { className: `part ${cls}` }, el("h3", {}, title), ...children);
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

function mediaPart(name, media) {
  const parts = [];
  if (media.text.length) {
    parts.push(part("Text", "text", ...media.text.map(t => el("div", { className: "text-tag" },
      el("h4", {}, t.tag),
      ...[...t.entries].reverse().map(e => el("div", { className: "entry" },
        el("span", { className: "muted" }, `step ${e.step}`), markdown(e.text)))))));
  }
  if (media.images.length) {
    parts.push(part("Images", "images", ...media.images.map(i => imageFigure(name, i))));
  }
  if (media.histograms.length) {
    parts.push(part("Histograms", "histograms", ...media.histograms.map(hg => {
      const history = hg.history && hg.history.length ? hg.history : [hg];
      const steps = history.length > 1 ? `steps ${history[0].step}–${history[history.length - 1].step} (${history.length})` : `step ${hg.step}`;
      return el("figure", {}, histogramCanvas(history), el("figcaption", {}, `${hg.tag} · ${steps}`));
    })));
  }
  return el("div", {}, ...parts);
}

// An image tag: the newest image, and a slider over every step the run holds (TensorBoard's
// step slider).
function imageFigure(name, i) {
  const steps = i.steps && i.steps.length ? i.steps : [i];
  const src = step => {
    const q = new URLSearchParams({ run: name, tag: i.tag, step: String(step) });
    if (state.token) q.set("token", state.token);
    return `/api/image?${q}`;
  };
  const img = el("img", { src: src(i.step), alt: i.tag });
  const caption = el("figcaption", {}, `${i.tag} · step ${i.step}`);
  const figure = el("figure", {}, img);
  figure.dataset.tag = i.tag;
  if (steps.length > 1) {
    const slider = el("input", { type: "range", min: "0", max: String(steps.length - 1), step: "1",
      value: String(steps.length - 1), className: "step-slider", title: "step" });
    slider.oninput = () => {
      const s = steps[Number(slider.value)];
      img.src = src(s.step);
      caption.textContent = `${i.tag} · step ${s.step}`;
    };
    figure.append(slider);
  }
  figure.append(caption);
  return figure;
}

// Markdown as TensorBoard's Text tab renders it: headings, paragraphs, lists, quotes, code,
// tables, emphasis and links. Every piece is made with the DOM (text nodes), never parsed as
// HTML, so a text holding `<script>` or an `onerror=` shows as written and runs nothing; a link
// keeps only an http(s) or relative address.
function markdown(text) {
  const root = el("div", { className: "markdown" });
  const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  const isTable = l => /^\s*\|.*\|\s*$/.test(l);
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i += 1; continue; }
    const fence = line.match(/^\s*(```|~~~)/);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i += 1;
      root.append(el("pre", {}, el("code", {}, body.join("\n"))));
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      root.append(el(`h${Math.min(6, heading[1].length + 2)}`, {}, ...inline(heading[2])));
      i += 1;
      continue;
    }
    if (isTable(line)) {
      const rows = [];
      while (i < lines.length && isTable(lines[i])) rows.push(lines[i++]);
      const cells = l => l.trim().replace(/^\||\|$/g, "").split("|").map(c => c.trim());
      const body = rows.filter(l => !/^[\s|:-]+$/.test(l)).map(cells);
      const table = el("table", { className: "md" });
      body.forEach((row, r) => table.append(el("tr", {}, ...row.map(c => el(r ? "td" : "th", {}, ...inline(c))))));
      root.append(table);
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? "ol" : "ul");
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        list.append(el("li", {}, ...inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""))));
        i += 1;
      }
      root.append(list);
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*>\s?/, ""));
      root.append(el("blockquote", {}, markdown(quoted.join("\n"))));
      continue;
    }
    if (/^\s{4}/.test(line)) {
      const body = [];
      while (i < lines.length && (/^\s{4}/.test(lines[i]) || !lines[i].trim())) body.push(lines[i++].slice(4));
      root.append(el("pre", {}, el("code", {}, body.join("\n").trimEnd())));
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !/^(#{1,6}\s|\s*```|\s*~~~|\s*>|\s*([-*+]|\d+[.)])\s)/.test(lines[i]) && !isTable(lines[i])) {
      para.push(lines[i++]);
    }
    const p = el("p");
    para.forEach((l, k) => { if (k) p.append(k && /\s{2}$/.test(para[k - 1]) ? el("br") : " "); p.append(...inline(l.trim())); });
    root.append(p);
  }
  return root;
}

// Inline Markdown: `code`, **strong**, *em* / _em_, [text](address); the rest as text.
function inline(text) {
  const out = [];
  const re = /(`+)([^`]+?)\1|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\b_([^_\s][^_]*)_\b|\[([^\]]+)\]\(([^)\s]+)\)/;
  let rest = text;
  while (rest) {
    const m = rest.match(re);
    if (!m) { out.push(document.createTextNode(rest)); break; }
    if (m.index) out.push(document.createTextNode(rest.slice(0, m.index)));
    if (m[2] !== undefined) out.push(el("code", {}, m[2]));
    else if (m[3] !== undefined || m[4] !== undefined) out.push(el("strong", {}, ...inline(m[3] ?? m[4])));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(el("em", {}, ...inline(m[5] ?? m[6])));
    else {
      const href = m[8];
      const safe = /^(https?:\/\/|\/|\.\/|#)/i.test(href);
      out.push(safe ? el("a", { href, target: "_blank", rel: "noopener noreferrer" }, ...inline(m[7])) : document.createTextNode(m[0]));
    }
    rest = rest.slice(m.index + m[0].length);
  }
  return out;
}

// A tag's histograms over time, as TensorBoard's offset view draws them: one ridge per step,
// the oldest at the back (top), the newest at the front (bottom), each over the common value
// range, its height the bucket's density.
function histogramCanvas(history) {
  const dpr = window.devicePixelRatio || 1;
  const canvas = el("canvas");
  const W = HIST_W, rows = Math.min(history.length, 40);
  const ridge = 40, gap = history.length > 1 ? Math.max(3, Math.min(8, 160 / rows)) : 0;
  const H = ridge + gap * (rows - 1) + 20;
  canvas.width = W * dpr; canvas.height = H * dpr;
  canvas.style.width = `${W}px`; canvas.style.height = `${H}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  // At most 40 ridges, evenly over the steps held (the newest always among them).
  const picked = [];
  for (let k = 0; k < rows; k++) picked.push(history[Math.round((history.length - 1) * (rows === 1 ? 1 : k / (rows - 1)))]);
  const all = picked.map(h => h.buckets.map(b => b.map(Number)).filter(b => b.every(Number.isFinite)));
  canvas.dataset.buckets = String(all[all.length - 1].length);
  canvas.dataset.steps = picked.map(h => h.step).join(",");
  const flat = all.flat();
  if (!flat.length) return canvas;
  const lo = Math.min(...flat.map(b => b[0])), hi = Math.max(...flat.map(b => b[1]), lo + 1e-12);
  const density = b => b[2] / Math.max(b[1] - b[0], (hi - lo) / 1e6);
  const top = Math.max(...flat.map(density), 1e-12);
  const px = x => 4 + (x - lo) / (hi - lo) * (W - 8);
  const styles = getComputedStyle(document.documentElement);
  const fg = styles.getPropertyValue("--fg").trim() || "#555";
  all.forEach((buckets, k) => {
    const base = ridge + gap * k;
    const shade = rows === 1 ? 1 : 0.35 + 0.65 * k / (rows - 1);
    ctx.beginPath();
    ctx.moveTo(px(buckets.length ? buckets[0][0] : lo), base);
    for (const b of buckets) {
      const y = base - density(b) / top * (ridge - 4);
      ctx.lineTo(px(b[0]), y); ctx.lineTo(px(b[1]), y);
    }
    ctx.lineTo(px(buckets.length ? buckets[buckets.length - 1][1] : hi), base);
    ctx.closePath();
    ctx.globalAlpha = 1;
    ctx.fillStyle = `rgba(31, 119, 180, ${0.25 + 0.55 * shade})`;
    ctx.fill();
    ctx.strokeStyle = `rgba(20, 70, 120, ${0.5 + 0.5 * shade})`;
    ctx.lineWidth = 1;
    ctx.stroke();
  });
  ctx.fillStyle = fg;
  ctx.font = "10px sans-serif";
  ctx.fillText(fmt(lo), 4, H - 4);
  ctx.textAlign = "right"; ctx.fillText(fmt(hi), W - 4, H - 4);
  if (picked.length > 1) { ctx.fillText(`step ${picked[0].step}`, W - 4, 10); ctx.fillText(`step ${picked[picked.length - 1].step}`, W - 4, ridge + gap * (rows - 1) - 2); }
  return canvas;
}

document.querySelector("#run-view .close").onclick = closeRun;
