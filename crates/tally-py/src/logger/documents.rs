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
    let mut size = Size::default();
    size.add(v, "$");
    if size.total > MAX_DOCUMENT_TEXT {
        // Refused before json.dumps copies it: a document's size is bounded, and so is the
        // memory its conversion takes (docs/contract/run-artifacts.md "Run config").
        return Err(Failure::Config(format!(
            "{what}: about {} bytes of text, more than the {} a run's document may hold (its \
             largest string, {} bytes, is at {}): keep large data out of the configuration",
            size.total, MAX_DOCUMENT_TEXT, size.largest.0, size.largest.1
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

/// Most text (strings and keys) a document turned to JSON may hold: a quarter of what
/// `tally validate` reads back, leaving room for JSON's escapes and the run's own members.
const MAX_DOCUMENT_TEXT: usize = tally_schema::conformance::MAX_ARTIFACT_BYTES as usize / 4;

/// The text in dicts, lists and tuples under a document, and its largest string's path.
#[derive(Default)]
struct Size {
    total: usize,
    largest: (usize, String),
}

impl Size {
    fn add(&mut self, v: &Bound<'_, PyAny>, path: &str) {
        if self.total > MAX_DOCUMENT_TEXT {
            return;
        }
        if let Ok(s) = v.cast::<PyString>() {
            let n = s.len().unwrap_or(0);
            self.total += n;
            if n > self.largest.0 {
                self.largest = (n, path.to_owned());
            }
        } else if let Ok(d) = v.cast::<PyDict>() {
            for (k, x) in d.iter() {
                let key = k.str().map(|s| s.to_string()).unwrap_or_default();
                self.total += key.len();
                self.add(&x, &format!("{path}.{key}"));
            }
        } else if let Ok(l) = v.cast::<PyList>() {
            for (i, x) in l.iter().enumerate() {
                self.add(&x, &format!("{path}[{i}]"));
            }
        } else if let Ok(t) = v.cast::<PyTuple>() {
            for (i, x) in t.iter().enumerate() {
                self.add(&x, &format!("{path}[{i}]"));
            }
        }
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
