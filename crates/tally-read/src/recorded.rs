//! The configuration another writer recorded at the start of its event files
//! (docs/contract/consumers.md "A run's configuration"): the hyperparameters of TensorBoard's
//! hparams plugin (torch's and tensorboardX's `add_hparams`) and `|param|value|` text tables
//! (CleanRL's `hyperparameters`), whoever wrote them. Writers record both before the first
//! step, so only the first [`SCAN_EVENTS`] events of each file are read.

use crate::param_table::param_table;
use prost::Message;
use serde_json::Value;
use std::path::PathBuf;
use tally_tfevents::hparams::{proto_value::Kind, HParamsPluginData, SESSION_START_INFO_TAG};
use tally_tfevents::open_event_file;
use tally_tfevents::plugin_summaries::{tensor_text, TEXT_PLUGIN_NAME};
use tally_tfevents::proto::{event, summary};

/// Events read at the start of each event file: torch and tensorboardX write the hparams
/// summary first, in a file of its own; CleanRL its table right after creating the writer.
pub const SCAN_EVENTS: usize = 16;

/// What a run's files recorded of its configuration.
#[derive(Debug, Default)]
pub struct Recorded {
    /// The hparams session's values, by name; `None` when no file starts a session (an
    /// `add_hparams` with no value still starts one).
    pub hparams: Option<Vec<(String, Value)>>,
    /// The rows of `|param|value|` text tables, by name, a later row replacing an earlier one.
    pub table: Vec<(String, Value)>,
}

/// What `files` recorded at their start. A file that cannot be read records nothing here: the
/// scalar readers report it.
pub fn recorded(files: &[PathBuf]) -> Recorded {
    let mut out = Recorded::default();
    for file in files {
        let Ok(mut events) = open_event_file(file) else {
            continue;
        };
        for _ in 0..SCAN_EVENTS {
            let Ok(Some(e)) = events.read_event() else {
                break;
            };
            let Some(event::What::Summary(s)) = e.what else {
                continue;
            };
            for v in s.value {
                take(&mut out, v);
            }
        }
    }
    out
}

/// One summary value: an hparams session start or a text table.
fn take(out: &mut Recorded, v: summary::Value) {
    let plugin = v
        .metadata
        .as_ref()
        .and_then(|m| m.plugin_data.as_ref())
        .map(|p| (p.plugin_name.as_str(), p.content.as_slice()));
    match plugin {
        Some(("hparams", content)) if v.tag == SESSION_START_INFO_TAG => {
            let Some(start) = HParamsPluginData::decode(content)
                .ok()
                .and_then(|d| d.session_start_info)
            else {
                return;
            };
            let hparams = out.hparams.get_or_insert_with(Vec::new);
            for (name, value) in start.hparams {
                let value = match value.kind {
                    Some(Kind::Number(n)) => {
                        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
                    }
                    Some(Kind::Text(s)) => Value::String(s),
                    Some(Kind::Bool(b)) => Value::Bool(b),
                    None => Value::Null,
                };
                if !hparams.iter().any(|(k, _)| *k == name) {
                    hparams.push((name, value));
                }
            }
        }
        Some((TEXT_PLUGIN_NAME, _)) => {
            let Some(summary::value::Value::Tensor(t)) = &v.value else {
                return;
            };
            for (key, value) in param_table(&tensor_text(t)).unwrap_or_default() {
                match out.table.iter_mut().find(|(k, _)| *k == key) {
                    Some(slot) => slot.1 = value,
                    None => out.table.push((key, value)),
                }
            }
        }
        _ => {}
    }
}
