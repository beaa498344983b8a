//! A run's metadata: its JSON artefacts beside the event files (the `run_config.json` facts,
//! the status and the schema-v1 gate of `run_summary.json`).

use crate::error::Error;
use serde::Deserialize as _;
use serde_json::Value;
use std::path::Path;
use tally_schema::artifacts::LoggerFacts;
use tally_schema::{Profile, METRIC_SCHEMA_VERSION};

/// A JSON artefact's text: a regular file only, opened without waiting, as event files are (a
/// FIFO named `run_summary.json` would block a plain read: docs/contract/untrusted-input.md
/// "Special files").
fn read_text(path: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut tally_tfevents::open::open_regular(path)?, &mut text)?;
    Ok(text)
}

/// Read a JSON file beside the event file, if it exists.
pub fn read_json(path: &Path) -> Result<Option<Value>, Error> {
    match read_text(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|source| Error::Json {
                path: path.to_owned(),
                source,
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// What the consumer tools take from `run_config.json`: `run.algo`, `run.task`, `run.sim_backend`,
/// `run.name` and the typed
/// `run.logger` block (`docs/contract/run-artifacts.md`). Each part is optional: a run written
/// by another tool may lack any of them, or the whole file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunConfigFacts {
    /// `run.algo`.
    pub algo: Option<String>,
    /// `run.task`.
    pub task: Option<String>,
    /// `run.sim_backend` (empty when the run named none).
    pub sim: Option<String>,
    /// `run.name`, the run's title when the user gave one.
    pub name: Option<String>,
    /// `run.logger`, when present and complete.
    pub logger: Option<LoggerFacts>,
}

impl RunConfigFacts {
    /// The facts of a parsed `run_config.json` (`None`: the run has none).
    pub fn from_config(config: Option<&Value>) -> Self {
        let Some(run) = config.and_then(|c| c.get("run")) else {
            return RunConfigFacts::default();
        };
        let text = |key: &str| run.get(key).and_then(Value::as_str).map(str::to_owned);
        RunConfigFacts {
            algo: text("algo"),
            task: text("task"),
            sim: text("sim_backend"),
            name: text("name"),
            // A block that is not a whole `LoggerFacts` (another tool's) counts as absent.
            logger: run
                .get("logger")
                .and_then(|l| LoggerFacts::deserialize(l).ok()),
        }
    }

    /// The facts of `dir/run_config.json`; a missing, unreadable or invalid file gives none.
    pub fn read_or_default(dir: &Path) -> Self {
        let config = read_json(&dir.join("run_config.json")).ok().flatten();
        RunConfigFacts::from_config(config.as_ref())
    }

    /// The timing profile: the logger's, else the algorithm's.
    pub fn profile(&self) -> Option<Profile> {
        self.logger
            .as_ref()
            .map(|l| l.profile)
            .or_else(|| tally::schema::Algo::parse(self.algo.as_deref()?).profile())
    }
}

/// Check the run summary's schema stamp for a schema-v1 consumer; the error says which rule
/// failed and what to do.
pub fn require_schema_v1(summary_path: &Path, summary: Option<&Value>) -> Result<(), Error> {
    let refused = |message: String| Err(Error::Refused(message));
    let Some(summary) = summary else {
        return refused(format!(
            "{}: missing: a schema-v1 run writes run_summary.json with metric_schema_version; \
             a pre-schema run is read by `tally extract --legacy-unversioned`",
            summary_path.display()
        ));
    };
    match summary.get("metric_schema_version") {
        None => refused(format!(
            "{}: no metric_schema_version: refusing to guess the schema of an unversioned run; \
             `tally extract --legacy-unversioned` is only for runs from before the canonical schema",
            summary_path.display()
        )),
        Some(Value::Number(n)) if n.as_u64() == Some(u64::from(METRIC_SCHEMA_VERSION)) => Ok(()),
        Some(Value::Number(n)) if n.is_u64() || n.is_i64() => refused(format!(
            "{}: unsupported metric_schema_version {n}: this tally reads version {METRIC_SCHEMA_VERSION}; upgrade tally",
            summary_path.display()
        )),
        Some(other) => refused(format!(
            "{}: metric_schema_version must be the integer {METRIC_SCHEMA_VERSION}, found {}",
            summary_path.display(),
            describe(other)
        )),
    }
}

/// `dir/run_config.json` flattened to dotted keys in the file's order (`run.algo`,
/// `config.training.lr`), for the runs table and `read_runs(config=True)`; empty when the run
/// has no such file. An empty object is a value, not a level. A key spelled both nested and
/// dotted is refused: keeping either would hide the other.
pub fn flat_config(dir: &Path) -> Result<Vec<(String, Value)>, Error> {
    let path = dir.join("run_config.json");
    let Some(doc) = read_json(&path)? else {
        return Ok(Vec::new());
    };
    let Value::Object(top) = doc else {
        return Err(Error::Refused(format!(
            "{}: expected a JSON object, found {}",
            path.display(),
            describe(&doc)
        )));
    };
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![(String::new(), top.into_iter())];
    while let Some((prefix, mut members)) = stack.pop() {
        let Some((k, v)) = members.next() else {
            continue;
        };
        let key = format!("{prefix}{k}");
        stack.push((prefix, members));
        match v {
            Value::Object(inner) if !inner.is_empty() => {
                stack.push((format!("{key}."), inner.into_iter()));
            }
            v => {
                if !seen.insert(key.clone()) {
                    return Err(Error::Refused(format!(
                        "{}: key '{key}' appears both nested and as a dotted name",
                        path.display()
                    )));
                }
                out.push((key, v));
            }
        }
    }
    Ok(out)
}

/// A short description of a JSON value's type and content, for messages.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// The run's status from `dir/run_summary.json` (`running`, `completed`, ...), if readable.
pub fn read_status(dir: &Path) -> Option<String> {
    let doc: serde_json::Value =
        serde_json::from_str(&read_text(&dir.join("run_summary.json")).ok()?).ok()?;
    doc["status"].as_str().map(str::to_owned)
}

/// Refuse a run stamped with a schema version other than 1 in `run_config.json` or
/// `run_summary.json`, as `extract` does (`docs/contract/consumers.md` "The schema-v1 gate");
/// an unstamped run (another tool's) is shown generically, so a missing stamp passes.
pub fn check_schema(dir: &Path) -> Result<(), Error> {
    for name in ["run_config.json", "run_summary.json"] {
        let path = dir.join(name);
        // A file still being written is read again on a later poll, never guessed at.
        let Ok(Some(doc)) = read_json(&path) else {
            continue;
        };
        if doc.get("metric_schema_version").is_some() {
            require_schema_v1(&path, Some(&doc))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{read_json, read_status};

    #[test]
    fn a_fifo_in_an_artefacts_place_is_refused_at_once_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let summary = dir.path().join("run_summary.json");
        rustix::fs::mkfifoat(rustix::fs::CWD, &summary, rustix::fs::Mode::RUSR).unwrap();
        // Read plainly, a FIFO with no writer blocks here.
        let e = read_json(&summary).unwrap_err().to_string();
        assert!(
            e.contains("run_summary.json") && e.contains("a FIFO"),
            "{e}"
        );
        assert_eq!(read_status(dir.path()), None);
    }
}
