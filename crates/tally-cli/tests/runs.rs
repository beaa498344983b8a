//! `tally runs`: one row per run, as a table, JSON or CSV (`docs/contract/consumers.md` "The
//! runs table").

use std::path::Path;
use std::process::Command;
use tally_tfevents::{EventFileWriter, WriterOptions};

/// A run of `ret` = `base + step` for steps 0..=10, with `lr` in its run_config.json.
fn run(dir: &Path, base: f64, lr: f64) {
    std::fs::create_dir_all(dir).unwrap();
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    for step in 0..=10 {
        let v = base + step as f64;
        w.write_scalars(step, 100.0 + step as f64, &[("ret", v), ("loss", -v)])
            .unwrap();
    }
    w.close().unwrap();
    let config = format!(r#"{{"config": {{"lr": {lr}, "env": "cartpole"}}}}"#);
    std::fs::write(dir.join("run_config.json"), config).unwrap();
}

fn runs(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tally"))
        .arg("runs")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn json_has_one_flat_object_per_run_with_config_and_the_chosen_tags_figures() {
    let tmp = tempfile::tempdir().unwrap();
    run(&tmp.path().join("a"), 0.0, 0.1);
    run(&tmp.path().join("b"), 5.0, 0.2);
    let out = runs(&[tmp.path().to_str().unwrap(), "--tags", "re*", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 2);
    let b = &rows[1];
    assert_eq!(b["run"], "b");
    assert_eq!(b["config.config.lr"], 0.2);
    assert_eq!((&b["last_step"], &b["points"]), (&10.into(), &22.into()));
    assert_eq!(
        (&b["ret:last"], &b["ret:max"], &b["ret:min"]),
        (&15.0.into(), &15.0.into(), &5.0.into())
    );
    assert_eq!(
        (&b["ret:count"], &b["ret:max_step"]),
        (&11.into(), &10.into())
    );
    assert!(b.get("loss:last").is_none(), "only the chosen tags");
    assert_eq!(b["duration"], 10.0);
}

#[test]
fn the_table_shows_the_config_keys_that_differ_and_csv_every_column() {
    let tmp = tempfile::tempdir().unwrap();
    run(&tmp.path().join("a"), 0.0, 0.1);
    run(&tmp.path().join("b"), 5.0, 0.2);
    let out = runs(&[tmp.path().to_str().unwrap(), "--tags", "ret"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text.lines().next().unwrap();
    assert!(
        header.contains("config.lr") && header.contains("ret:last"),
        "{text}"
    );
    assert!(
        !header.contains("config.env"),
        "the same in every run: {text}"
    );
    assert!(text.lines().nth(2).unwrap().contains("15"), "{text}");
    // docs/contract/consumers.md "The runs table": the health findings last, ok when none.
    assert!(header.ends_with("health"), "{text}");
    assert!(text.lines().nth(1).unwrap().ends_with("ok"), "{text}");
    let out = runs(&[tmp.path().to_str().unwrap(), "--csv"]);
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(
        csv.starts_with(
            "run,dir,status,start,duration,last_step,points,findings,health,config.config.lr,config.config.env\n"
        ),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 3);
}

#[test]
fn a_run_that_cannot_be_read_is_skipped_and_named_the_others_listed() {
    let tmp = tempfile::tempdir().unwrap();
    run(&tmp.path().join("a"), 0.0, 0.1);
    let bad = tmp.path().join("b");
    std::fs::create_dir_all(&bad).unwrap();
    // A whole record whose data CRC is wrong: a corrupt record, not a truncated tail.
    let mut w = tally_tfevents::RecordWriter::new(Vec::new());
    w.write_record(b"not an event").unwrap();
    let mut bytes = w.into_inner();
    let n = bytes.len();
    bytes[n - 1] ^= 0xff;
    bytes.extend_from_slice(&bytes.clone());
    std::fs::write(bad.join("events.out.tfevents.1.h"), bytes).unwrap();
    let out = runs(&[tmp.path().to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 1);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("skipped") && err.contains("events.out.tfevents.1.h"),
        "{err}"
    );
}

#[test]
fn compare_groups_runs_by_config_best_mean_first() {
    let tmp = tempfile::tempdir().unwrap();
    run(&tmp.path().join("a1"), 0.0, 0.1);
    run(&tmp.path().join("a2"), 2.0, 0.1);
    run(&tmp.path().join("b1"), 5.0, 0.2);
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["compare", tmp.path().to_str().unwrap(), "--metric", "ret"])
        .args(["--by", "config.lr", "--reps", "200", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let groups: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(groups.len(), 2);
    // Final 10 % of steps 0..=10: steps 9 and 10, so base + 9.5.
    assert_eq!(groups[0]["key"]["config.lr"], 0.2);
    assert_eq!(groups[0]["mean"], 14.5);
    assert_eq!(groups[1]["n"], 2);
    assert_eq!(groups[1]["mean"], 10.5);
    assert_eq!(groups[1]["runs"], serde_json::json!(["a1", "a2"]));
    let bad = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args([
            "compare",
            tmp.path().to_str().unwrap(),
            "--metric",
            "ret",
            "--at",
            "last",
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("at=\"last\""));
}

/// The `tally: warning:` lines of a command's stderr, sorted.
fn warnings(stderr: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.starts_with("tally: warning:"))
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

#[test]
fn compare_reports_the_damage_tally_runs_reports() {
    let tmp = tempfile::tempdir().unwrap();
    run(&tmp.path().join("a"), 0.0, 0.1);
    run(&tmp.path().join("b"), 5.0, 0.1);
    // a: a writer killed mid-record (a truncated tail).
    let a = std::fs::read_dir(tmp.path().join("a"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("tfevents"))
        .unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(&a).unwrap();
    std::io::Write::write_all(&mut f, &[40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3]).unwrap();
    // b: a second file whose steps go back to 3 (a restart without a purge marker).
    let mut w = EventFileWriter::open(tmp.path().join("b"), WriterOptions::from_env()).unwrap();
    for step in 3..=5 {
        w.write_scalars(step, 500.0 + step as f64, &[("ret", 1.0)])
            .unwrap();
    }
    w.close().unwrap();
    let root = tmp.path().to_str().unwrap();
    let listed = runs(&[root, "--tags", "ret", "--json"]);
    let compared = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["compare", root, "--metric", "ret", "--reps", "50"])
        .output()
        .unwrap();
    assert!(compared.status.success(), "{compared:?}");
    let said = warnings(&listed.stderr);
    assert!(
        said.iter().any(|l| l.contains("truncated")) && said.len() >= 2,
        "{said:?}"
    );
    assert_eq!(warnings(&compared.stderr), said);
}

#[test]
fn compare_says_a_group_of_one_has_no_interval_a_key_no_run_has_and_a_metric_none_has() {
    let tmp = tempfile::tempdir().unwrap();
    run(&tmp.path().join("a1"), 0.0, 0.1);
    run(&tmp.path().join("a2"), 2.0, 0.1);
    run(&tmp.path().join("b1"), 5.0, 0.2);
    let root = tmp.path().to_str().unwrap();
    let compare = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tally"))
            .args(["compare", root, "--reps", "200"])
            .args(args)
            .output()
            .unwrap()
    };
    // lr 0.2 has one run: no interval, in the table and in JSON.
    let out = compare(&["--metric", "ret", "--by", "config.lr"]);
    let table = String::from_utf8_lossy(&out.stdout);
    let one = table.lines().find(|l| l.contains("0.2")).unwrap();
    assert!(one.contains("none (1 run)"), "{table}");
    let two = table.lines().find(|l| l.contains("0.1")).unwrap();
    assert!(!two.contains("none") && two.contains('['), "{table}");
    let out = compare(&["--metric", "ret", "--by", "config.lr", "--json"]);
    let groups: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let single = groups.iter().find(|g| g["n"] == 1).unwrap();
    assert!(
        single["mean_low"].is_null() && single["iqm_high"].is_null(),
        "{single}"
    );
    assert_eq!(single["mean"], 14.5);

    // A key no run has: said, and the runs not grouped under null.
    let out = compare(&["--metric", "ret", "--by", "config.nope"]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no run has configuration key \"config.nope\""),
        "{err}"
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("all runs") && !table.contains("null"),
        "{table}"
    );

    // A metric no run has: an error naming it.
    let out = compare(&["--metric", "rte"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\"rte\""),
        "{out:?}"
    );
}
