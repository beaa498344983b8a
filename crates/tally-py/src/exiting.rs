//! The interpreter's exit as tally's own threads see it (docs/contract/remote-sinks.md "At
//! exit").
//!
//! A thread Python did not start (a remote sink's follower) that attaches to the interpreter
//! once it is finalizing is ended by CPython with `pthread_exit`, whose unwinding through Rust
//! frames aborts the whole process (`FATAL: exception not rethrown`, SIGABRT). So such a thread
//! attaches only through [`attach`], briefly, and the last of tally's `atexit` hooks,
//! [`_interpreter_exiting`], waits for the attached ones to leave and refuses every later
//! attach. Whatever may block inside Python (a tracker's network call) runs on a Python thread
//! instead (`tally._sink_thread`), which CPython ends cleanly.

use pyo3::prelude::*;
use std::sync::RwLock;

/// Set once by [`_interpreter_exiting`]; read-held by every attached tally thread.
static EXITING: RwLock<bool> = RwLock::new(false);

/// Run `f` attached to the interpreter, unless it is exiting (`None`). `f` must not block:
/// the interpreter's exit waits for it.
pub fn attach<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    let exiting = EXITING.read().unwrap_or_else(|e| e.into_inner());
    if *exiting {
        return None;
    }
    Python::try_attach(f)
}

/// `atexit`: no tally thread attaches from now on; those attached finish first (the GIL is
/// released meanwhile, so they can).
#[pyfunction]
pub fn _interpreter_exiting(py: Python<'_>) {
    py.detach(|| *EXITING.write().unwrap_or_else(|e| e.into_inner()) = true);
}
