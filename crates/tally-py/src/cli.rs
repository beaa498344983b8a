//! `python -m tally ...` and the `tally` console script: the whole CLI through the binding.
//!
//! The CLI runs with the GIL released; the demo's extra sinks (the Python W&B sink, for
//! `training.logger=wandb`) come from a provider installed here, and are finished on this
//! thread once the command returns.

use crate::sink::PySink;
use pyo3::prelude::*;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use tally::{Backend, Sink};

/// W&B sinks the demo created during the current command, to finish after it.
static CREATED: Mutex<Vec<Py<PyAny>>> = Mutex::new(Vec::new());

fn provide(backend: Backend) -> Result<Vec<Box<dyn Sink>>, String> {
    if backend != Backend::Wandb {
        return Ok(Vec::new());
    }
    Python::attach(|py| {
        let sink = py
            .import("tally._wandb")
            .and_then(|m| m.getattr("WandbSink"))
            .and_then(|c| c.call1((py.None(),)))
            .map_err(|e| e.to_string())?;
        let boxed = PySink::new(&sink).map_err(|e| e.to_string())?;
        CREATED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(sink.unbind());
        Ok(vec![Box::new(boxed) as Box<dyn Sink>])
    })
}

/// The numeric value of an exit code (std keeps it private; compare against each value).
fn code_of(code: ExitCode) -> u8 {
    (0..=u8::MAX)
        .find(|n| ExitCode::from(*n) == code)
        .unwrap_or(1)
}

/// Run the `tally` command line with `argv` (including the program name); returns the exit code.
#[pyfunction]
pub fn cli_main(py: Python<'_>, argv: Vec<String>) -> PyResult<u8> {
    tally_cli::cmd::demo::set_sink_provider(Some(Arc::new(provide)));
    let code = py.detach(|| tally_cli::run(argv));
    let created: Vec<Py<PyAny>> =
        std::mem::take(&mut *CREATED.lock().unwrap_or_else(|e| e.into_inner()));
    for sink in created {
        let s = sink.bind(py);
        if s.hasattr("finish")? {
            s.call_method0("finish")?;
        }
    }
    Ok(code_of(code))
}
