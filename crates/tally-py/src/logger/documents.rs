//! Python documents a `tally.Logger` records (the `wandb=` settings, a runtime manifest,
//! backend diagnostics) turned into JSON, with errors naming what was refused.

use crate::errors::{Failure, Result};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString, PyTuple};
use tally::schema::artifacts::WandbSettings;

/// The W&B settings a `wandb=` dict may carry.
const WANDB_KEYS: [&str; 8] = [
    "project", "entity", "group", "name", "tags", "notes", "mode", "job_type",
];

pub(super) fn json_text(
    py: Python<'_>,
    v: &Bound<'_, PyAny>,
    what: &str,
) -> Result<serde_json::Value> {
    if let Some((path, x)) = nonfinite(v, "$".to_owned()) {
        // Named here: json.dumps would write a token the JSON parser then refuses by position.
        return Err(Failure::Config(format!(
            "{what}: {path}: expected a finite number, found the float {x} (JSON holds no NaN or infinity)"
        )));
    }
    let text: String = py
        .import("json")
        .and_then(|j| {
            let kw = PyDict::new(py);
            kw.set_item("default", py.get_type::<PyString>())?;
            j.call_method("dumps", (v,), Some(&kw))?.extract()
        })
        .map_err(|e| Failure::Config(format!("{what} is not JSON-serialisable: {e}")))?;
    serde_json::from_str(&text).map_err(|e| Failure::Config(format!("{what}: {e}")))
}

/// JSON holds no NaN or infinity: a document carrying one is refused naming its `$` path
/// (`json.dumps` would write a token no JSON reader accepts).
pub(super) fn refuse_nonfinite(doc: &Bound<'_, PyAny>, what: &str) -> Result<()> {
    match nonfinite(doc, "$".to_owned()) {
        Some((path, x)) => Err(Failure::Schema(format!(
            "{what} refused (nothing of it recorded): {path}: expected a finite number, found the float {x}"
        ))),
        None => Ok(()),
    }
}

/// The path and value of the first non-finite float in dicts, lists and tuples under `v`.
fn nonfinite(v: &Bound<'_, PyAny>, path: String) -> Option<(String, f64)> {
    if let Ok(f) = v.cast::<PyFloat>() {
        let x = f.value();
        return (!x.is_finite()).then_some((path, x));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        return d.iter().find_map(|(k, x)| {
            let key = k.str().map(|s| s.to_string()).unwrap_or_default();
            nonfinite(&x, format!("{path}.{key}"))
        });
    }
    let items = v
        .cast::<PyList>()
        .map(|l| l.iter().collect::<Vec<_>>())
        .or_else(|_| v.cast::<PyTuple>().map(|t| t.iter().collect()))
        .ok()?;
    items
        .iter()
        .enumerate()
        .find_map(|(i, x)| nonfinite(x, format!("{path}[{i}]")))
}

pub(super) fn wandb_settings(py: Python<'_>, d: &Bound<'_, PyDict>) -> Result<WandbSettings> {
    for k in d.keys() {
        let k: String = k.extract().unwrap_or_default();
        if !WANDB_KEYS.contains(&k.as_str()) {
            return Err(Failure::Config(format!(
                "wandb['{k}']: unknown W&B setting (known: {})",
                WANDB_KEYS.join(", ")
            )));
        }
    }
    let v = json_text(py, d.as_any(), "wandb")?;
    serde_json::from_value(v).map_err(|e| Failure::Config(format!("wandb settings: {e}")))
}
