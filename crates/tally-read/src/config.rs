//! A run's configuration as flat dotted keys, whoever wrote the run (docs/contract/consumers.md
//! "A run's configuration"): tally's `run_config.json` flattened; else what another writer
//! recorded in its event files ([`crate::recorded`]): the hparams plugin's values as
//! `hparams.<name>` (in the run's own files, or in the timestamped directory `add_hparams`
//! makes below it), a `|param|value|` text table's rows as `config.<param>`, the keys tally's
//! own writer gives them; and in every case the `key=value` folder names of the run's path as
//! `path.<key>`.

use crate::error::Error;
use crate::files::{dir_event_files, hparams_dirs};
use crate::meta::flat_config;
use crate::param_table::path_pairs;
use crate::recorded::recorded;
use serde_json::Value;
use std::path::{Component, Path};

/// The run in `dir`'s configuration (module doc); empty when nothing records one.
pub fn run_configuration(dir: &Path) -> Result<Vec<(String, Value)>, Error> {
    let mut out = flat_config(dir)?;
    if out.is_empty() && !dir.join("run_config.json").exists() {
        let own = recorded(&dir_event_files(dir)?);
        let hparams = own.hparams.or_else(|| {
            hparams_dirs(dir)
                .into_iter()
                .find_map(|files| recorded(&files).hparams)
        });
        let keyed = |prefix: &str, pairs: Vec<(String, Value)>| {
            pairs
                .into_iter()
                .map(|(k, v)| (format!("{prefix}.{k}"), v))
                .collect::<Vec<_>>()
        };
        out.extend(keyed("hparams", hparams.unwrap_or_default()));
        out.extend(keyed("config", own.table));
    }
    // Deeper folders name the run more closely: theirs replace an outer folder's.
    let mut path: Vec<(String, Value)> = Vec::new();
    for part in dir.components() {
        let Component::Normal(name) = part else {
            continue;
        };
        for (k, v) in path_pairs(&name.to_string_lossy()) {
            path.retain(|(seen, _)| *seen != k);
            path.push((k, v));
        }
    }
    for (k, v) in path {
        let key = format!("path.{k}");
        if !out.iter().any(|(seen, _)| *seen == key) {
            out.push((key, v));
        }
    }
    Ok(out)
}
