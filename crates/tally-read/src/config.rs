//! A run's configuration as flat dotted keys, whoever wrote the run (docs/contract/consumers.md
//! "The runs table"): tally's `run_config.json` flattened, else the hyperparameters another
//! writer recorded with TensorBoard's hparams plugin (torch's and tensorboardX's
//! `add_hparams`), as `hparams.<name>`.

use crate::error::Error;
use crate::files::dir_event_files;
use crate::meta::flat_config;
use prost::Message;
use serde_json::Value;
use std::path::Path;
use tally_tfevents::hparams::{proto_value::Kind, HParamsPluginData, SESSION_START_INFO_TAG};
use tally_tfevents::EventReader;

/// Events read at the start of each event file for the hparams summary: torch and tensorboardX
/// write it first, in a file of its own.
pub const HPARAMS_SCAN_EVENTS: usize = 16;

/// The run in `dir`'s configuration: `run_config.json` flattened when the run has one, else
/// its hparams (empty when neither). A file that cannot be read is skipped here: the scalar
/// readers report its damage.
pub fn run_configuration(dir: &Path) -> Result<Vec<(String, Value)>, Error> {
    let flat = flat_config(dir)?;
    if !flat.is_empty() || dir.join("run_config.json").exists() {
        return Ok(flat);
    }
    let mut out = Vec::new();
    for file in dir_event_files(dir)? {
        let Ok(f) = tally_tfevents::open::open_regular(&file) else {
            continue;
        };
        let mut events = EventReader::new(std::io::BufReader::new(f));
        for _ in 0..HPARAMS_SCAN_EVENTS {
            let Ok(Some(event)) = events.read_event() else {
                break;
            };
            let Some(tally_tfevents::proto::event::What::Summary(summary)) = event.what else {
                continue;
            };
            for v in summary
                .value
                .iter()
                .filter(|v| v.tag == SESSION_START_INFO_TAG)
            {
                let content = v
                    .metadata
                    .as_ref()
                    .and_then(|m| m.plugin_data.as_ref())
                    .filter(|p| p.plugin_name == "hparams")
                    .map(|p| p.content.as_slice());
                let Some(start) = content
                    .and_then(|c| HParamsPluginData::decode(c).ok())
                    .and_then(|d| d.session_start_info)
                else {
                    continue;
                };
                for (name, value) in start.hparams {
                    let value = match value.kind {
                        Some(Kind::Number(n)) => {
                            serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
                        }
                        Some(Kind::Text(s)) => Value::String(s),
                        Some(Kind::Bool(b)) => Value::Bool(b),
                        None => Value::Null,
                    };
                    let key = format!("hparams.{name}");
                    if !out.iter().any(|(k, _)| *k == key) {
                        out.push((key, value));
                    }
                }
            }
        }
    }
    Ok(out)
}
