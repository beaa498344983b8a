// The colours: the system's scheme, or the one the user picked.
"use strict";

function dark() {
  return state.theme === "dark"
    || (state.theme === "auto" && window.matchMedia("(prefers-color-scheme: dark)").matches);
}

function themeColors() {
  return dark()
    ? { paper: "#16181d", plot: "#16181d", text: "#d8dadf", grid: "#2e323a", line: "#555b66" }
    : { paper: "#ffffff", plot: "#ffffff", text: "#333333", grid: "#e6e6e6", line: "#aaaaaa" };
}
