//! Ctrl-C and SIGTERM for the long-running commands (`demo`, `watch`): the first interrupt asks
//! the command to stop cleanly, a second one restores the terminal and exits at once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// SIGINT/SIGTERM seen since the current command started.
static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);
/// Set by the first interrupt: the command stops and closes what it opened.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The interrupt flag of this command, with the Ctrl-C/SIGTERM handler installed (once per
/// process; a signal handler is process-wide by nature). The first interrupt sets the flag
/// (graceful: close the logger, restore the terminal, exit 130); a second one restores the
/// terminal and exits 130 at once.
pub fn interrupt_flag() -> &'static AtomicBool {
    static HANDLER: OnceLock<bool> = OnceLock::new();
    HANDLER.get_or_init(|| {
        ctrlc::set_handler(|| {
            INTERRUPTED.store(true, Ordering::SeqCst);
            if INTERRUPTS.fetch_add(1, Ordering::SeqCst) >= 1 {
                tally_tui::restore_terminal();
                std::process::exit(130);
            }
        })
        .is_ok()
    });
    INTERRUPTS.store(0, Ordering::SeqCst);
    INTERRUPTED.store(false, Ordering::SeqCst);
    &INTERRUPTED
}
