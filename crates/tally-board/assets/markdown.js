// Markdown, for a run's text (docs/contract/board.md "One run's views").
"use strict";

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
