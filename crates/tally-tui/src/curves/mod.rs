//! Curves in the terminal (`tally watch --curves`; `docs/contract/panel.md` "Curves in the
//! terminal"): each tag's whole series drawn as a line of braille dots (ASCII off a Unicode
//! locale), several runs overlaid in their colours, pure like the rest of the panel.
//!
//! - `model`: what a frame shows, as plain data the caller reduced from its runs.
//! - `canvas`: a plot's dots, drawn from one min/max column per dot column.
//! - `nav`: the run cursor, the runs picked, the tag filter and scroll, moved by keys.
//! - `view`: the widget, the chart grid and the plain-text frame.

pub mod canvas;
pub mod model;
pub mod nav;
pub mod view;

pub use model::{Chart, Column, CurvesModel, RunLabel, RunValue, Trace};
pub use nav::{Action, Nav};
pub use view::{dot_columns, plain_text, CurvesView};
