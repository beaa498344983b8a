// Building the page's elements: one element with its properties and children, and a titled
// part of a run's views.
"use strict";

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  e.append(...children);
  return e;
}

function part(title, cls, ...children) {
  return el("div", { className: `part ${cls}` }, el("h3", {}, title), ...children);
}
