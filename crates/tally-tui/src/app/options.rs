//! How to run the panel: the mode, the clock periods, symbols, colour, keys and where plain
//! lines go (`docs/contract/panel.md`).

use crate::glyphs::Glyphs;
use crate::mode::Mode;
use std::io::Write;
use std::time::Duration;

/// The panel refreshes on a fixed 2 Hz clock (`docs/contract/panel.md`).
pub const REFRESH: Duration = Duration::from_millis(500);
/// Off a terminal, a summary line every 10 s by default (`docs/contract/panel.md`, "Plain output").
pub const PLAIN_INTERVAL: Duration = Duration::from_secs(10);

/// How to run the panel.
pub struct PanelOptions {
    /// `auto`, `on` or `off`.
    pub mode: Mode,
    /// Frame period (2 Hz).
    pub refresh: Duration,
    /// Seconds between plain summary lines.
    pub plain_interval: Duration,
    /// Symbols; detected from the locale when `None`.
    pub glyphs: Option<Glyphs>,
    /// Colour; `!NO_COLOR` when `None`.
    pub color: Option<bool>,
    /// Read keys (`q`, `Esc`, Ctrl-C set [`super::PanelHandle::quit_requested`]); puts the terminal
    /// in raw mode while the panel runs.
    pub keys: bool,
    /// Where plain lines go (stdout when `None`).
    pub plain_writer: Option<Box<dyn Write + Send>>,
    /// Whether the panel shows a run this process trains, which goes on when the panel loses
    /// its output (and its warning says so), or one it only watches (`tally watch`, which ends
    /// then and says so itself).
    pub shows_own_run: bool,
}

impl Default for PanelOptions {
    fn default() -> Self {
        PanelOptions {
            mode: Mode::Auto,
            refresh: REFRESH,
            plain_interval: PLAIN_INTERVAL,
            glyphs: None,
            color: None,
            keys: false,
            plain_writer: None,
            shows_own_run: true,
        }
    }
}

impl std::fmt::Debug for PanelOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PanelOptions")
            .field("mode", &self.mode)
            .field("refresh", &self.refresh)
            .field("plain_interval", &self.plain_interval)
            .field("glyphs", &self.glyphs)
            .field("color", &self.color)
            .field("keys", &self.keys)
            .field("plain_writer", &self.plain_writer.is_some())
            .finish()
    }
}
