//! A run's row of the runs table and its flat columns, the one naming every front end uses
//! (docs/contract/consumers.md "The runs table").

use crate::config::run_configuration;
use crate::meta::read_status;
use serde_json::Value;
use std::path::PathBuf;
use tally::health::Finding;

use super::column_types::TAG_FIGURES;

/// The share of a tag's step range, at its end, that [`TagStats::final_mean`] averages.
pub const FINAL_SHARE: f64 = 0.1;

/// The first step of the final window of a series spanning `first..=last`: a point at or
/// past it counts toward the final mean (the runs table's and `compare`'s one rule).
pub fn final_cut(first: i64, last: i64) -> f64 {
    last as f64 - FINAL_SHARE * (last - first) as f64
}

/// One chosen tag's figures in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct TagStats {
    /// The tag.
    pub tag: String,
    /// Points of the tag.
    pub count: u64,
    /// The value read last (as TensorBoard shows it last), finite or not.
    pub last: f64,
    /// The least finite value (`None` when none is finite).
    pub min: Option<f64>,
    /// The greatest finite value.
    pub max: Option<f64>,
    /// The step of the first point holding [`TagStats::max`].
    pub max_step: Option<i64>,
    /// The mean of the finite values whose step lies in the last [`FINAL_SHARE`] of the tag's
    /// step range (the last point alone when the range is one step).
    pub final_mean: Option<f64>,
    /// The tag's last step.
    pub last_step: i64,
    /// Values that were NaN or infinite.
    pub nonfinite: u64,
}

/// One run's row.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// The run's directory relative to the common root of the paths (`.` for the root).
    pub name: String,
    /// The run's directory.
    pub dir: PathBuf,
    /// `run_summary.json`'s status (`running`, `completed`, ...); `None` without one.
    pub status: Option<String>,
    /// Wall time of its first scalar (seconds since the epoch).
    pub start: Option<f64>,
    /// Seconds from its first scalar's wall time to its last's.
    pub duration: Option<f64>,
    /// The greatest step of any tag.
    pub last_step: Option<i64>,
    /// Scalar points of every tag.
    pub points: u64,
    /// `run_config.json` flattened to dotted keys.
    pub config: Vec<(String, Value)>,
    /// The chosen tags this run has, in the order the run first logged them.
    pub tags: Vec<TagStats>,
    /// What the default health rules found, in the order they first fired
    /// (docs/contract/health.md); `None` where the run was not judged (the Parquet dataset's
    /// runs files, built from what each export adds).
    pub health: Option<Vec<Finding>>,
}

impl RunRow {
    /// The row of a run whose files hold no scalar yet (one just started, or one that logs
    /// only text or images): its status and configuration, no figures.
    pub fn without_scalars(name: String, dir: PathBuf) -> Result<RunRow, crate::Error> {
        Ok(RunRow {
            name,
            status: read_status(&dir),
            start: None,
            duration: None,
            last_step: None,
            points: 0,
            config: run_configuration(&dir)?,
            tags: Vec::new(),
            health: Some(Vec::new()),
            dir,
        })
    }

    /// The row as flat named columns, the one naming every front end uses: `run`, `dir`,
    /// `status`, `start`, `duration`, `last_step`, `points`, `findings` and `health` (when the
    /// run was judged), then `config.<dotted key>` and `<tag>:<figure>` ([`TAG_FIGURES`]). A
    /// value that is not a finite number is `null`.
    pub fn flat(&self) -> Vec<(String, Value)> {
        let num = |v: Option<f64>| {
            v.and_then(serde_json::Number::from_f64)
                .map_or(Value::Null, Value::Number)
        };
        let int = |v: Option<i64>| v.map_or(Value::Null, Value::from);
        let mut out = vec![
            ("run".to_owned(), Value::from(self.name.clone())),
            ("dir".to_owned(), Value::from(self.dir.to_string_lossy())),
            (
                "status".to_owned(),
                self.status.clone().map_or(Value::Null, Value::from),
            ),
            ("start".to_owned(), num(self.start)),
            ("duration".to_owned(), num(self.duration)),
            ("last_step".to_owned(), int(self.last_step)),
            ("points".to_owned(), Value::from(self.points)),
        ];
        if let Some(health) = &self.health {
            out.push(("findings".to_owned(), Value::from(health.len())));
            out.push(("health".to_owned(), health_text(health)));
        }
        for (k, v) in &self.config {
            out.push((format!("config.{k}"), v.clone()));
        }
        for t in &self.tags {
            let figures = [
                Value::from(t.count),
                num(Some(t.last)),
                num(t.min),
                num(t.max),
                int(t.max_step),
                num(t.final_mean),
                Value::from(t.last_step),
                Value::from(t.nonfinite),
            ];
            for (name, v) in TAG_FIGURES.iter().zip(figures) {
                out.push((format!("{}:{name}", t.tag), v));
            }
        }
        out
    }
}

/// Findings in one line, `rule tag@first_step` each, `; ` between them (`null` when none fired).
fn health_text(health: &[Finding]) -> Value {
    if health.is_empty() {
        return Value::Null;
    }
    let each: Vec<String> = health
        .iter()
        .map(|f| match f.tag.as_str() {
            "" => format!("{}@{}", f.rule.as_str(), f.first_step),
            tag => format!("{} {tag}@{}", f.rule.as_str(), f.first_step),
        })
        .collect();
    Value::from(each.join("; "))
}
