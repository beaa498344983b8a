//! Reading a run directory back, for the commands that consume runs: its JSON artefacts (the
//! `run_config.json` facts, the schema-v1 gate on `run_summary.json`), and the tail of every
//! scalar series (constant memory, streamed across the run's files, [`crate::run_files`]).

use crate::error::CliError;
use crate::run_files::RunScalars;
use serde::Deserialize as _;
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use tally_schema::artifacts::LoggerFacts;
use tally_schema::legacy::{legacy_rows, retired_match};
use tally_schema::{Profile, SchemaError, TagRef, METRIC_SCHEMA_VERSION};
use tally_tfevents::{Damage, OnCorruption};

/// Read a JSON file beside the event file, if it exists.
pub fn read_json(path: &Path) -> Result<Option<Value>, CliError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|source| CliError::Json {
                path: path.to_owned(),
                source,
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CliError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// The last `n` values of every tag, in file order, how many values each tag had, and what
/// the reader found damaged.
#[derive(Debug, Default)]
pub struct Tails {
    /// tag → last n values.
    pub last: BTreeMap<String, VecDeque<f64>>,
    /// tag → number of values seen.
    pub counts: BTreeMap<String, u64>,
    /// The largest step of any scalar.
    pub max_step: Option<i64>,
    /// Truncated tails found, in reading order (a corrupt record is an error instead).
    pub damage: Vec<Damage>,
}

impl Tails {
    /// The mean of the last values of `tag`, if it had any.
    pub fn mean(&self, tag: &str) -> Option<f64> {
        let v = self.last.get(tag)?;
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// Stream a run's `files` (in run order) keeping the last `n` values per tag.
pub fn read_tails(files: &[PathBuf], n: usize) -> Result<Tails, CliError> {
    let mut tails = Tails::default();
    let mut reader = RunScalars::new(files.to_vec(), OnCorruption::Error);
    while let Some((_, s)) = reader.next_scalar()? {
        tails.max_step = Some(tails.max_step.map_or(s.step, |m| m.max(s.step)));
        *tails.counts.entry(s.tag.clone()).or_default() += 1;
        let q = tails.last.entry(s.tag).or_default();
        if q.len() == n {
            q.pop_front();
        }
        q.push_back(s.value);
    }
    tails.damage = reader.take_damage();
    Ok(tails)
}

/// Whether `tag` is canonical schema-v1 (closed registry or open family; a user's own metric
/// is not).
pub fn is_canonical(tag: &str) -> bool {
    matches!(
        tally_schema::lookup(tag),
        Ok(TagRef::Metric(_) | TagRef::Family(..))
    )
}

/// Whether `tag` lies in a canonical group but is not a schema tag (a typo, or a tag of a newer
/// schema): a schema-v1 consumer refuses it rather than guess.
pub fn is_unknown_canonical(tag: &str) -> bool {
    matches!(tally_schema::lookup(tag), Err(SchemaError::Unknown { .. }))
}

/// Whether `tag` is a recognised pre-schema tag (in the legacy map or the retired list).
pub fn is_legacy(tag: &str) -> bool {
    legacy_rows(tag).next().is_some() || retired_match(tag).is_some()
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
pub fn require_schema_v1(summary_path: &Path, summary: Option<&Value>) -> Result<(), CliError> {
    let refused = |message: String| Err(CliError::Refused(message));
    let Some(summary) = summary else {
        return refused(format!(
            "{}: missing: a schema-v1 run writes run_summary.json with metric_schema_version; \
             for a pre-schema run use --legacy-unversioned",
            summary_path.display()
        ));
    };
    match summary.get("metric_schema_version") {
        None => refused(format!(
            "{}: no metric_schema_version: refusing to guess the schema of an unversioned run; \
             --legacy-unversioned is only for runs from before the canonical schema",
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
