//! Reading a trace back, whole or cut short by a crash.

use serde_json::Value;
use std::path::Path;

/// A trace's events and whether the file ended before its closing `]`.
#[derive(Debug, Clone)]
pub struct TraceFile {
    /// Every complete event, in file order.
    pub events: Vec<Value>,
    /// The file had no closing `]`: the run did not finish the trace (a crash or a kill);
    /// `events` holds what was complete.
    pub truncated: bool,
}

/// Read a trace-event file: the JSON Array Format this crate writes (a missing tail is
/// tolerated: the events up to the last complete line), or the `{"traceEvents": [...]}`
/// object format other tools write.
pub fn read_trace(path: &Path) -> crate::Result<TraceFile> {
    let text = std::fs::read_to_string(path).map_err(crate::Error::io("read trace", path))?;
    let bad = |source| crate::Error::Json {
        path: path.to_owned(),
        source,
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(events)) => Ok(TraceFile {
            events,
            truncated: false,
        }),
        Ok(Value::Object(mut o)) => match o.remove("traceEvents") {
            Some(Value::Array(events)) => Ok(TraceFile {
                events,
                truncated: false,
            }),
            _ => Err(bad(serde::de::Error::custom(
                "a trace object needs a \"traceEvents\" array",
            ))),
        },
        Ok(_) => Err(bad(serde::de::Error::custom(
            "a trace is an array of events or an object with \"traceEvents\"",
        ))),
        Err(whole) if text.trim_start().starts_with('[') => {
            // Written line by line: the complete lines, closed, are the events that survived.
            let kept = text.rfind('\n').map_or("", |n| &text[..n]);
            let events = serde_json::from_str::<Vec<Value>>(&format!("{kept}\n]"))
                .map_err(|_| bad(whole))?;
            Ok(TraceFile {
                events,
                truncated: true,
            })
        }
        Err(e) => Err(bad(e)),
    }
}
