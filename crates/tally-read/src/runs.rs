//! The runs table: one row per run under the paths, what every front end shows of a run at a
//! glance (`tally runs`, `tally.runs`, the board's table; docs/contract/consumers.md "The runs
//! table").
//!
//! A row holds the run's name and directory, its status (`run_summary.json`, when there is
//! one), its first event's wall time and how long it ran, its last step and point count, its
//! configuration flattened (`run_config.json`), and for each chosen tag: count, last, min and
//! max (finite values), the step of the max, the mean over the last 10 % of the tag's steps and
//! how many values were not finite, and what the default health rules found in it. Every
//! number comes from one streamed read of the run's scalars (`runs/stream.rs`), taken as the
//! other readers take them (purge markers applied, steps going back kept).

mod column_types;
mod figures;
mod row;
mod stream;

pub use column_types::{column_types, micros, text, Kind, TAG_FIGURES};
pub use row::{final_cut, RunRow, TagStats, FINAL_SHARE};

/// The runs table's final mean of one series in reading order (`compare`'s `final` score).
pub(crate) fn final_mean(points: &[(i64, f64)]) -> Option<f64> {
    figures::Figures::final_mean(points)
}

use crate::columns::{resolve_inputs, run_name, ReadOptions};
use crate::files::RunDir;
use crate::parallel::each_run;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};
use stream::{read_row, RowRead, KEPT_POINTS};
use tally::health::RuleSet;

/// The table, with what reading it met.
pub struct RunsTable {
    /// One row per run read, in path order.
    pub rows: Vec<RunRow>,
    /// What the readers read past (truncated tails, purges, steps going back).
    pub damage: Vec<tally_tfevents::Damage>,
    /// What was not read, each path with why: what the listing skipped
    /// ([`resolve_inputs`]), then the runs not read under [`ReadOptions::skip_unreadable`].
    pub skipped: Vec<(PathBuf, String)>,
}

/// The runs table of `inputs` (files or directories, as `tally.read` takes them), with the
/// tags matching `tag_globs` summarized (`*` globs; none: no tag figures).
pub fn runs_table(
    inputs: &[PathBuf],
    tag_globs: &[String],
    opts: ReadOptions,
) -> Result<RunsTable, crate::Error> {
    let mut skipped = Vec::new();
    let (root, runs) = resolve_inputs(inputs, &mut skipped).map_err(crate::Error::Refused)?;
    let mut table = runs_table_of(root, runs, tag_globs, opts)?;
    skipped.append(&mut table.skipped);
    table.skipped = skipped;
    Ok(table)
}

/// The runs table of runs already listed (each a directory and its event files in reading
/// order), named against `root`. A run whose files hold no scalar has no row. Under
/// [`ReadOptions::skip_unreadable`] a run that cannot be read is listed in
/// [`RunsTable::skipped`]; otherwise the first one's error is the result.
pub fn runs_table_of(
    root: PathBuf,
    runs: Vec<RunDir>,
    tag_globs: &[String],
    opts: ReadOptions,
) -> Result<RunsTable, crate::Error> {
    let rules = RuleSet::defaults();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut table = RunsTable {
        rows: Vec::with_capacity(runs.len()),
        damage: Vec::new(),
        skipped: Vec::new(),
    };
    let mut failed = None;
    let read = |dir: &std::path::Path, files| {
        let name = run_name(&root, dir);
        read_row(name, dir, files, tag_globs, opts, &rules, now, KEPT_POINTS)
    };
    let whole = each_run(
        runs,
        read,
        |dir, read: Result<RowRead, String>| match read {
            Ok(RowRead { row, damage }) => {
                table.rows.extend(row);
                table.damage.extend(damage);
                true
            }
            Err(e) if opts.skip_unreadable => {
                table.skipped.push((dir, e));
                true
            }
            Err(e) => {
                failed = Some(e);
                false
            }
        },
    );
    match failed {
        Some(e) => Err(crate::Error::Refused(e)),
        None if !whole => Err(crate::Error::Refused("a reading thread failed".to_owned())),
        None => Ok(table),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::path::Path;
    use tally::health::Finding;
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
    fn a_run_too_large_to_keep_has_the_same_row_read_twice_from_its_files() {
        // docs/contract/consumers.md "The runs table": a run of any size costs the same memory.
        let root = tempfile::tempdir().unwrap();
        let events: Vec<Event> = (0..500)
            .map(|i| {
                let v = if i == 7 {
                    f64::INFINITY
                } else {
                    (i * 37 % 101) as f64
                };
                (
                    i,
                    10.0 + i as f64,
                    vec![("ret", v), ("loss", 0.5 * v), ("x", 1.0)],
                )
            })
            .collect();
        write(root.path(), &events);
        let files = crate::files::run_event_files(root.path()).unwrap();
        let row = |keep| {
            let globs = ["ret".to_owned(), "loss".to_owned()];
            let read = stream::read_row(
                "r".into(),
                root.path(),
                files.clone(),
                &globs,
                ReadOptions::default(),
                &RuleSet::defaults(),
                0.0,
                keep,
            );
            read.unwrap().row.unwrap()
        };
        let (held, streamed) = (row(KEPT_POINTS), row(10));
        assert_eq!(held, streamed);
        let names: Vec<&str> = held.tags.iter().map(|t| t.tag.as_str()).collect();
        assert_eq!(names, ["ret", "loss"]);
        // Steps 450..=499 by hand: the final 10 % of 0..=499.
        let by_hand: f64 = (450..500).map(|i| (i * 37 % 101) as f64).sum::<f64>() / 50.0;
        assert_eq!(held.tags[0].final_mean, Some(by_hand));
        assert_eq!(held.tags[0].nonfinite, 1);
    }

    #[test]
    fn each_row_carries_the_default_health_rules_findings_as_tally_health_finds_them() {
        // docs/contract/consumers.md "The runs table": `findings` and `health`.
        let root = tempfile::tempdir().unwrap();
        let sick = root.path().join("sick");
        let events: Vec<Event> = (0..200)
            .map(|i| {
                let v = if i == 120 {
                    f64::NAN
                } else {
                    1.0 + (i % 7) as f64
                };
                (i, 1e9 + i as f64, vec![("train/value_loss", v)])
            })
            .collect();
        write(&sick, &events);
        let clean: Vec<Event> = (0..200)
            .map(|i| {
                (
                    i,
                    1e9 + i as f64,
                    vec![("train/value_loss", 1.0 + (i % 7) as f64)],
                )
            })
            .collect();
        write(&root.path().join("clean"), &clean);
        let t = runs_table(&[root.path().to_owned()], &[], ReadOptions::default()).unwrap();
        let by_reader = crate::health::check_paths(
            std::slice::from_ref(&sick),
            &RuleSet::defaults(),
            0.0,
            &mut crate::Quiet,
        )
        .unwrap()
        .remove(0)
        .findings;
        let sick_row = row(&t, "sick");
        // NaN is not equal to itself: the findings compared by what they say.
        let said = |f: &[Finding]| -> Vec<String> { f.iter().map(|f| format!("{f:?}")).collect() };
        assert_eq!(said(sick_row.health.as_ref().unwrap()), said(&by_reader));
        assert_eq!(by_reader.len(), 1, "{by_reader:?}");
        let flat: std::collections::HashMap<_, _> = sick_row.flat().into_iter().collect();
        assert_eq!(flat["findings"], Value::from(1));
        assert_eq!(
            flat["health"],
            Value::from("nonfinite train/value_loss@120")
        );
        let flat: std::collections::HashMap<_, _> = row(&t, "clean").flat().into_iter().collect();
        assert_eq!(
            (&flat["findings"], &flat["health"]),
            (&Value::from(0), &Value::Null)
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
