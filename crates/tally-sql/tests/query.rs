//! `tally_sql::query` on runs written here: the two tables' columns and types, answers checked
//! against sums computed by hand, read-only queries, and errors naming the culprit
//! (docs/contract/consumers.md "SQL over runs").

use std::path::{Path, PathBuf};
use tally_sql::arrow::array::{Array, AsArray};
use tally_sql::arrow::datatypes::{DataType, Float64Type, Int64Type, TimeUnit};
use tally_sql::{query, Answer, Error};
use tally_tfevents::{encode_scalar_event, RecordWriter};

/// A run in `dir`: steps 0..n of `ret` (= step × scale) and `loss` (= 1), one event per step,
/// wall time 1000 + step, and a run_config.json with `lr` and `seed`.
fn run(dir: &Path, n: i64, scale: f64, lr: f64, seed: i64) {
    std::fs::create_dir_all(dir).unwrap();
    let mut w = RecordWriter::new(Vec::new());
    for step in 0..n {
        let mut buf = Vec::new();
        let scalars = [("ret", step as f64 * scale), ("loss", 1.0)];
        encode_scalar_event(step, 1000.0 + step as f64, &scalars, &mut buf);
        w.write_record(&buf).unwrap();
    }
    std::fs::write(dir.join("events.out.tfevents.1.host"), w.into_inner()).unwrap();
    let config = format!(r#"{{"config": {{"lr": {lr}, "seed": {seed}, "net": [64, 64]}}}}"#);
    std::fs::write(dir.join("run_config.json"), config).unwrap();
}

/// Three runs: two seeds at lr 0.1 (scales 1 and 3), one at lr 0.01 (scale 10), 100 steps.
fn sweep() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    run(&root.path().join("lr0.1/s0"), 100, 1.0, 0.1, 0);
    run(&root.path().join("lr0.1/s1"), 100, 3.0, 0.1, 1);
    run(&root.path().join("lr0.01/s0"), 100, 10.0, 0.01, 0);
    root
}

fn ask(root: &Path, sql: &str) -> Answer {
    query(&[PathBuf::from(root)], sql, false).unwrap()
}

fn strings(a: &Answer, col: usize) -> Vec<String> {
    let b = tally_sql::arrow::compute::concat_batches(&a.schema, &a.batches).unwrap();
    let c = tally_sql::arrow::compute::cast(b.column(col), &DataType::Utf8).unwrap();
    let s = c.as_string::<i32>();
    (0..s.len()).map(|i| s.value(i).to_owned()).collect()
}

fn floats(a: &Answer, col: usize) -> Vec<f64> {
    let b = tally_sql::arrow::compute::concat_batches(&a.schema, &a.batches).unwrap();
    let c = tally_sql::arrow::compute::cast(b.column(col), &DataType::Float64).unwrap();
    c.as_primitive::<Float64Type>().values().to_vec()
}

#[test]
fn scalars_hold_every_point_with_its_run_tag_step_wall_time_and_value() {
    let root = sweep();
    let a = ask(
        root.path(),
        "SELECT run, tag, count(*) AS n, sum(value) AS s, min(step) AS lo, max(wall_time) AS w \
         FROM scalars GROUP BY run, tag ORDER BY run, tag",
    );
    assert_eq!(
        strings(&a, 0),
        [
            "lr0.01/s0",
            "lr0.01/s0",
            "lr0.1/s0",
            "lr0.1/s0",
            "lr0.1/s1",
            "lr0.1/s1"
        ]
    );
    assert_eq!(
        strings(&a, 1),
        ["loss", "ret", "loss", "ret", "loss", "ret"]
    );
    assert_eq!(floats(&a, 2), [100.0; 6]);
    // sum of step × scale over 0..100 = 4950 × scale; loss sums to 100.
    assert_eq!(
        floats(&a, 3),
        [100.0, 49_500.0, 100.0, 4_950.0, 100.0, 14_850.0]
    );
    assert_eq!(floats(&a, 4), [0.0; 6]);
    assert_eq!(floats(&a, 5), [1099.0; 6]);
}

#[test]
fn the_sweep_question_joins_runs_config_with_each_runs_final_value() {
    let root = sweep();
    // Each run's last `ret`, averaged per learning rate: lr 0.1 → (99 + 297) / 2 = 198,
    // lr 0.01 → 990.
    let a = ask(
        root.path(),
        r#"SELECT r."config.config.lr" AS lr, avg(s.value) AS final, count(*) AS n
           FROM scalars s JOIN runs r ON s.run = r.run
           WHERE s.tag = 'ret' AND s.step = r.last_step
           GROUP BY lr ORDER BY final DESC"#,
    );
    assert_eq!(floats(&a, 0), [0.01, 0.1]);
    assert_eq!(floats(&a, 1), [990.0, 198.0]);
    assert_eq!(floats(&a, 2), [1.0, 2.0]);
}

#[test]
fn runs_columns_take_the_type_their_values_share() {
    let root = sweep();
    let a = ask(root.path(), "SELECT * FROM runs ORDER BY run");
    let field = |name: &str| a.schema.field_with_name(name).unwrap().data_type().clone();
    assert_eq!(
        field("start"),
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert_eq!(field("last_step"), DataType::Int64);
    assert_eq!(field("points"), DataType::Int64);
    assert_eq!(field("config.config.lr"), DataType::Float64);
    assert_eq!(field("config.config.seed"), DataType::Int64);
    // A list is not a column type of its own: JSON text.
    assert_eq!(field("config.config.net"), DataType::Utf8);
    let i = a.schema.index_of("config.config.net").unwrap();
    assert_eq!(strings(&a, i), ["[64,64]"; 3]);
    let i = a.schema.index_of("points").unwrap();
    let b = tally_sql::arrow::compute::concat_batches(&a.schema, &a.batches).unwrap();
    assert_eq!(
        b.column(i).as_primitive::<Int64Type>().values().to_vec(),
        [200, 200, 200]
    );
    let i = a.schema.index_of("start").unwrap();
    let starts = b
        .column(i)
        .as_primitive::<tally_sql::arrow::datatypes::TimestampMicrosecondType>();
    assert_eq!(starts.value(0), 1_000_000_000);
}

#[test]
fn a_column_whose_values_mix_types_is_text() {
    let root = sweep();
    std::fs::write(
        root.path().join("lr0.1/s1/run_config.json"),
        r#"{"config": {"lr": "high", "seed": 1}}"#,
    )
    .unwrap();
    let a = ask(
        root.path(),
        r#"SELECT "config.config.lr" FROM runs ORDER BY run"#,
    );
    assert_eq!(a.schema.field(0).data_type(), &DataType::Utf8);
    assert_eq!(strings(&a, 0), ["0.01", "0.1", "high"]);
}

#[test]
fn an_answer_with_no_rows_still_has_its_columns() {
    let root = sweep();
    let a = ask(
        root.path(),
        "SELECT run, value FROM scalars WHERE value > 1e9",
    );
    assert_eq!(a.rows(), 0);
    let names: Vec<&str> = a
        .schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    assert_eq!(names, ["run", "value"]);
    assert!(!a.to_ipc_stream().unwrap().is_empty());
}

#[test]
fn queries_that_would_change_anything_are_refused() {
    let root = sweep();
    for sql in [
        "CREATE TABLE t AS SELECT 1",
        "DROP TABLE runs",
        "INSERT INTO runs SELECT * FROM runs",
        "SET datafusion.execution.batch_size = 1",
        "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '/etc/hostname'",
        "COPY runs TO 'runs.csv'",
    ] {
        let e = query(&[root.path().to_path_buf()], sql, false)
            .err()
            .unwrap();
        assert!(matches!(e, Error::Query(_)), "{sql}: {e}");
        // The statement is named, not a file format it would need.
        let first = sql.split_whitespace().next().unwrap().to_lowercase();
        assert!(e.to_string().to_lowercase().contains(&first), "{sql}: {e}");
    }
    let sql = "EXPLAIN COPY runs TO 'runs.csv'";
    let e = query(&[root.path().to_path_buf()], sql, false)
        .err()
        .unwrap();
    assert!(e.to_string().contains("COPY"), "{sql}: {e}");
}

#[test]
fn errors_name_the_unknown_table_or_column_and_the_missing_path() {
    let root = sweep();
    let e = query(&[root.path().to_path_buf()], "SELECT * FROM scalar", false)
        .err()
        .unwrap();
    assert!(e.to_string().contains("scalar"), "{e}");
    let e = query(&[root.path().to_path_buf()], "SELECT rn FROM runs", false)
        .err()
        .unwrap();
    assert!(e.to_string().contains("rn"), "{e}");
    let missing = root.path().join("nope");
    let e = query(&[missing], "SELECT 1", false).err().unwrap();
    assert!(matches!(e, Error::Read(_)), "{e}");
    assert!(e.to_string().contains("nope"), "{e}");
}

#[test]
fn non_finite_values_are_kept_as_they_are() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("r");
    std::fs::create_dir_all(&dir).unwrap();
    let mut w = RecordWriter::new(Vec::new());
    for (step, v) in [(0, 1.0), (1, f64::NAN), (2, f64::INFINITY), (3, 2.0)] {
        let mut buf = Vec::new();
        encode_scalar_event(step, 5.0, &[("x", v)], &mut buf);
        w.write_record(&buf).unwrap();
    }
    std::fs::write(dir.join("events.out.tfevents.1.host"), w.into_inner()).unwrap();
    let a = ask(
        root.path(),
        "SELECT count(*) FILTER (WHERE isnan(value)), count(*) FILTER (WHERE value = 'inf'::double), \
         count(*) FROM scalars",
    );
    assert_eq!(floats(&a, 0), [1.0]);
    assert_eq!(floats(&a, 1), [1.0]);
    assert_eq!(floats(&a, 2), [4.0]);
}

#[test]
fn when_every_run_is_left_out_the_tables_are_empty_not_an_error() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("broken");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("events.out.tfevents.1.host"), [0u8; 64]).unwrap();
    let a = ask(root.path(), "SELECT count(*) FROM runs");
    assert_eq!(floats(&a, 0), [0.0]);
    assert_eq!(a.skipped.len(), 1, "the run left out is named");
    let a = ask(root.path(), "SELECT count(*) FROM scalars");
    assert_eq!(floats(&a, 0), [0.0]);
}
