//! `tally export --format parquet --dataset DIR`: its flags, and a dataset added to run by run
//! with a note on stderr when a run is exported again whole (`docs/contract/consumers.md` "A
//! Parquet dataset").

use std::path::Path;
use std::process::Command;
use tally_tfevents::{EventFileWriter, WriterOptions};

fn write(dir: &Path, steps: std::ops::RangeInclusive<i64>) {
    std::fs::create_dir_all(dir).unwrap();
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    for step in steps {
        w.write_scalars(step, 2000.0 + step as f64, &[("loss", step as f64)])
            .unwrap();
    }
    w.close().unwrap();
}

fn export(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tally"))
        .arg("export")
        .args(["--progress", "never"])
        .args(args)
        .output()
        .unwrap()
}

/// Each run's partition directory and its part files, in name order.
fn parts(ds: &Path) -> Vec<(String, Vec<String>)> {
    let names = |dir: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    names(&ds.join("scalars"))
        .into_iter()
        .map(|run| {
            let files = names(&ds.join("scalars").join(&run));
            (run, files)
        })
        .collect()
}

fn rows(path: &Path) -> usize {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    reader.metadata().file_metadata().num_rows() as usize
}

#[test]
fn a_dataset_goes_with_parquet_only_and_not_with_an_output_file() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), 1..=2);
    let ds = tmp.path().join("lake");
    let root = tmp.path().to_str().unwrap();
    for format in ["csv", "jsonl"] {
        let out = export(&[root, "--format", format, "--dataset", ds.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--dataset") && err.contains(&format!("not {format}")),
            "{err}"
        );
    }
    let out = export(&[
        root,
        "--format",
        "parquet",
        "--dataset",
        ds.to_str().unwrap(),
        "--output",
        "x.parquet",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--output"));
    assert!(!ds.exists(), "a refused export writes nothing");
}

#[test]
fn a_second_export_adds_a_part_for_the_new_file_and_a_rewrite_is_said_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    let run = root.join("seed 1").join("ppo");
    write(&run, 1..=3);
    write(&root.join("b"), 1..=2);
    let ds = tmp.path().join("lake");
    let args = [
        root.to_str().unwrap(),
        "--format",
        "parquet",
        "--compression",
        "snappy",
        "--dataset",
        ds.to_str().unwrap(),
    ];
    let out = export(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = parts(&ds);
    assert_eq!(
        first.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>(),
        ["run=b", "run=seed%201%2Fppo"]
    );
    assert!(ds.join("runs/run=seed%201%2Fppo/part-0.parquet").is_file());

    // Nothing new: nothing written. A resumed run's new file: one part more, that run only.
    assert!(export(&args).status.success());
    assert_eq!(parts(&ds), first);
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(&run, 4..=5);
    let out = export(&args);
    assert!(out.status.success());
    let second = parts(&ds);
    assert_eq!(second[0], first[0]);
    assert_eq!(second[1].1.len(), 2);
    assert_eq!(second[1].1[1], "part-000001-00000000000000000000.parquet");
    let part = ds.join("scalars/run=seed%201%2Fppo").join(&second[1].1[1]);
    assert_eq!(rows(&part), 2);

    // A file gone: the run is exported again whole, and stderr says why.
    let mut files: Vec<_> = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    std::fs::remove_file(&files[0]).unwrap();
    let out = export(&args);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is gone") && err.contains("exported again whole"),
        "{err}"
    );
    let third = parts(&ds);
    assert_eq!(third[1].1, ["part-000000-00000000000000000000.parquet"]);
    assert_eq!(
        rows(&ds.join("scalars/run=seed%201%2Fppo").join(&third[1].1[0])),
        2
    );
}
