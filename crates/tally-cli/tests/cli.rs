//! End-to-end tests of the `tally` binary: schema and export.

use serde_json::Value;
use std::process::Command;
use tally_tfevents::{EventFileWriter, WriterOptions};

fn tally(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn schema_json_lists_the_registry_with_units() {
    let out = tally(&["schema", "--json"]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let metrics = v["metrics"].as_array().unwrap();
    assert!(metrics.len() >= 80, "{}", metrics.len());
    let unit = |tag: &str| {
        metrics.iter().find(|m| m["tag"] == tag).unwrap()["unit"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // These three are seconds, the _ms fields milliseconds (docs/contract/schema.md, units).
    assert_eq!(unit("Perf/learning_time"), "s");
    assert_eq!(unit("Perf/collection_time"), "s");
    assert_eq!(unit("Perf/iteration_time"), "s");
    assert_eq!(unit("Perf/learner_collector_wait_ms"), "ms");
    assert_eq!(v["metric_schema_version"], 1);
}

#[test]
fn schema_table_and_markdown_render() {
    let table = String::from_utf8(tally(&["schema"]).stdout).unwrap();
    assert!(table.starts_with("canonical metric schema v1:"));
    assert!(table.contains("Perf/learner_replay_stage_ms") && table.contains("terminal only"));
    let md = tally(&["schema", "--markdown"]).stdout;
    let committed = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/metrics.md"
    ))
    .unwrap();
    assert!(
        md == committed,
        "docs/metrics.md differs from `tally schema --markdown`"
    );
}

/// A finished run with two user metrics, one defined.
fn run_with_user_metrics(root: &std::path::Path) -> std::path::PathBuf {
    let mut c = tally::LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(root.join("run"));
    c.max_iterations = Some(2);
    c.backend = tally::Backend::None;
    let mut log = tally::Logger::new(c).unwrap();
    let spec = tally::UserMetricSpec {
        unit: "s".into(),
        reduction: tally::Reduction::Max,
        ..Default::default()
    };
    log.define_metric("charts/time*", spec).unwrap();
    for i in 1..=2 {
        let input = tally::StepInput::new(i)
            .metric("charts/time_per_update", 0.5)
            .metric("aux", 1.0);
        log.step(&input).unwrap();
    }
    log.close(tally::RunStatus::Completed).unwrap();
    log.run_dir().to_owned()
}

#[test]
fn schema_of_a_run_adds_its_user_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = run_with_user_metrics(tmp.path());
    let dir_text = dir.to_str().unwrap();
    let table = String::from_utf8(tally(&["schema", dir_text]).stdout).unwrap();
    assert!(table.starts_with("canonical metric schema v1:"), "{table}");
    let user = table.split("User metrics of ").nth(1).expect(&table);
    let row = user
        .lines()
        .find(|l| l.contains("charts/time_per_update"))
        .expect(user);
    assert!(
        row.contains("unit s") && row.contains("reduction max"),
        "{row}"
    );
    assert!(
        user.lines().any(|l| l.trim_start().starts_with("aux ")),
        "{user}"
    );
    let out = tally(&["schema", "--json", dir_text]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["canonical"]["metrics"].as_array().unwrap().len() >= 80);
    let tags: Vec<&str> = v["user_metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tag"].as_str().unwrap())
        .collect();
    assert_eq!(tags, ["charts/time_per_update", "aux"]);
    let missing = tally(&["schema", tmp.path().join("nope").to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("is not a run directory"));
}

fn write_run(dir: &std::path::Path) -> std::path::PathBuf {
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    for i in 1..=3i64 {
        w.write_scalars(
            i * 256,
            1000.0 + i as f64,
            &[("Loss/critic", 0.5 * i as f64), ("reward/a,b", -1.0)],
        )
        .unwrap();
    }
    let path = w.path().to_owned();
    w.close().unwrap();
    path
}

#[test]
fn export_streams_every_scalar_as_jsonl_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path());
    let out = tally(&["export", dir.path().to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[0]["tag"], "Loss/critic");
    assert_eq!(rows[0]["step"], 256);
    assert_eq!(rows[0]["value"], 0.5);
    assert_eq!(rows[2]["value"], 1.0);
    assert_eq!(rows[5]["wall_time"], 1003.0);
    let csv = String::from_utf8(
        tally(&["export", "--format", "csv", dir.path().to_str().unwrap()]).stdout,
    )
    .unwrap();
    let lines: Vec<_> = csv.lines().collect();
    assert_eq!(lines[0], "run,tag,step,wall_time,value");
    assert!(
        lines[2].contains(",\"reward/a,b\",256,1001,-1"),
        "{}",
        lines[2]
    );
}

#[test]
fn export_of_a_missing_path_names_it() {
    let out = tally(&["export", "/nonexistent/run"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/run"));
    let empty = tempfile::tempdir().unwrap();
    let out = tally(&["export", empty.path().to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no events.out.tfevents"));
}

#[test]
fn export_reports_corruption_with_file_and_offset_after_emitting_good_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_run(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 6; // inside the last record's payload
    bytes[last] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let out = tally(&["export", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(path.to_str().unwrap()) && err.contains("corrupt record at byte"),
        "{err}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        4,
        "the two good steps were exported"
    );
    let out = tally(&["export", "--on-corrupt", "skip", path.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("skipped 1 corrupt record"));
}

#[test]
fn closed_stdout_and_stderr_end_the_printing_commands_quietly() {
    // `tally ... 2>&1 | head -1` once head has gone: stdout and stderr are one pipe nobody
    // reads. Output is the reader's choice, not an error; a message that cannot be written is
    // dropped (eprintln! panicked: exit 101), the exit code is the command's own.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let torn = tmp.path().join("torn");
    std::fs::create_dir(&run).unwrap();
    std::fs::create_dir(&torn).unwrap();
    let file = write_run(&run);
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(
        torn.join(file.file_name().unwrap()),
        &bytes[..bytes.len() - 3],
    )
    .unwrap();
    // A corrupt record mid-file: `runs` skips the run and says so on stderr.
    let corrupt = tmp.path().join("corrupt");
    std::fs::create_dir(&corrupt).unwrap();
    let mut bad = bytes.clone();
    bad[20] ^= 0xff;
    std::fs::write(corrupt.join(file.file_name().unwrap()), bad).unwrap();
    let corrupt = corrupt.to_str().unwrap().to_owned();
    let (run, torn) = (run.to_str().unwrap(), torn.to_str().unwrap());
    for (args, code) in [
        // A skipped run is said on stderr.
        (vec!["runs", &corrupt], 0),
        // A metric no run has is an error (docs/contract/consumers.md "Comparing runs"): it
        // cannot be printed, exit 1 all the same.
        (
            vec!["compare", run, "--metric", "no/such_tag", "--reps", "10"],
            1,
        ),
        (vec!["schema", "--json"], 0),
        (vec!["schema", "--markdown"], 0),
        (vec!["export", run, "--format", "csv"], 0),
        (vec!["export", run, "--format", "jsonl"], 0),
        // A torn tail is reported on stderr, which nobody reads either.
        (vec!["export", torn, "--format", "csv"], 0),
        // Refused (no run_summary.json): the error cannot be printed, exit 1 all the same.
        (vec!["extract", torn, "--json"], 1),
        (vec!["diagnose", torn, "--json"], 1),
    ] {
        let (reader, writer) = rustix::pipe::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_tally"))
            .args(&args)
            .stdout(std::process::Stdio::from(writer.try_clone().unwrap()))
            .stderr(std::process::Stdio::from(writer))
            .status()
            .unwrap();
        assert_eq!(out.code(), Some(code), "{args:?}");
    }
}
