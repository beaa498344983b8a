//! End-to-end tests of `tally validate`: kinds, directories, output lines and exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "support/run.rs"]
mod run;
use run::tally;

fn fixtures(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/artifacts")
        .join(sub)
}

fn files(sub: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(fixtures(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn fixture(sub: &str, name: &str) -> String {
    fixtures(sub)
        .join(format!("{name}.json"))
        .to_string_lossy()
        .into_owned()
}

#[test]
fn every_valid_fixture_prints_one_ok_line_and_exits_0() {
    // A one-line OK per passing file; exit 0 only when all pass.
    let paths = files("valid");
    let args: Vec<&str> = std::iter::once("validate")
        .chain(paths.iter().map(String::as_str))
        .collect();
    let out = tally(&args);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), paths.len(), "{text}");
    for (line, path) in lines.iter().zip(&paths) {
        assert!(line.starts_with(&format!("{path}: OK (")), "{line}");
    }
    assert!(text.contains("soak artifact 0.3.0, status failed, classification learner_failure"));
}

#[test]
fn every_violation_is_printed_as_file_path_expected_found_and_exits_1() {
    // Every violation names the JSON path, the expected and the found value; all of
    // them, not just the first.
    let file = fixture("invalid", "soak.drain_high_water_below_occupancy");
    let out = tally(&["validate", &file]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let p = "$.run_summary.runtime_manifest.replay_ingress";
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            format!("{file}: {p}.occupancy: expected 0 (a completed run drains the replay ingress), found the integer 1"),
            format!("{file}: {p}.high_water_occupancy: expected at least occupancy (1), found the integer 0"),
            format!("{file}: {p}.high_water_occupancy: expected a positive integer (a completed run used the ingress), found the integer 0"),
            format!("{file}: {p}.published_sequence: expected total_env_steps / ingress_slot_rows (20), found the integer 21"),
        ]
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 of 1 file failed validation"), "{err}");
}

#[test]
fn every_invalid_fixture_exits_1_with_at_least_one_violation_line() {
    for file in files("invalid") {
        let out = tally(&["validate", &file]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{file}: {text}");
        assert!(!text.is_empty(), "{file}");
        for line in text.lines() {
            let rest = line
                .strip_prefix(&format!("{file}: $"))
                .unwrap_or_else(|| panic!("{line}"));
            assert!(
                rest.contains(": expected ") && rest.contains(", found "),
                "{line}"
            );
        }
    }
}

#[test]
fn one_failing_file_fails_the_run_while_the_others_still_report_ok() {
    let good = fixture("valid", "run_summary.completed");
    let bad = fixture("invalid", "run_summary.metric_version_string");
    let out = tally(&["validate", &good, &bad]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!("{good}: OK (run summary")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{bad}: $.metric_schema_version: expected the integer 1 (metric schema version; a \
             string is not a version), found the string \"1\""
        )),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 of 2 files failed validation"));
}

#[test]
fn a_directory_means_its_run_summary_json() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("valid", "run_summary.completed"),
        dir.path().join("run_summary.json"),
    )
    .unwrap();
    let out = tally(&["validate", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let want = dir.path().join("run_summary.json");
    assert!(stdout(&out).starts_with(&format!("{}: OK (", want.display())));

    let empty = tempfile::tempdir().unwrap();
    let out = tally(&["validate", empty.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("$: expected a run directory holding run_summary.json, found"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_demo_run_directory_validates_for_every_profile() {
    // The real producer: what `tally demo` writes must pass its own validator, on-policy runs
    // (iterations counted from 0) included.
    for algo in ["flashsac", "ppo", "appo"] {
        let root = tempfile::tempdir().unwrap();
        let log_root = format!("training.log_root={}", root.path().display());
        let demo = tally(&[
            "demo",
            "--algo",
            algo,
            "--iterations",
            "20",
            "--panel",
            "off",
            &log_root,
        ]);
        assert!(
            demo.status.success(),
            "{algo}: {}",
            String::from_utf8_lossy(&demo.stderr)
        );
        let run_dir = stdout(&demo)
            .lines()
            .find_map(|l| l.strip_prefix("run: ").map(str::to_owned))
            .expect("demo prints its run directory");
        let out = tally(&["validate", &run_dir]);
        assert_eq!(out.status.code(), Some(0), "{algo}: {}", stdout(&out));
        assert!(
            stdout(&out).contains("OK (run summary, metric schema v1"),
            "{algo}: {}",
            stdout(&out)
        );
    }
}

#[test]
fn a_file_named_run_summary_json_is_a_run_summary_whatever_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run_summary.json");
    std::fs::write(&file, "{}").unwrap();
    let out = tally(&["validate", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains(
            "$.metric_schema_version: expected the integer 1 (metric schema version; a consumer \
             never guesses a missing version), found missing"
        ),
        "{text}"
    );
    assert!(text.contains("$.status: expected one of"), "{text}");
}

#[test]
fn an_unrecognised_document_names_the_three_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("thing.json");
    std::fs::write(&file, r#"{"hello": 1}"#).unwrap();
    let out = tally(&["validate", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains(
            "$: expected a run summary (metric_schema_version), a runtime manifest \
             (schema_version) or a soak artifact (schema_version \"0.3.0\"), found an object \
             with keys hello"
        ),
        "{}",
        stdout(&out)
    );
}

#[test]
fn unparsable_json_fails_and_nan_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.json");
    // Python's json.dumps writes NaN for a float('nan') backpressure_wait_s.
    std::fs::write(
        &file,
        r#"{"schema_version": 1, "replay_ingress": {"backpressure_wait_s": NaN}}"#,
    )
    .unwrap();
    let out = tally(&["validate", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("$: expected valid JSON (NaN and Infinity are not JSON: a producer must write finite numbers), found"),
        "{text}"
    );
    let missing = dir.path().join("nope.json");
    let out = tally(&["validate", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("$: expected a readable JSON file, found"));
}

#[test]
fn completed_requires_the_lifecycle_members_of_a_standalone_manifest() {
    // The manifest validator defaults to completed=False; --completed adds the lifecycle
    // members (docs/contract/manifest-and-soak.md).
    let early = fixture("valid", "runtime_manifest.early_failure");
    let out = tally(&["validate", &early]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("checked as an early-failure manifest"));
    let out = tally(&["validate", "--completed", &early]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(text.contains(&format!(
        "{early}: $.inference_ring_capacity: expected a positive integer (required when the run \
         completed), found missing"
    )));
    let completed = fixture("valid", "runtime_manifest.completed");
    let out = tally(&["validate", "--completed", &completed]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("checked as a completed run's"));
}

#[test]
fn validate_without_a_path_is_a_usage_error() {
    let out = tally(&["validate"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Runs `tally validate` under a 1 GiB address-space limit, killed after 60 s, so a reader
/// that hangs or slurps its input fails the test instead of the machine.
fn validate_bounded(path: &Path) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576; exec timeout -s KILL 60 \"$0\" validate \"$1\"")
        .arg(env!("CARGO_BIN_EXE_tally"))
        .arg(path)
        .output()
        .unwrap()
}

#[test]
fn non_regular_files_are_refused_before_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("pipe.json");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let dir_summary = tmp.path().join("run");
    std::fs::create_dir_all(dir_summary.join("run_summary.json")).unwrap();
    for (path, what) in [
        (fifo.clone(), "a FIFO"),
        (PathBuf::from("/dev/zero"), "a character device"),
        // A run directory whose run_summary.json is a directory.
        (dir_summary.clone(), "a directory"),
    ] {
        let out = validate_bounded(&path);
        assert_eq!(out.status.code(), Some(1), "{}", path.display());
        let text = stdout(&out);
        assert!(
            text.contains("expected a regular file") && text.contains(what),
            "{}: {text}",
            path.display()
        );
    }
}

#[test]
fn a_file_over_the_size_cap_is_refused_before_parsing() {
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big.json");
    // 20 MB of a JSON array (a 100 MB one took 3.8 GB to parse whole).
    let mut text = String::with_capacity(20_000_010);
    text.push('[');
    while text.len() < 20_000_000 {
        text.push_str("0,");
    }
    text.push_str("0]");
    std::fs::write(&big, &text).unwrap();
    let out = validate_bounded(&big);
    assert_eq!(out.status.code(), Some(1));
    let found = format!("found {} bytes", text.len());
    let text = stdout(&out);
    assert!(
        text.contains("at most 16777216 bytes") && text.contains(&found),
        "{text}"
    );
}

#[test]
fn a_hostile_file_just_under_the_cap_parses_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("nested.json");
    // The densest Value per byte: empty arrays, 3 bytes each.
    let mut text = String::from("[");
    while text.len() < 16 * 1024 * 1024 - 8 {
        text.push_str("[],");
    }
    text.push_str("[]]");
    std::fs::write(&path, &text).unwrap();
    let out = validate_bounded(&path);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout(&out).contains("nested.json: $"), "{}", stdout(&out));
}
