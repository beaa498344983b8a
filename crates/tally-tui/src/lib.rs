//! The live terminal panel: pure state and rendering, one module that touches the terminal.
//!
//! - [`state`]: [`PanelState`], a snapshot of the logger's terminal state plus "now", turned
//!   into what the panel shows (pure).
//! - [`view`]: `impl Widget for &PanelState`, the width tiers and tables (pure).
//! - [`plain`]: the one-line ASCII summary for log files, CI and `--panel off`.
//! - [`generic`]: the model of a run shown without a schema (another tool's event files).
//! - [`text`]: markup stripping and ASCII-only text, shared by the panel and the plain lines.
//! - [`rft`]: the `rft` profile's model, Trinity-RFT keys grouped by category
//!   (`docs/contract/rft.md`),
//!   which the view draws instead of the RL tables.
//! - [`curves`]: each tag's series as a line of braille dots, several runs overlaid
//!   (`tally watch --curves`), with [`key`] the keys it takes.
//! - [`app`]: [`Panel::attach`] / [`Panel::start`], the 2 Hz render thread with a ratatui
//!   inline viewport, the [`Console`] that prints the caller's own lines above it from any
//!   thread, and terminal restoration on stop, drop, panic and interrupt (the only terminal
//!   I/O).
//!
//! ```no_run
//! # fn demo(logger: &mut tally::Logger) {
//! let console = tally_tui::Panel::attach(logger, tally_tui::PanelOptions::default());
//! // Lines above the panel (or on stdout when no live panel runs), from any thread.
//! console.print(tally_tui::Stream::Stdout, "checkpoint saved").ok();
//! // ... logger.step(...) once per iteration; the panel renders on the run's clock ...
//! logger.close(tally::RunStatus::Completed).ok(); // the last frame, then the terminal back
//! # }
//! ```

pub mod app;
pub mod curves;
pub mod format;
pub mod generic;
pub mod glyphs;
pub mod key;
pub mod mode;
pub mod plain;
pub mod rft;
pub mod state;
pub mod text;
pub mod view;

pub use app::{
    restore_terminal, Console, Panel, PanelHandle, PanelOptions, Screen, Stream, PLAIN_INTERVAL,
    REFRESH,
};
pub use glyphs::Glyphs;
pub use mode::{Mode, Output, TermEnv};
pub use plain::summary_line;
pub use state::{Model, PanelState};
pub use view::{buffer_text, render_to_buffer, Tier};
