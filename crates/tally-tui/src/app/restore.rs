//! Process-wide ownership of the terminal: one live panel at a time, and restoring the
//! terminal from the panel thread, a panic hook or an interrupt handler, exactly once.

use crossterm::cursor::{MoveTo, Show};
use crossterm::terminal as ct;
use crossterm::{execute, queue};
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

/// A live panel owns the terminal (only one at a time).
pub(super) static ACTIVE: AtomicBool = AtomicBool::new(false);
/// The terminal was already restored (by the panic hook or an interrupt handler).
pub(super) static RESTORED: AtomicBool = AtomicBool::new(false);
/// The panel put the terminal in raw mode.
pub(super) static RAW: AtomicBool = AtomicBool::new(false);
/// Screen row just below the viewport.
pub(super) static BOTTOM: AtomicU16 = AtomicU16::new(0);
/// Held while drawing, so a restore does not interleave with a frame.
pub(super) static DRAW: Mutex<()> = Mutex::new(());
static HOOK: Once = Once::new();

/// Restore the terminal now if a live panel is running: leave raw mode, move below the
/// panel and show the cursor. Afterwards the panel draws nothing more.
///
/// For interrupt handlers and panic hooks; idempotent and safe to call when no panel runs.
pub fn restore_terminal() {
    if !ACTIVE.load(Ordering::SeqCst) || RESTORED.swap(true, Ordering::SeqCst) {
        return;
    }
    // Wait briefly for a frame in progress; never block a panicking thread for long.
    let mut guard = None;
    for _ in 0..50 {
        match DRAW.try_lock() {
            Ok(g) => {
                guard = Some(g);
                break;
            }
            Err(std::sync::TryLockError::Poisoned(p)) => {
                guard = Some(p.into_inner());
                break;
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::sleep(Duration::from_millis(5))
            }
        }
    }
    leave_terminal();
    drop(guard);
}

fn leave_terminal() {
    if RAW.swap(false, Ordering::SeqCst) {
        let _ = ct::disable_raw_mode();
    }
    let mut out = io::stdout();
    let row = BOTTOM.load(Ordering::SeqCst).saturating_sub(1);
    let _ = queue!(out, MoveTo(0, row));
    let _ = out.write_all(b"\r\n");
    let _ = execute!(out, Show);
}

pub(super) fn install_panic_hook() {
    HOOK.call_once(|| {
        // A stalled run ended by `stall_exit_after` leaves a usable terminal too
        // (docs/contract/health.md "Ending a stalled run").
        tally::health::stall_exit::before_exit(restore_terminal);
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // Restore first so the panic message lands on a usable terminal.
            restore_terminal();
            previous(info);
        }));
    });
}
