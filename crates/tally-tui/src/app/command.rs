//! What the panel thread is told over its channel, by the handle and the console.

/// One message to the panel thread.
pub(super) enum Command {
    /// Print a line above the panel, or as a plain line.
    Log(String),
    /// Draw a frame now instead of at the next tick.
    Refresh,
    /// Draw the final frame and restore the terminal.
    Stop,
}
