//! `record_config`: a writer's run configuration into `run_config.json`'s `config`, so
//! `tally.read_runs(config=True)` (and every reader of run facts) sees a `SummaryWriter` run's
//! hyperparameters as it sees a `tally.Logger`'s (docs/contract/integrations.md "A writer's
//! configuration"). Secrets are redacted as in every artefact a run writes.

use crate::errors::Failure;
use pyo3::prelude::*;
use serde_json::{Map, Value};
use std::path::PathBuf;
use tally::run::{write_redacted, RUN_CONFIG_FILE};

/// Merge the JSON object `update` into `log_dir/run_config.json`'s `config` (its keys replace
/// the same keys, as W&B's `config.update`), written atomically with secrets redacted. A file
/// that is not a JSON object is refused naming it, never overwritten.
#[pyfunction]
pub fn record_config(py: Python<'_>, log_dir: PathBuf, update: &str) -> PyResult<()> {
    let update: Map<String, Value> = serde_json::from_str(update)
        .map_err(|e| Failure::Config(format!("a run configuration must be a JSON object: {e}")))?;
    py.detach(|| {
        let path = log_dir.join(RUN_CONFIG_FILE);
        let mut doc = match std::fs::read_to_string(&path) {
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(doc)) => doc,
                _ => {
                    return Err(Failure::Config(format!(
                        "{}: not a JSON object; the configuration was not recorded",
                        path.display()
                    )))
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
            Err(source) => {
                return Err(Failure::Tally(tally::Error::Io {
                    op: "read run config",
                    path,
                    source,
                }))
            }
        };
        let config = doc
            .entry("config")
            .or_insert_with(|| Value::Object(Map::new()));
        if !config.is_object() {
            *config = Value::Object(Map::new());
        }
        if let Value::Object(config) = config {
            config.extend(update);
        }
        write_redacted(&path, &Value::Object(doc)).map_err(Failure::Tally)?;
        Ok(())
    })?;
    Ok(())
}

/// The JSON document `doc` with every secret redacted, as JSON text (docs/contract/run-artifacts.md
/// "Secrets"): what a writer sends to W&B and writes as hparams.
#[pyfunction]
pub fn redact_json(doc: &str) -> PyResult<String> {
    let value: Value = serde_json::from_str(doc)
        .map_err(|e| Failure::Config(format!("redact: not a JSON document: {e}")))?;
    Ok(tally::redact::redact_value(&value).to_string())
}

/// Free text with every secret found by its shape redacted (a writer's `add_text`).
#[pyfunction]
pub fn redact_text(text: &str) -> String {
    tally::redact::redact_text(text).into_owned()
}

/// The rows of a `|param|value|` Markdown table (CleanRL's `hyperparameters`) as a JSON object,
/// by the rule every reader applies to any writer's text (`tally_read::param_table`); `None`
/// for any other text. The writer records them so, the readers find them so.
#[pyfunction]
pub fn param_table(text: &str) -> Option<String> {
    let rows = tally_read::param_table::param_table(text)?;
    Some(Value::Object(rows.into_iter().collect()).to_string())
}
