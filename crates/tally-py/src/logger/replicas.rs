//! The replicas over other trackers (docs/contract/remote-sinks.md "MLflow", "trackio"): a
//! logger's Python sinks with those given settings and `logger="mlflow"`/`"trackio"`'s (with
//! its defaults) added, and each replica's settings recorded in its `LoggerConfig`.

use super::documents::json_text;
use crate::errors::Failure;
use crate::sink::{python_sinks, Sinks};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tally::{Backend, LoggerConfig};

/// The logger's Python sinks (`sinks=`, W&B's for `logger="wandb"`, the replicas) and their
/// boxed Rust sides; `lc` gains each replica's settings.
pub(super) fn sinks<'py>(
    py: Python<'py>,
    lc: &mut LoggerConfig,
    sinks: Option<Vec<Bound<'py, PyAny>>>,
    wandb: Option<&Bound<'py, PyDict>>,
    mlflow: Option<&Bound<'py, PyDict>>,
    trackio: Option<&Bound<'py, PyDict>>,
) -> PyResult<Sinks<'py>> {
    let defaults = PyDict::new(py);
    let replicas: Vec<(&str, &Bound<'_, PyDict>)> = [("mlflow", mlflow), ("trackio", trackio)]
        .into_iter()
        .filter_map(|(n, d)| match d {
            Some(d) => Some((n, d)),
            None => (lc.backend.tracker() == Some(n)).then_some((n, &defaults)),
        })
        .collect();
    let (objs, boxed) = python_sinks(
        py,
        sinks.unwrap_or_default(),
        lc.backend == Backend::Wandb,
        wandb,
        &replicas,
        lc.remote_finish_timeout_secs,
    )?;
    // Recorded in run_config.json as the W&B settings are, once the sinks took them
    // (docs/contract/run-artifacts.md "Replica settings").
    // `mlflow=`/`trackio=`'s and a replica given in `sinks=` alike: each holds its settings.
    for o in &objs {
        let Ok(name) = o.getattr("name").and_then(|n| n.extract::<String>()) else {
            continue;
        };
        if !matches!(name.as_str(), "mlflow" | "trackio") || !o.hasattr("settings")? {
            continue;
        }
        let v = json_text(py, &o.getattr("settings")?, &name)?;
        let bad = |e: serde_json::Error| Failure::Config(format!("{name} settings: {e}"));
        if name == "mlflow" {
            lc.mlflow = Some(serde_json::from_value(v).map_err(bad)?);
        } else {
            lc.trackio = Some(serde_json::from_value(v).map_err(bad)?);
        }
    }
    Ok((objs, boxed))
}
