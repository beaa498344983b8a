//! The runs table: one row per run under the paths, what every front end shows of a run at a
//! glance (`tally runs`, `tally.runs`, the board's table; docs/contract/consumers.md "The runs
//! table").
//!
//! A row holds the run's name and directory, its status (`run_summary.json`, when there is
//! one), its first event's wall time and how long it ran, its last step and point count, its
//! configuration flattened (`run_config.json`), and for each chosen tag: count, last, min and
//! max (finite values), the step of the max, the mean over the last 10 % of the tag's steps and
//! how many values were not finite. Every number comes from one read of the run's scalars,
//! taken as the other readers take them (purge markers applied, steps going back kept).

mod column_types;

pub use column_types::{column_types, micros, text, Kind, TAG_FIGURES};

use crate::columns::{read_all, read_run_dirs, Columns, ReadOptions};
use crate::config::run_configuration;
use crate::files::RunDir;
use crate::meta::read_status;
use serde_json::Value;
use std::path::PathBuf;
use tally_schema::legacy::glob_match;

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
            dir,
        })
    }

    /// The row as flat named columns, the one naming every front end uses: `run`, `dir`,
    /// `status`, `start`, `duration`, `last_step`, `points`, then `config.<dotted key>` and
    /// `<tag>:<figure>` ([`TAG_FIGURES`]). A value that is not a finite number is `null`.
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

/// The table, with what reading it met.
pub struct RunsTable {
    /// One row per run read, in path order.
    pub rows: Vec<RunRow>,
    /// What the readers read past (truncated tails, purges, steps going back).
    pub damage: Vec<tally_tfevents::Damage>,
    /// Runs not read under [`ReadOptions::skip_unreadable`], each with why.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Per run and chosen tag, what one pass over the rows gathers.
#[derive(Clone, Default)]
struct Acc {
    count: u64,
    last: f64,
    min: Option<f64>,
    max: Option<f64>,
    max_step: Option<i64>,
    first_step: i64,
    last_step: i64,
    nonfinite: u64,
    /// Order of the tag's first point in the run, for the row's tag order.
    first_row: usize,
    final_sum: f64,
    final_n: u64,
}

/// Per run, what one pass over the rows gathers.
#[derive(Clone, Default)]
struct RunAcc {
    points: u64,
    first_wall: Option<f64>,
    last_wall: Option<f64>,
    last_step: Option<i64>,
}

/// The runs table of `inputs` (files or directories, as `tally.read` takes them), with the
/// tags matching `tag_globs` summarized (`*` globs; none: no tag figures).
pub fn runs_table(
    inputs: &[PathBuf],
    tag_globs: &[String],
    opts: ReadOptions,
) -> Result<RunsTable, crate::Error> {
    let columns = read_all(inputs, None, opts).map_err(crate::Error::Refused)?;
    table_of(columns, tag_globs)
}

/// The runs table of runs already listed, named against `root` ([`read_run_dirs`]).
pub fn runs_table_of(
    root: PathBuf,
    runs: Vec<RunDir>,
    tag_globs: &[String],
    opts: ReadOptions,
) -> Result<RunsTable, crate::Error> {
    let columns = read_run_dirs(root, runs, None, opts).map_err(crate::Error::Refused)?;
    table_of(columns, tag_globs)
}

fn table_of(columns: Columns, tag_globs: &[String]) -> Result<RunsTable, crate::Error> {
    let rows = rows_of(&columns, tag_globs)?;
    Ok(RunsTable {
        rows,
        damage: columns.damage,
        skipped: columns.skipped,
    })
}

/// The rows of the runs table of scalars already read (every tag of every run, as
/// [`read_all`] with no globs reads them): what [`runs_table`] does after reading, for a front
/// end that also keeps the scalars (`tally sql`).
pub fn rows_of(columns: &Columns, tag_globs: &[String]) -> Result<Vec<RunRow>, crate::Error> {
    let (runs, tags) = gather(columns, tag_globs);
    let mut rows = Vec::with_capacity(runs.len());
    for (code, (run, accs)) in runs.into_iter().zip(tags).enumerate() {
        let dir = columns.run_dirs[code].clone();
        let mut chosen: Vec<(usize, TagStats)> = accs
            .into_iter()
            .filter_map(|(tag, a)| {
                let name = columns.tags.get(tag).to_owned();
                (a.count > 0).then(|| (a.first_row, stats(name, a)))
            })
            .collect();
        chosen.sort_by_key(|(first, _)| *first);
        rows.push(RunRow {
            name: columns.runs.get(code).to_owned(),
            status: read_status(&dir),
            start: run.first_wall,
            duration: run.first_wall.zip(run.last_wall).map(|(a, b)| b - a),
            last_step: run.last_step,
            points: run.points,
            config: run_configuration(&dir)?,
            tags: chosen.into_iter().map(|(_, s)| s).collect(),
            dir,
        });
    }
    Ok(rows)
}

fn stats(tag: String, a: Acc) -> TagStats {
    TagStats {
        tag,
        count: a.count,
        last: a.last,
        min: a.min,
        max: a.max,
        max_step: a.max_step,
        final_mean: (a.final_n > 0).then(|| a.final_sum / a.final_n as f64),
        last_step: a.last_step,
        nonfinite: a.nonfinite,
    }
}

/// Two passes over the rows: the run and tag figures, then the final-window means (which need
/// each tag's step range).
fn gather(c: &Columns, globs: &[String]) -> (Vec<RunAcc>, Vec<Vec<(usize, Acc)>>) {
    let chosen_codes: Vec<usize> = (0..c.tags.len())
        .filter(|&t| globs.iter().any(|g| glob_match(g, c.tags.get(t))))
        .collect();
    // Each chosen tag's slot in a run's list, by tag code.
    let mut slot = vec![usize::MAX; c.tags.len()];
    for (i, &t) in chosen_codes.iter().enumerate() {
        slot[t] = i;
    }
    let n_runs = c.runs.len();
    let mut runs = vec![RunAcc::default(); n_runs];
    let mut accs = vec![vec![Acc::default(); chosen_codes.len()]; n_runs];
    let mut row = 0usize;
    for chunk in &c.chunks {
        for i in 0..chunk.rows() {
            let (run, tag) = (chunk.run_codes[i] as usize, chunk.tag_codes[i] as usize);
            let (step, wall, v) = (chunk.step[i], chunk.wall_time[i], chunk.value[i]);
            let r = &mut runs[run];
            r.points += 1;
            r.first_wall = Some(r.first_wall.map_or(wall, |w| w.min(wall)));
            r.last_wall = Some(r.last_wall.map_or(wall, |w| w.max(wall)));
            r.last_step = Some(r.last_step.map_or(step, |s| s.max(step)));
            if slot[tag] == usize::MAX {
                row += 1;
                continue;
            }
            let a = &mut accs[run][slot[tag]];
            if a.count == 0 {
                a.first_row = row;
                a.first_step = step;
                a.last_step = step;
            }
            a.count += 1;
            a.last = v;
            a.first_step = a.first_step.min(step);
            a.last_step = a.last_step.max(step);
            if v.is_finite() {
                a.min = Some(a.min.map_or(v, |m| m.min(v)));
                if a.max.is_none_or(|m| v > m) {
                    a.max = Some(v);
                    a.max_step = Some(step);
                }
            } else {
                a.nonfinite += 1;
            }
            row += 1;
        }
    }
    // The final window: steps at or past the cut, finite values only.
    for chunk in &c.chunks {
        for i in 0..chunk.rows() {
            let tag = chunk.tag_codes[i] as usize;
            if slot[tag] == usize::MAX {
                continue;
            }
            let a = &mut accs[chunk.run_codes[i] as usize][slot[tag]];
            let cut = final_cut(a.first_step, a.last_step);
            let v = chunk.value[i];
            if chunk.step[i] as f64 >= cut && v.is_finite() {
                a.final_sum += v;
                a.final_n += 1;
            }
        }
    }
    let tags = accs
        .into_iter()
        .map(|list| {
            list.into_iter()
                .enumerate()
                .map(|(i, a)| (chosen_codes[i], a))
                .collect()
        })
        .collect();
    (runs, tags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use tally_tfevents::{encode_scalar_event, RecordWriter};

    /// One event: step, wall time, scalars.
    type Event = (i64, f64, Vec<(&'static str, f64)>);

    /// An event file of `events` in `dir`.
    fn write(dir: &Path, events: &[Event]) {
        std::fs::create_dir_all(dir).unwrap();
        let mut w = RecordWriter::new(Vec::new());
        for (step, wall, scalars) in events {
            let mut buf = Vec::new();
            encode_scalar_event(*step, *wall, scalars, &mut buf);
            w.write_record(&buf).unwrap();
        }
        std::fs::write(dir.join("events.out.tfevents.1.host"), w.into_inner()).unwrap();
    }

    fn row<'a>(t: &'a RunsTable, name: &str) -> &'a RunRow {
        t.rows.iter().find(|r| r.name == name).unwrap()
    }

    #[test]
    fn each_run_has_its_status_times_steps_config_and_chosen_tag_figures() {
        let root = tempfile::tempdir().unwrap();
        let a = root.path().join("a");
        // Steps 0..=100 of `ret` (i as f64), a NaN at 50, and `loss` that is not chosen.
        let events: Vec<Event> = (0..=100)
            .map(|i| {
                let v = if i == 50 { f64::NAN } else { i as f64 };
                (i, 1000.0 + i as f64, vec![("ret", v), ("loss", -1.0)])
            })
            .collect();
        write(&a, &events);
        std::fs::write(
            a.join("run_config.json"),
            r#"{"run": {"algo": "ppo"}, "config": {"lr": 0.001, "net": {}}}"#,
        )
        .unwrap();
        std::fs::write(a.join("run_summary.json"), r#"{"status": "completed"}"#).unwrap();
        write(&root.path().join("b"), &[(7, 5.0, vec![("ret", 3.0)])]);
        let t = runs_table(
            &[root.path().to_owned()],
            &["re*".into()],
            ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(t.rows.len(), 2);
        let a = row(&t, "a");
        assert_eq!(a.status.as_deref(), Some("completed"));
        assert_eq!((a.start, a.duration), (Some(1000.0), Some(100.0)));
        assert_eq!((a.last_step, a.points), (Some(100), 202));
        let keys: Vec<&str> = a.config.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["run.algo", "config.lr", "config.net"]);
        let [ret] = a.tags.as_slice() else {
            panic!("only the chosen tag: {:?}", a.tags)
        };
        assert_eq!((ret.tag.as_str(), ret.count, ret.last), ("ret", 101, 100.0));
        assert_eq!(
            (ret.min, ret.max, ret.max_step),
            (Some(0.0), Some(100.0), Some(100))
        );
        assert_eq!(ret.nonfinite, 1);
        // Steps 90..=100: the last 10 % of the range 0..=100.
        assert_eq!(ret.final_mean, Some(95.0));
        let b = row(&t, "b");
        assert_eq!(
            (b.status.as_ref(), b.duration, b.config.len()),
            (None, Some(0.0), 0)
        );
        assert_eq!(
            b.tags[0].final_mean,
            Some(3.0),
            "one step: the last point alone"
        );
    }

    #[test]
    fn a_config_key_spelled_nested_and_dotted_is_refused_naming_the_file_and_key() {
        let root = tempfile::tempdir().unwrap();
        write(root.path(), &[(1, 1.0, vec![("x", 1.0)])]);
        std::fs::write(
            root.path().join("run_config.json"),
            r#"{"a": {"b": 1}, "a.b": 2}"#,
        )
        .unwrap();
        let err = runs_table(&[root.path().to_owned()], &[], ReadOptions::default())
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("run_config.json") && err.contains("'a.b'"),
            "{err}"
        );
    }
}
