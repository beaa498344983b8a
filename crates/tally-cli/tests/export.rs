//! `tally export`: filters, legacy migration, and Parquet output (`docs/contract/consumers.md`).

use std::path::Path;
use std::process::Command;
use tally_tfevents::{EventFileWriter, WriterOptions};

fn write(dir: &Path, steps: &[(i64, &[(&str, f64)])]) {
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    for (step, scalars) in steps {
        w.write_scalars(*step, 2000.0 + *step as f64, scalars)
            .unwrap();
    }
    w.close().unwrap();
}

fn export(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tally"))
        .arg("export")
        .args(args)
        .output()
        .unwrap()
}

fn rows(out: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn tag_globs_keep_only_matching_tags() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        &[(
            1,
            &[
                ("Loss/critic", 1.0),
                ("Perf/total_fps", 2.0),
                ("Perf/learning_time", 3.0),
            ],
        )],
    );
    let out = export(&[
        tmp.path().to_str().unwrap(),
        "--tags",
        "Perf/*",
        "--progress",
        "never",
    ]);
    assert!(out.status.success());
    let tags: Vec<_> = rows(&out)
        .iter()
        .map(|r| r["tag"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(tags, ["Perf/total_fps", "Perf/learning_time"]);
    let out = export(&[
        tmp.path().to_str().unwrap(),
        "--tags",
        "Loss/critic",
        "Perf/total_fps",
    ]);
    assert_eq!(rows(&out).len(), 2);
}

#[test]
fn legacy_tags_are_exported_under_canonical_names_only_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        &[(
            1,
            &[
                ("perf/iter_ms", 500.0),
                ("train/dp_sync_time", 1.0),
                ("custom/x", 7.0),
            ],
        )],
    );
    let raw = rows(&export(&[tmp.path().to_str().unwrap()]));
    assert_eq!(raw[0]["tag"], "perf/iter_ms");
    assert_eq!(raw[0]["value"], 500.0);
    // No run_config.json: the profile is named, and the note says which one was used.
    let out = export(&[
        tmp.path().to_str().unwrap(),
        "--migrate-legacy",
        "--profile",
        "sac_family",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("profile sac_family") && stderr.contains("--profile"),
        "{stderr}"
    );
    let migrated = rows(&out);
    let get = |t: &str| {
        migrated
            .iter()
            .find(|r| r["tag"] == t)
            .map(|r| r["value"].as_f64().unwrap())
    };
    // The legacy map: perf/iter_ms → Perf/iteration_time (ms → s); dp_sync_time s → ms
    // (docs/contract/schema.md, legacy map).
    assert_eq!(get("Perf/iteration_time"), Some(0.5));
    assert_eq!(get("Perf/dp_gradient_sync_ms_per_rank"), Some(1000.0));
    assert_eq!(get("custom/x"), Some(7.0), "unknown tags keep their names");
    assert_eq!(get("perf/iter_ms"), None);
}

#[test]
fn parquet_needs_an_output_file_and_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    let steps: Vec<(i64, Vec<(&str, f64)>)> = (1..=1000)
        .map(|i| {
            (
                i,
                vec![("Loss/critic", i as f64 * 0.5), ("Perf/total_fps", 10.0)],
            )
        })
        .collect();
    let refs: Vec<(i64, &[(&str, f64)])> = steps.iter().map(|(s, v)| (*s, v.as_slice())).collect();
    write(tmp.path(), &refs);
    let out = export(&[tmp.path().to_str().unwrap(), "--format", "parquet"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass --output"));
    let pq = tmp.path().join("out.parquet");
    let out = export(&[
        tmp.path().to_str().unwrap(),
        "--format",
        "parquet",
        "--output",
        pq.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    let reader = SerializedFileReader::new(std::fs::File::open(&pq).unwrap()).unwrap();
    assert_eq!(reader.metadata().file_metadata().num_rows(), 2000);
    let mut n = 0;
    for row in reader.get_row_iter(None).unwrap() {
        let row = row.unwrap();
        let cols: Vec<_> = row
            .get_column_iter()
            .map(|(name, _)| name.clone())
            .collect();
        assert_eq!(cols, ["run", "tag", "step", "wall_time", "value"]);
        if n == 2 {
            assert_eq!(row.get_string(1).unwrap(), "Loss/critic");
            assert_eq!(row.get_long(2).unwrap(), 2);
            assert_eq!(row.get_double(4).unwrap(), 1.0);
        }
        n += 1;
    }
    assert_eq!(n, 2000);
}

#[test]
fn csv_to_an_output_file_has_the_header_once() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), &[(1, &[("a/b", 1.0)]), (2, &[("a/b", 2.0)])]);
    let csv = tmp.path().join("o.csv");
    let out = export(&[
        tmp.path().to_str().unwrap(),
        "--format",
        "csv",
        "-o",
        csv.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    let text = std::fs::read_to_string(csv).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("run,")).count(), 1);
    assert_eq!(text.lines().count(), 3);
}

/// `run` and `tag` are written as dictionary pages from the reader's ids: the `parquet` crate's
/// own reader must give back every row of the JSON-lines export, across row groups (131 072
/// rows), runs, a dictionary wider than 8 bits (300 tags) and long runs of one tag.
#[test]
fn parquet_rows_equal_the_json_lines_rows_across_row_groups_runs_and_wide_dictionaries() {
    let tmp = tempfile::tempdir().unwrap();
    let tags: Vec<String> = (0..300).map(|i| format!("g{}/t{i:03}", i % 7)).collect();
    let wide: Vec<(i64, Vec<(&str, f64)>)> = (0..480)
        .map(|s| {
            let values = tags.iter().enumerate();
            (
                s,
                values
                    .map(|(i, t)| (t.as_str(), s as f64 - i as f64))
                    .collect(),
            )
        })
        .collect();
    let refs: Vec<(i64, &[(&str, f64)])> = wide.iter().map(|(s, v)| (*s, v.as_slice())).collect();
    std::fs::create_dir(tmp.path().join("a_wide")).unwrap();
    write(&tmp.path().join("a_wide"), &refs);
    let solo: Vec<(i64, Vec<(&str, f64)>)> =
        (0..900).map(|s| (s, vec![("solo", -(s as f64))])).collect();
    let refs: Vec<(i64, &[(&str, f64)])> = solo.iter().map(|(s, v)| (*s, v.as_slice())).collect();
    std::fs::create_dir(tmp.path().join("b_solo")).unwrap();
    write(&tmp.path().join("b_solo"), &refs);

    let root = tmp.path().to_str().unwrap();
    let expected = rows(&export(&[root]));
    assert_eq!(expected.len(), 480 * 300 + 900);
    let pq = tmp.path().join("out.parquet");
    let out = export(&[
        root,
        "--format",
        "parquet",
        "--output",
        pq.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    let reader = SerializedFileReader::new(std::fs::File::open(&pq).unwrap()).unwrap();
    assert_eq!(reader.metadata().num_row_groups(), 2);
    let mut n = 0;
    for (row, want) in reader.get_row_iter(None).unwrap().zip(&expected) {
        let row = row.unwrap();
        assert_eq!(
            row.get_string(0).unwrap(),
            want["run"].as_str().unwrap(),
            "row {n}"
        );
        assert_eq!(
            row.get_string(1).unwrap(),
            want["tag"].as_str().unwrap(),
            "row {n}"
        );
        assert_eq!(
            row.get_long(2).unwrap(),
            want["step"].as_i64().unwrap(),
            "row {n}"
        );
        assert_eq!(
            row.get_double(3).unwrap(),
            want["wall_time"].as_f64().unwrap(),
            "row {n}"
        );
        assert_eq!(
            row.get_double(4).unwrap(),
            want["value"].as_f64().unwrap(),
            "row {n}"
        );
        n += 1;
    }
    assert_eq!(n, expected.len());
}

/// Every row of a Parquet export, as the `parquet` crate reads it, in JSON-lines form.
fn parquet_rows(path: &Path) -> Vec<serde_json::Value> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let rows = reader.get_row_iter(None).unwrap().map(|row| {
        let row = row.unwrap();
        serde_json::json!({
            "run": row.get_string(0).unwrap(),
            "tag": row.get_string(1).unwrap(),
            "step": row.get_long(2).unwrap(),
            "wall_time": row.get_double(3).unwrap(),
            "value": row.get_double(4).unwrap(),
        })
    });
    rows.collect()
}

/// A run whose one event file is large enough (over 8 MiB) to be read on every core, window
/// by window: 48 000 steps of ten tags, one of them a legacy name; a small run before it and
/// one after it (their rows are gathered around the windows' row groups).
fn large_and_small_runs(root: &Path) -> std::path::PathBuf {
    let tags: Vec<String> = (0..9).map(|i| format!("g{}/tag{i}", i % 3)).collect();
    let steps: Vec<(i64, Vec<(&str, f64)>)> = (0..48_000)
        .map(|s| {
            let mut v: Vec<(&str, f64)> = tags
                .iter()
                .enumerate()
                .map(|(i, t)| (t.as_str(), s as f64 * 0.25 - i as f64))
                .collect();
            v.push(("perf/iter_ms", 400.0 + (s % 7) as f64));
            (s, v)
        })
        .collect();
    let refs: Vec<(i64, &[(&str, f64)])> = steps.iter().map(|(s, v)| (*s, v.as_slice())).collect();
    let first = root.join("0_first");
    std::fs::create_dir(&first).unwrap();
    write(&first, &[(5, &[("g1/tag1", 5.5), ("perf/iter_ms", 250.0)])]);
    let large = root.join("a_large");
    std::fs::create_dir(&large).unwrap();
    write(&large, &refs);
    let small = root.join("b_small");
    std::fs::create_dir(&small).unwrap();
    write(
        &small,
        &[
            (1, &[("g0/tag0", 1.0)]),
            (2, &[("solo", 2.0), ("reward/mean", 3.0)]),
        ],
    );
    let file = std::fs::read_dir(&large)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(std::fs::metadata(&file).unwrap().len() > 9 << 20);
    file
}

fn parquet_export(root: &Path, extra: &[&str]) -> (std::process::Output, Vec<serde_json::Value>) {
    let pq = root.join("out.parquet");
    let _ = std::fs::remove_file(&pq);
    let mut args = vec![root.to_str().unwrap(), "--format", "parquet", "--output"];
    args.push(pq.to_str().unwrap());
    args.extend_from_slice(extra);
    let out = export(&args);
    let rows = if out.status.success() {
        parquet_rows(&pq)
    } else {
        Vec::new()
    };
    (out, rows)
}

/// A large file is read on every core a window at a time: the rows are the sequential
/// reader's (JSON lines), in order, with tag filters and legacy migration applied alike.
#[test]
fn a_large_file_read_on_every_core_exports_the_sequential_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    std::fs::create_dir(&root).unwrap();
    large_and_small_runs(&root);
    let r = root.to_str().unwrap();
    for extra in [
        &[][..],
        &[
            "--migrate-legacy",
            "--profile",
            "sac_family",
            "--tags",
            "g1/*",
            "Perf/*",
            "solo",
        ][..],
    ] {
        let mut args = vec![r, "--progress", "never"];
        args.extend_from_slice(extra);
        let want = rows(&export(&args));
        let (out, got) = parquet_export(&root, extra);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(want.len() > 2, "{extra:?}");
        assert_eq!(got.len(), want.len(), "{extra:?}");
        assert!(got == want, "{extra:?}: rows differ");
    }
}

/// Damage inside a large file: what the windows read before it stays exported once, the
/// sequential reader reads the rest and reports the damage as it always does.
#[test]
fn damage_in_a_large_file_is_reported_and_no_row_is_lost_or_repeated() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    std::fs::create_dir(&root).unwrap();
    let file = large_and_small_runs(&root);
    let good = std::fs::read(&file).unwrap();
    let r = root.to_str().unwrap();
    let flipped = |at: usize| {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        bad
    };
    for (bytes, policy, warning) in [
        (
            flipped(good.len() * 6 / 10),
            "skip",
            "skipped 1 corrupt record",
        ),
        (good[..good.len() - 3].to_vec(), "error", "truncated tail"),
    ] {
        std::fs::write(&file, &bytes).unwrap();
        let text = export(&[r, "--progress", "never", "--on-corrupt", policy]);
        let want = rows(&text);
        assert!(String::from_utf8_lossy(&text.stderr).contains(warning));
        let (out, got) = parquet_export(&root, &["--on-corrupt", policy]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains(warning), "{policy}: {stderr}");
        assert_eq!(got.len(), want.len(), "{policy}: {warning}");
        assert!(got == want, "{policy}: {warning}: rows differ");
    }
    // Under the default policy a corrupt record in the middle is the error, naming the file.
    std::fs::write(&file, flipped(good.len() / 2)).unwrap();
    let (out, _) = parquet_export(&root, &[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(file.to_str().unwrap()), "{stderr}");
}

#[test]
fn a_reader_closing_the_pipe_early_ends_the_export_quietly() {
    // `tally export RUN | head -1`: the reader goes away after one line; the export stops with
    // exit 0 and says nothing (docs/contract/consumers.md "What readers report").
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let tmp = tempfile::tempdir().unwrap();
    let steps: Vec<(i64, Vec<(&str, f64)>)> = (0..20_000)
        .map(|s| (s, vec![("a", s as f64), ("b", -s as f64)]))
        .collect();
    let steps: Vec<(i64, &[(&str, f64)])> = steps.iter().map(|(s, v)| (*s, v.as_slice())).collect();
    write(tmp.path(), &steps);
    for format in ["jsonl", "csv"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tally"))
            .args(["export", "--progress", "never", "--format", format])
            .arg(tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty());
        // The pipe's read end is dropped here.
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{format}: {:?} {err}", out.status);
        assert!(err.is_empty(), "{format}: {err}");
    }
}

/// Writes a pre-schema-looking run in `dir` (created) with `tags` at step 1, and the JSON
/// artefacts given.
fn legacy_run(dir: &Path, tags: &[(&str, f64)], config: Option<&str>, summary: Option<&str>) {
    std::fs::create_dir_all(dir).unwrap();
    write(dir, &[(1, tags)]);
    if let Some(c) = config {
        std::fs::write(dir.join("run_config.json"), c).unwrap();
    }
    if let Some(s) = summary {
        std::fs::write(dir.join("run_summary.json"), s).unwrap();
    }
}

fn failed(out: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "expected a refusal, got success: {stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "a refused migration writes nothing: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

/// `--migrate-legacy` has extract's one gate (docs/contract/consumers.md "Legacy runs"): a
/// schema-stamped run is refused, naming the run, the rule and the way out, before any row.
#[test]
fn migrate_legacy_refuses_a_schema_stamped_run() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("v1_run");
    legacy_run(
        &run,
        &[("perf/iter_ms", 500.0)],
        None,
        Some(r#"{"metric_schema_version": 1, "status": "completed"}"#),
    );
    let err = failed(&export(&[
        run.to_str().unwrap(),
        "--migrate-legacy",
        "--profile",
        "sac_family",
    ]));
    assert!(err.contains("v1_run"), "{err}");
    assert!(err.contains("metric_schema_version 1"), "{err}");
    assert!(err.contains("only for pre-schema runs"), "{err}");
    assert!(err.contains("without --migrate-legacy"), "{err}");
    // Without the flag the run exports as it is.
    let out = export(&[run.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(rows(&out)[0]["tag"], "perf/iter_ms");
}

/// A run holding canonical and legacy names is a canonical/legacy mix: refused, never
/// migrated into two series of one tag.
#[test]
fn migrate_legacy_refuses_a_canonical_legacy_mix() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("mixed_run");
    legacy_run(
        &run,
        &[("perf/iter_ms", 500.0), ("Perf/iteration_time", 0.5)],
        Some(r#"{"run": {"algo": "sac"}}"#),
        None,
    );
    let err = failed(&export(&[run.to_str().unwrap(), "--migrate-legacy"]));
    assert!(err.contains("mixed_run"), "{err}");
    assert!(err.contains("'Perf/iteration_time'"), "{err}");
    assert!(err.contains("'perf/iter_ms'"), "{err}");
    assert!(err.contains("canonical/legacy mix"), "{err}");
}

/// A run with no recognised legacy tag is not a pre-schema run: nothing to migrate, refused as
/// extract refuses it.
#[test]
fn migrate_legacy_refuses_a_run_without_legacy_tags() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("plain_run");
    legacy_run(&run, &[("custom/x", 1.0)], None, None);
    let err = failed(&export(&[
        run.to_str().unwrap(),
        "--migrate-legacy",
        "--profile",
        "appo",
    ]));
    assert!(err.contains("plain_run"), "{err}");
    assert!(err.contains("no recognised legacy tag"), "{err}");
}

/// The profile decides what `timing/learner_incremental_h2d_ms` means. Unknown from
/// run_config.json it is never assumed: refused listing the profiles until `--profile` names
/// one; known, it is used and said on stderr.
#[test]
fn migrate_legacy_needs_the_profile_from_the_run_or_the_user() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("appo_run");
    let tags: &[(&str, f64)] = &[
        ("timing/learner_incremental_h2d_ms", 4.0),
        ("perf/iter_ms", 8.0),
    ];
    legacy_run(&run, tags, None, None);
    let r = run.to_str().unwrap();
    let err = failed(&export(&[r, "--migrate-legacy"]));
    assert!(err.contains("appo_run"), "{err}");
    assert!(err.contains("--profile"), "{err}");
    assert!(err.contains("sac_family, appo, onpolicy, rft"), "{err}");
    let tag_of = |out: &std::process::Output| {
        rows(out)
            .iter()
            .find(|row| row["value"] == 4.0)
            .map(|row| row["tag"].as_str().unwrap().to_owned())
    };
    let out = export(&[r, "--migrate-legacy", "--profile", "appo"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("profile appo"), "{stderr}");
    assert_eq!(
        tag_of(&out).as_deref(),
        Some("Perf/learner_replay_stage_ms")
    );
    // The run's own config names APPO: used without --profile, and said.
    std::fs::write(run.join("run_config.json"), r#"{"run": {"algo": "appo"}}"#).unwrap();
    let out = export(&[r, "--migrate-legacy"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("profile appo") && stderr.contains("run_config.json"),
        "{stderr}"
    );
    assert_eq!(
        tag_of(&out).as_deref(),
        Some("Perf/learner_replay_stage_ms")
    );
    // A --profile contradicting the run's config is refused, naming both.
    let err = failed(&export(&[r, "--migrate-legacy", "--profile", "sac_family"]));
    assert!(err.contains("appo") && err.contains("sac_family"), "{err}");
    assert!(err.contains("run_config.json"), "{err}");
    // --profile means nothing without --migrate-legacy; an unknown name lists the profiles.
    let out = export(&[r, "--profile", "appo"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--migrate-legacy"));
    let out = export(&[r, "--migrate-legacy", "--profile", "ppo2"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sac_family, appo, onpolicy or rft"));
}
