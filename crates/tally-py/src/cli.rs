//! `python -m tally ...` and the `tally` console script: the whole CLI through the binding.
//!
//! The CLI runs with the GIL released; the demo's extra sinks (the Python W&B sink, for
//! `training.logger=wandb`) come from a factory passed to `tally_cli::run`, and are finished
//! on this thread once the command returns.

use crate::sink::{wandb_sink, PySink};
use pyo3::prelude::*;
use std::process::ExitCode;
use std::sync::Mutex;
use tally::{Backend, Sink};

/// The demo's sinks for `backend`: a W&B sink for `wandb`, kept in `created` to finish later.
fn wandb_sinks(
    backend: Backend,
    created: &Mutex<Vec<Py<PyAny>>>,
) -> Result<Vec<Box<dyn Sink>>, tally_cli::CliError> {
    if backend != Backend::Wandb {
        return Ok(Vec::new());
    }
    Python::attach(|py| {
        let failed = |e: PyErr| tally_cli::CliError::Run(e.to_string());
        let sink = wandb_sink(py, None).map_err(failed)?;
        let boxed = PySink::new(&sink).map_err(failed)?;
        created
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
    // W&B sinks the demo created during this command, to finish after it.
    let created = Mutex::new(Vec::new());
    let demo_sinks = |backend| wandb_sinks(backend, &created);
    let extensions = tally_cli::Extensions {
        demo_sinks: Some(&demo_sinks),
    };
    let code = py.detach(|| tally_cli::run(argv, &extensions));
    let created = created.into_inner().unwrap_or_else(|e| e.into_inner());
    for sink in created {
        let s = sink.bind(py);
        if s.hasattr("finish")? {
            s.call_method0("finish")?;
        }
    }
    Ok(code_of(code))
}
