//! How a `tally.Logger` call waits and what it refuses (docs/contract/threads-and-signals.md
//! "Sharing a logger between threads"): mutexes taken with the GIL released, calls from
//! tally's own threads and from inside a step's own argument conversion refused.

use crate::errors::{Failure, Result};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use std::cell::Cell;
use std::sync::{Mutex, MutexGuard};

/// Take `m` without holding the GIL while waiting: its holder may need the GIL to finish
/// (a Python sink on the writer thread under back-pressure), and a thread waiting with the GIL
/// held would freeze the interpreter.
pub(super) fn lock<'a, T>(py: Python<'_>, m: &'a Mutex<T>) -> MutexGuard<'a, T> {
    m.lock_py_attached(py).unwrap_or_else(|e| e.into_inner())
}

/// Refuse a call made on one of tally's own threads (`tally-writer`, `tally-panel`): there it
/// comes from a sink's `write()`/`flush()`/`close()`, and waiting on the writer (or on a
/// caller that waits on it) from the writer itself would never end.
pub(super) fn refuse_tally_thread(method: &str) -> Result<()> {
    if !ON_TALLY_THREAD.with(|t| *t) {
        return Ok(());
    }
    let current = std::thread::current();
    let name = current.name().unwrap_or_default();
    Err(Failure::Reentrant(format!(
        "tally.Logger.{method}() cannot be called from a sink's write() (it runs on tally's \
         {name} thread, which that call would wait on); call it from the training loop"
    )))
}

thread_local! {
    /// This is one of tally's own threads: named once, when it starts, so asked once (a
    /// step would otherwise look the name up every call).
    static ON_TALLY_THREAD: bool = std::thread::current()
        .name()
        .is_some_and(|n| n.starts_with("tally-"));
    /// This thread is inside `step`, converting its arguments: Python code that runs there (a
    /// value's `__float__`, a signal handler) cannot start a step or end a phase on this
    /// thread, which holds the step's lock.
    static STEPPING: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as inside `step` until dropped.
pub(super) struct Stepping;

impl Stepping {
    pub(super) fn enter(method: &str) -> Result<Stepping> {
        refuse_reentry(method)?;
        STEPPING.with(|s| s.set(true));
        Ok(Stepping)
    }
}

impl Drop for Stepping {
    fn drop(&mut self) {
        STEPPING.with(|s| s.set(false));
    }
}

pub(super) fn refuse_reentry(method: &str) -> Result<()> {
    if STEPPING.with(Cell::get) {
        return Err(Failure::Reentrant(format!(
            "tally.Logger.{method}() was called from code a step() on this thread is running (a \
             value's __float__ or a signal handler); call it after that step returns"
        )));
    }
    Ok(())
}
