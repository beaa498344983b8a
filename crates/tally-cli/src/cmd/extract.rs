//! `tally extract`: prints what [`tally_read::extract`] found, as aligned text or JSON.

use serde_json::{Map, Value};
use std::io::Write;
use tally_read::damage::damage_json;
use tally_read::extract::Extraction;

/// Print figures as aligned text or JSON (with a `damage` list: file, offset, kind, detail).
pub fn print(extraction: &Extraction, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let figures = &extraction.figures;
    if json {
        let mut map: Map<String, Value> = figures
            .iter()
            .map(|(k, v)| {
                (
                    (*k).to_owned(),
                    v.and_then(serde_json::Number::from_f64)
                        .map_or(Value::Null, Value::Number),
                )
            })
            .collect();
        map.insert("damage".into(), damage_json(&extraction.damage));
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default()
        )
    } else {
        for (label, v) in figures {
            match v {
                Some(v) => writeln!(out, "{label:40} {v:10.3}")?,
                None => writeln!(out, "{label:40} {:>10}", "missing")?,
            }
        }
        Ok(())
    }
}
