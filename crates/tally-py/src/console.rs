//! The user's output while a Logger's live panel runs: `sys.stdout`/`sys.stderr` (and the
//! logging handlers writing to them) are redirected to `tally._console`'s line proxies, which
//! hand complete lines to the panel here; everything is put back when the panel stops
//! (`docs/contract/panel.md`, "The user's output under the panel").

use pyo3::prelude::*;
use tally_tui::{Output, PanelOptions};

/// The panel's console as the proxies see it: one method, `above(line) -> bool`.
#[pyclass(frozen, module = "tally._tally", name = "_PanelConsole")]
struct PanelConsole(tally_tui::Console);

#[pymethods]
impl PanelConsole {
    /// Print `line` (no newline) above the live panel; `False` when it no longer runs (the
    /// caller then writes the line to its own stream).
    fn above(&self, py: Python<'_>, line: String) -> bool {
        // Waits on the panel's locks only briefly, but never with the GIL held.
        py.detach(|| self.0.above(line).is_ok())
    }
}

/// Start `log`'s panel; while it is live, redirect Python's output above it. Returns the
/// redirection to undo at close (`None` when the panel prints plain lines or nothing).
pub fn attach(
    py: Python<'_>,
    log: &mut tally::Logger,
    options: PanelOptions,
) -> PyResult<Option<Py<PyAny>>> {
    // What Python buffered so far goes out before the panel draws below it.
    let sys = py.import("sys")?;
    for name in ["stdout", "stderr"] {
        let stream = sys.getattr(name)?;
        if !stream.is_none() {
            stream.call_method0("flush")?;
        }
    }
    let console = tally_tui::Panel::attach(log, options);
    if console.output() != Output::Live {
        return Ok(None);
    }
    let console = Py::new(py, PanelConsole(console))?;
    let redirect = py
        .import("tally._console")?
        .getattr("Redirect")?
        .call1((console,))?;
    Ok(Some(redirect.unbind()))
}

/// Hand partial lines to the panel before it draws its last frame.
pub fn flush(py: Python<'_>, redirect: Option<&Py<PyAny>>) {
    if let Some(r) = redirect {
        if let Err(e) = r.call_method0(py, "flush") {
            e.write_unraisable(py, None);
        }
    }
}

/// Put the original streams back once the panel has stopped.
pub fn restore(py: Python<'_>, redirect: Option<Py<PyAny>>) {
    if let Some(r) = redirect {
        if let Err(e) = r.call_method0(py, "restore") {
            e.write_unraisable(py, None);
        }
    }
}
