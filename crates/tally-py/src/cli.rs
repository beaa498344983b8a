//! `python -m tally ...` and the `tally` console script: the whole CLI through the binding.
//!
//! The CLI runs with the GIL released; the demo's extra sinks (the Python W&B sink, for
//! `training.logger=wandb`, or the MLflow or trackio replica) come from a factory passed to `tally_cli::run`, and are finished
//! on this thread once the command returns. `tally sync`'s sink (W&B, MLflow or trackio) comes
//! from another factory; it finishes its run itself once the run's last row is sent.

use crate::sink::{replica_sink, wandb_sink, PySink};
use pyo3::prelude::*;
use std::process::ExitCode;
use std::sync::Mutex;
use tally::{Backend, Sink};

/// The demo's sinks for its backend: a W&B sink for `wandb` with the `training.wandb_*`
/// settings, the MLflow or trackio replica for `mlflow`/`trackio` with its `training.<tracker>_*`
/// settings, kept in `created` to finish later.
fn demo_sinks(
    c: &tally_demo::DemoConfig,
    created: &Mutex<Vec<Py<PyAny>>>,
) -> Result<Vec<Box<dyn Sink>>, tally_demo::Error> {
    let Some(tracker) = c.backend.tracker() else {
        return Ok(Vec::new());
    };
    Python::attach(|py| {
        let failed = |e: PyErr| tally_demo::Error::Run(e.to_string());
        let json = match c.backend {
            Backend::Wandb => serde_json::to_string(&c.wandb),
            Backend::Mlflow => serde_json::to_string(&c.mlflow),
            _ => serde_json::to_string(&c.trackio),
        }
        .map_err(|e| tally_demo::Error::Run(format!("{tracker} settings: {e}")))?;
        let settings = py
            .import("json")
            .and_then(|m| m.call_method1("loads", (json,)))
            .map_err(failed)?;
        let sink = if c.backend == Backend::Wandb {
            wandb_sink(py, Some(&settings))
        } else {
            replica_sink(py, tracker, &settings)
        }
        .map_err(failed)?;
        let boxed = PySink::new(&sink).map_err(failed)?;
        created
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(sink.unbind());
        Ok(vec![Box::new(boxed) as Box<dyn Sink>])
    })
}

/// `tally sync`'s sink: the W&B sink with `--project`/`--entity`, the MLflow sink with
/// `--tracking-uri`/`--experiment` or the trackio sink with `--project` (each unset flag left
/// to the sink's defaults and its package's own environment variables), finishing its run when
/// the last row is sent and waiting as long as it takes (the user asked for the upload).
fn sync_sink(target: &tally_cli::cmd::sync::Target) -> Result<Box<dyn Sink>, tally_cli::CliError> {
    use tally_cli::cmd::sync::Service;
    Python::attach(|py| {
        let failed = |e: PyErr| tally_cli::CliError::Run(e.to_string());
        let settings = pyo3::types::PyDict::new(py);
        let pairs = match target.to {
            Service::Wandb => vec![("project", &target.project), ("entity", &target.entity)],
            Service::Mlflow => vec![
                ("tracking_uri", &target.tracking_uri),
                ("experiment", &target.experiment),
            ],
            Service::Trackio => vec![("project", &target.project)],
        };
        for (k, v) in pairs {
            if let Some(v) = v {
                settings.set_item(k, v).map_err(failed)?;
            }
        }
        let sink = match target.to {
            Service::Wandb => wandb_sink(py, Some(settings.as_any())),
            other => replica_sink(py, other.as_str(), settings.as_any()),
        }
        .map_err(failed)?;
        sink.setattr("finish_timeout", py.None()).map_err(failed)?;
        sink.setattr("finish_on_close", true).map_err(failed)?;
        let boxed = PySink::new(&sink).map_err(failed)?;
        Ok(Box::new(boxed) as Box<dyn Sink>)
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
    let demo_sinks = |c: &tally_demo::DemoConfig| demo_sinks(c, &created);
    let extensions = tally_cli::Extensions {
        demo_sinks: Some(&demo_sinks),
        remote_sinks: Some(&sync_sink),
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
