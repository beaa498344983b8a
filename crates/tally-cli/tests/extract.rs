//! `tally extract`: the fail-closed matrix of schema versions and legacy runs
//! (`docs/contract/consumers.md`).

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use tally_tfevents::{EventFileWriter, WriterOptions};

fn write_events(dir: &Path, steps: &[(i64, Vec<(&str, f64)>)]) {
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    for (step, scalars) in steps {
        w.write_scalars(*step, 1000.0 + *step as f64, scalars)
            .unwrap();
    }
    w.close().unwrap();
}

fn run(dir: &Path, summary: Option<Value>, tags: &[(&str, &[f64])]) {
    std::fs::create_dir_all(dir).unwrap();
    let n = tags.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    let steps: Vec<(i64, Vec<(&str, f64)>)> = (0..n)
        .map(|i| {
            (
                i as i64 + 1,
                tags.iter()
                    .filter_map(|(t, v)| v.get(i).map(|x| (*t, *x)))
                    .collect(),
            )
        })
        .collect();
    write_events(dir, &steps);
    if let Some(s) = summary {
        std::fs::write(dir.join("run_summary.json"), s.to_string()).unwrap();
    }
}

fn extract(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .arg("extract")
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn modern(dir: &Path, summary: Option<Value>) {
    run(
        dir,
        summary,
        &[
            ("Perf/iteration_time", &[9.0, 0.4, 0.6]),
            ("Perf/total_fps", &[100.0, 200.0, 300.0]),
            ("Perf/learning_time", &[0.25, 0.25, 0.25]),
        ],
    );
}

#[test]
fn a_versioned_modern_run_passes_with_means_of_the_last_n_values() {
    let tmp = tempfile::tempdir().unwrap();
    modern(tmp.path(), Some(json!({"metric_schema_version": 1})));
    let (code, out, err) = extract(tmp.path(), &["--last", "2", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        (v["iter_ms"].as_f64().unwrap() - 500.0).abs() < 1e-3,
        "mean of the last 2 (0.4, 0.6) s in ms"
    );
    assert_eq!(v["steps_per_sec"], 250.0);
    assert_eq!(v["learner_train_ms"], 250.0);
    assert_eq!(
        v["learner_inference_ms"],
        Value::Null,
        "missing is null, never 0"
    );
    assert!(
        v.get("collector_cycle_ms").is_none(),
        "legacy-only figures are not in the default mode"
    );
    let (_, text, _) = extract(tmp.path(), &[]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("learner_inference_ms") && l.trim_end().ends_with("missing")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("steps_per_sec") && l.contains("200.000")),
        "last 20 → mean of all three"
    );
}

#[test]
fn schema_stamp_failures_exit_1_with_distinct_messages() {
    let cases: Vec<(Option<Value>, &str)> = vec![
        (None, "run_summary.json: missing"),
        (
            Some(json!({"status": "completed"})),
            "no metric_schema_version",
        ),
        (
            Some(json!({"metric_schema_version": 2})),
            "unsupported metric_schema_version 2",
        ),
        (
            Some(json!({"metric_schema_version": "1"})),
            "must be the integer 1, found the string \"1\"",
        ),
        (
            Some(json!({"metric_schema_version": true})),
            "found the boolean true",
        ),
        (
            Some(json!({"metric_schema_version": 1.5})),
            "found the number 1.5",
        ),
    ];
    let mut messages = std::collections::HashSet::new();
    for (summary, needle) in cases {
        let tmp = tempfile::tempdir().unwrap();
        modern(tmp.path(), summary);
        let (code, out, err) = extract(tmp.path(), &[]);
        assert_eq!(code, 1, "{needle}");
        assert!(out.is_empty(), "nothing on stdout when failing closed");
        assert!(err.contains(needle), "'{err}' lacks '{needle}'");
        messages.insert(err);
    }
    assert_eq!(messages.len(), 6);
}

#[test]
fn a_legacy_tag_in_a_versioned_run_fails_closed() {
    let tmp = tempfile::tempdir().unwrap();
    run(
        tmp.path(),
        Some(json!({"metric_schema_version": 1})),
        &[("Perf/total_fps", &[1.0]), ("perf/iter_ms", &[5.0])],
    );
    let (code, _, err) = extract(tmp.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("legacy tag 'perf/iter_ms' in a schema-v1 run"),
        "{err}"
    );
}

#[test]
fn a_mix_fails_closed_in_legacy_mode_too() {
    let tmp = tempfile::tempdir().unwrap();
    run(
        tmp.path(),
        None,
        &[("Perf/total_fps", &[1.0]), ("perf/iter_ms", &[5.0])],
    );
    let (code, _, err) = extract(tmp.path(), &["--legacy-unversioned"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("canonical tag 'Perf/total_fps' found"),
        "{err}"
    );
}

#[test]
fn a_modern_run_is_refused_under_legacy_unversioned() {
    let tmp = tempfile::tempdir().unwrap();
    modern(tmp.path(), Some(json!({"metric_schema_version": 1})));
    let (code, _, err) = extract(tmp.path(), &["--legacy-unversioned"]);
    assert_eq!(code, 1);
    assert!(err.contains("stamped metric_schema_version 1"), "{err}");
    let tmp = tempfile::tempdir().unwrap();
    modern(tmp.path(), None);
    let (code, _, err) = extract(tmp.path(), &["--legacy-unversioned"]);
    assert_eq!(code, 1, "an unversioned modern run is never read as legacy");
    assert!(err.contains("never a fallback"), "{err}");
}

fn legacy_run(dir: &Path, algo: Option<&str>) {
    run(
        dir,
        None,
        &[
            ("perf/iter_ms", &[400.0, 600.0]),
            ("perf/steps_per_sec", &[1000.0, 1000.0]),
            ("timing/learner_train_ms", &[250.0, 250.0]),
            ("train/dp_sync_time", &[1.0, 1.0]),
            ("timing/learner_incremental_h2d_ms", &[3.0, 3.0]),
            ("perf/collector_cycle_ms", &[7.0, 7.0]),
            ("timing/collector_inference_wait_ms", &[2.0, 2.0]),
        ],
    );
    if let Some(a) = algo {
        std::fs::write(
            dir.join("run_config.json"),
            json!({"run": {"algo": a}}).to_string(),
        )
        .unwrap();
    }
}

#[test]
fn a_legacy_run_passes_only_under_legacy_unversioned_with_unit_scaling() {
    let tmp = tempfile::tempdir().unwrap();
    legacy_run(tmp.path(), None);
    let (code, _, err) = extract(tmp.path(), &[]);
    assert_eq!(code, 1, "the default mode refuses an unstamped run");
    assert!(
        err.contains("no metric_schema_version") || err.contains("missing"),
        "{err}"
    );
    let (code, out, err) = extract(
        tmp.path(),
        &["--legacy-unversioned", "--profile", "sac_family", "--json"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("profile sac_family (named by --profile)"),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["iter_ms"], 500.0);
    assert_eq!(v["steps_per_sec"], 1000.0);
    assert_eq!(v["learner_train_ms"], 250.0);
    // The legacy map (docs/contract/schema.md): train/dp_sync_time (s) → Perf/dp_gradient_sync_ms_per_rank (ms): 1.0 s → 1000 ms.
    assert_eq!(v["dp_gradient_sync_ms_per_rank"], 1000.0);
    assert_eq!(v["collector_cycle_ms"], 7.0, "legacy-only figure");
    assert_eq!(
        v["collector_learner_action_wait_ms"], 2.0,
        "timing/collector_inference_wait_ms is the old name"
    );
    // SAC family, as named: incremental h2d is the submit diagnostic.
    assert_eq!(v["replay_ingress_h2d_submit_ms"], 3.0);
    assert_eq!(v["learner_replay_stage_ms"], Value::Null);
}

#[test]
fn the_incremental_h2d_split_follows_the_runs_algorithm() {
    // The legacy map splits by profile: timing/learner_incremental_h2d_ms is
    // Perf/learner_replay_stage_ms under APPO (docs/contract/schema.md).
    let tmp = tempfile::tempdir().unwrap();
    legacy_run(tmp.path(), Some("appo"));
    let (code, out, err) = extract(tmp.path(), &["--legacy-unversioned", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["learner_replay_stage_ms"], 3.0);
    assert_eq!(v["replay_ingress_h2d_submit_ms"], Value::Null);
}

/// The profile decides what `timing/learner_incremental_h2d_ms` means: unknown from
/// run_config.json it is never guessed, by extract as by `export --migrate-legacy`
/// (docs/contract/consumers.md "Legacy runs").
#[test]
fn a_legacy_run_of_unknown_profile_is_refused_until_profile_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    legacy_run(tmp.path(), None);
    let (code, out, err) = extract(tmp.path(), &["--legacy-unversioned", "--json"]);
    assert_eq!(code, 1, "never assumed sac_family: {out}");
    assert!(
        err.contains("--profile NAME") && err.contains("sac_family, appo, onpolicy, rft"),
        "{err}"
    );
    assert!(err.contains("timing/learner_incremental_h2d_ms"), "{err}");
    // APPO's rollout timing does not name the profile either.
    let tmp = tempfile::tempdir().unwrap();
    run(
        tmp.path(),
        None,
        &[
            ("timing/learner_incremental_h2d_ms", &[3.0]),
            ("timing/collector_rollout_ms", &[5.0]),
        ],
    );
    let (code, _, err) = extract(tmp.path(), &["--legacy-unversioned"]);
    assert_eq!(code, 1);
    assert!(err.contains("--profile NAME"), "{err}");
    let (code, out, err) = extract(
        tmp.path(),
        &["--legacy-unversioned", "--profile", "appo", "--json"],
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["learner_replay_stage_ms"], 3.0);
}

#[test]
fn a_profile_contradicting_the_runs_own_is_refused_and_needs_legacy_mode() {
    let tmp = tempfile::tempdir().unwrap();
    legacy_run(tmp.path(), Some("appo"));
    let (code, _, err) = extract(
        tmp.path(),
        &["--legacy-unversioned", "--profile", "sac_family"],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("appo") && err.contains("sac_family") && err.contains("run_config.json"),
        "{err}"
    );
    let (code, _, err) = extract(tmp.path(), &["--profile", "appo"]);
    assert_ne!(code, 0);
    assert!(err.contains("--legacy-unversioned"), "{err}");
}

#[test]
fn legacy_mode_needs_a_recognised_legacy_tag() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), None, &[("custom/thing", &[1.0])]);
    let (code, _, err) = extract(tmp.path(), &["--legacy-unversioned"]);
    assert_eq!(code, 1);
    assert!(err.contains("no recognised legacy tag"), "{err}");
}

#[test]
fn a_second_event_file_that_goes_back_in_steps_is_read_and_reported() {
    // Two files in one directory are one run; steps 1..3 then 1 go back: read as TensorBoard
    // draws them, and said (docs/contract/consumers.md "A run's event files").
    let tmp = tempfile::tempdir().unwrap();
    modern(tmp.path(), Some(json!({"metric_schema_version": 1})));
    write_events(tmp.path(), &[(1, vec![("Perf/total_fps", 1.0)])]);
    let (code, _, err) = extract(tmp.path(), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("steps going back") && err.contains("from step 1 on do not pass step"),
        "{err}"
    );
}

#[test]
fn a_demo_run_extracts_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["demo", "--iterations", "30", "--panel", "off"])
        .arg(format!("training.log_root={}", tmp.path().display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dir = stdout
        .lines()
        .last()
        .unwrap()
        .strip_prefix("run: ")
        .unwrap()
        .to_owned();
    let (code, json_out, err) = extract(Path::new(&dir), &["--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&json_out).unwrap();
    assert!(v["iter_ms"].as_f64().unwrap() > 1.0);
    assert!(v["learner_inference_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(
        v["learner_replay_stage_ms"],
        Value::Null,
        "APPO-only phase missing in a SAC run"
    );
}

#[test]
fn an_unknown_tag_in_a_canonical_group_fails_the_schema_v1_gate() {
    let tmp = tempfile::tempdir().unwrap();
    run(
        tmp.path(),
        Some(json!({"metric_schema_version": 1})),
        &[("Perf/total_fps", &[1.0]), ("Perf/total_fsp", &[2.0])],
    );
    let (code, _, err) = extract(tmp.path(), &[]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown tag 'Perf/total_fsp'"), "{err}");
}

#[test]
fn user_metrics_do_not_disturb_a_schema_v1_extract() {
    let tmp = tempfile::tempdir().unwrap();
    run(
        tmp.path(),
        Some(json!({"metric_schema_version": 1})),
        &[
            ("Perf/total_fps", &[100.0, 300.0]),
            ("charts/sps", &[1.0, 2.0]),
        ],
    );
    let (code, out, err) = extract(tmp.path(), &["--json", "--last", "2"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["steps_per_sec"], 200.0);
}
