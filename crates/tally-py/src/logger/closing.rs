//! Closing a logger: by `close()` or `with`, when dropped, at interpreter exit for a logger a
//! script forgot (an `atexit` hook, before teardown, while releasing the GIL is still safe),
//! and on a terminating signal (docs/contract/threads-and-signals.md "Signals").

use super::guard::lock;
use super::state::Core;
use crate::errors::{Failure, Result};
use crate::sink::each_sink;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex, Weak};
use tally::RunStatus;

/// Loggers not yet dropped, for the `atexit` hook.
static OPEN: Mutex<Vec<Weak<Mutex<Core>>>> = Mutex::new(Vec::new());

/// Parse a run status name (`completed`, `failed`, `interrupted`, `collector_died`).
pub(super) fn parse_status(s: &str) -> Result<RunStatus> {
    [
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Interrupted,
        RunStatus::CollectorDied,
    ]
    .into_iter()
    .find(|st| st.as_str() == s)
    .ok_or_else(|| {
        Failure::Config(format!(
            "unknown run status '{s}': expected completed, failed, interrupted or collector_died"
        ))
    })
}

/// Enter `core` among the loggers the exit hook closes, (re)register that hook last, and
/// install the signal handlers.
pub(super) fn register(py: Python<'_>, core: &Arc<Mutex<Core>>) -> PyResult<()> {
    {
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|w| w.strong_count() > 0);
        open.push(Arc::downgrade(core));
    }
    // atexit runs handlers last-registered first: move ours behind any the W&B SDK just
    // registered in `wandb.init`, so forgotten loggers close while the run is still open.
    let atexit = py.import("atexit")?;
    let hook = py.import("tally._tally")?.getattr("_close_open_loggers")?;
    atexit.call_method1("unregister", (&hook,))?;
    atexit.call_method1("register", (&hook,))?;
    // SIGTERM, SIGHUP and SIGINT close the run (docs/contract/threads-and-signals.md
    // "Signals").
    py.import("tally._signals")?.call_method0("install")?;
    // An uncaught exception closes the run `failed` (docs/contract/run-artifacts.md "Status").
    py.import("tally._excepthook")?.call_method0("install")?;
    Ok(())
}

/// Close `log` (GIL released: the writer thread may need it for a Python sink), then
/// `finish` the Python sinks on this thread.
pub(super) fn close_core(
    py: Python<'_>,
    core: &Mutex<Core>,
    status: Option<RunStatus>,
    reason: Option<String>,
) -> PyResult<()> {
    // Python runs outside the lock: partial lines reach the panel before its last frame.
    let console = lock(py, core).console.take();
    crate::console::flush(py, console.as_ref());
    let mut guard = lock(py, core);
    let c: &mut Core = &mut guard;
    if c.log.as_ref().is_none_or(|l| l.is_closed()) {
        drop(guard);
        crate::console::restore(py, console);
        return Ok(());
    }
    let closed = match (status, c.log.as_mut()) {
        (Some(st), Some(log)) => py.detach(|| log.close_with_reason(st, reason)),
        _ => {
            // Implicit close: let tally's Drop choose completed / interrupted.
            let log = c.log.take();
            py.detach(move || drop(log));
            Ok(())
        }
    };
    // A run in a bucket: its last files put, waited for (docs/contract/object-storage.md
    // "Writing").
    let closed = match guard.bucket.take() {
        Some(b) => {
            let on_error = guard.on_storage_error;
            let put = py.detach(|| super::in_bucket::closed(b, on_error));
            closed.and(put)
        }
        None => closed,
    };
    let run_dir = guard.run_dir.to_string_lossy().into_owned();
    let sinks: Vec<Py<PyAny>> = guard.py_sinks.iter().map(|s| s.clone_ref(py)).collect();
    drop(guard);
    // The panel has stopped: the original streams come back.
    crate::console::restore(py, console);
    let finished = each_sink(py, &sinks, "finish", || {
        pyo3::types::PyTuple::new(py, [run_dir.clone()])
    });
    closed.map_err(Failure::from)?;
    finished.map_err(|e| {
        PyErr::from(Failure::Tally(tally::Error::Sink {
            sink: "python".into(),
            iteration: 0,
            message: format!("finish after close: {e}"),
        }))
    })
}

/// Close every logger still open: at exit (registered with `atexit`, the status chosen by
/// each logger), on a terminating signal (`tally._signals`, `status="interrupted"`) and on an
/// uncaught exception (`tally._excepthook`, `status="failed"` and the exception as `reason`).
#[pyfunction]
#[pyo3(signature = (status = None, reason = None))]
pub fn _close_open_loggers(
    py: Python<'_>,
    status: Option<&str>,
    reason: Option<String>,
) -> PyResult<()> {
    let status = status.map(parse_status).transpose()?;
    let open: Vec<Arc<Mutex<Core>>> = {
        let mut list = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        let live = list.iter().filter_map(Weak::upgrade).collect();
        list.clear();
        live
    };
    for core in open {
        if let Err(e) = close_core(py, &core, status, reason.clone()) {
            e.write_unraisable(py, None);
        }
    }
    Ok(())
}
