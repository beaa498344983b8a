//! `tally sql PATH... QUERY`: the answer as a table, CSV or JSON; a bad query is a usage error
//! naming it (`docs/contract/consumers.md` "SQL over runs").

use std::path::Path;
use std::process::Command;
use tally_tfevents::{EventFileWriter, WriterOptions};

/// A run of `ret` = `base + step` for steps 0..=10, a NaN at step 5 of `kl`.
fn run(dir: &Path, base: f64) {
    std::fs::create_dir_all(dir).unwrap();
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    for step in 0..=10 {
        let kl = if step == 5 { f64::NAN } else { 0.01 };
        w.write_scalars(
            step,
            100.0 + step as f64,
            &[("ret", base + step as f64), ("kl", kl)],
        )
        .unwrap();
    }
    w.close().unwrap();
}

fn sql(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tally"))
        .arg("sql")
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn csv_has_a_header_and_one_line_per_row_in_the_querys_order() {
    let tmp = tempfile::tempdir().unwrap();
    run(&tmp.path().join("a"), 0.0);
    run(&tmp.path().join("b"), 5.0);
    let root = tmp.path().to_str().unwrap();
    let out = sql(&[
        root,
        "SELECT run, max(value) AS best FROM scalars WHERE tag = 'ret' GROUP BY run ORDER BY best DESC",
        "--csv",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "run,best\nb,15.0\na,10.0\n");
}

#[test]
fn the_table_prints_the_answer_and_an_empty_answer_its_columns() {
    let tmp = tempfile::tempdir().unwrap();
    run(&tmp.path().join("a"), 0.0);
    let root = tmp.path().to_str().unwrap();
    let out = sql(&[root, "SELECT run, step FROM scalars WHERE isnan(value)"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.contains("| run | step |"), "{table}");
    assert!(table.contains("| a   | 5    |"), "{table}");
    let out = sql(&[root, "SELECT run, step FROM scalars WHERE step > 1000"]);
    assert_eq!(text(&out.stdout), "no rows (run, step)\n");
    let out = sql(&[root, "SELECT run FROM runs WHERE run = 'z'", "--json"]);
    assert_eq!(text(&out.stdout).trim(), "[]");
}

#[test]
fn a_query_that_does_not_parse_or_plan_exits_2_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    run(&tmp.path().join("a"), 0.0);
    let root = tmp.path().to_str().unwrap();
    for (query, culprit) in [
        ("SELECT nope FROM runs", "nope"),
        ("SELECT * FROM scalar", "scalar"),
        ("DELETE FROM runs", "DML"),
    ] {
        let out = sql(&[root, query]);
        assert_eq!(out.status.code(), Some(2), "{query}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains(culprit),
            "{query}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    }
}
