// A run's text (Markdown rendered), images (a step slider) and histograms (over time), in its
// own views (run.js).
"use strict";

const HIST_W = 300;

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
