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
    let migrated = rows(&export(&[tmp.path().to_str().unwrap(), "--migrate-legacy"]));
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
    write(&small, &[(1, &[("g0/tag0", 1.0)]), (2, &[("solo", 2.0)])]);
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
        &["--migrate-legacy", "--tags", "g1/*", "Perf/*", "solo"][..],
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
