//! What the panel thread reads from the logger: a snapshot of the terminal state (even when a
//! panicking thread poisoned its lock), and of the status messages, those not shown yet, which
//! are warm-up progress, and the line each prints as (`docs/contract/panel.md`, "Status,
//! warnings and errors").

use crate::text::strip_markup;
use std::sync::Mutex;
use tally::terminal::{Level, Message, PanelSnapshot, TerminalState};

/// A snapshot of `state`, taken even when a panic poisoned its lock.
pub(super) fn snapshot(state: &Mutex<TerminalState>) -> PanelSnapshot {
    state.lock().unwrap_or_else(|e| e.into_inner()).snapshot()
}

/// Messages recorded since `seen` (a count of all messages ever recorded).
pub(super) fn new_messages(snap: &PanelSnapshot, seen: u64) -> &[Message] {
    messages_between(snap, seen, snap.messages_total)
}

/// The messages numbered `from..to` (counting every message ever recorded) still in `snap`.
pub(super) fn messages_between(snap: &PanelSnapshot, from: u64, to: u64) -> &[Message] {
    let first = snap.messages_total - snap.messages.len() as u64;
    let lo = from.clamp(first, snap.messages_total) - first;
    let hi = to.clamp(first, snap.messages_total) - first;
    &snap.messages[lo as usize..hi.max(lo) as usize]
}

/// Whether `m` is warm-up progress: an info line from before training started
/// (`training_started_at`). Those show in the panel header (or, in plain mode, only the latest
/// one per interval); everything else is also printed as a line.
pub(super) fn is_warmup(m: &Message, training_started_at: Option<f64>) -> bool {
    m.level == Level::Info && m.progress && training_started_at.is_none_or(|t0| m.t < t0)
}

pub(super) fn message_line(m: &Message) -> String {
    let text = strip_markup(&m.text);
    match m.level {
        Level::Error => format!("ERROR {text}"),
        Level::Warning => format!("WARN {text}"),
        Level::Info => text,
    }
}
