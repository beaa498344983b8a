//! The dataset export against a fresh read of the same runs: growth adds parts of new points
//! only, a change to what was exported re-exports the run whole, a stopped export is replayed
//! without duplicates (`docs/contract/consumers.md` "A Parquet dataset").

use super::super::{export, Compression, Format, Options};
use crate::columns::{read_all, ReadOptions};
use crate::observer::Observer;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::RowAccessor;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use tally_tfevents::{encode_scalar_event, OnCorruption, RecordWriter};

/// A run's rows: tag, step, wall time's bits, value's bits.
type Rows = Vec<(String, i64, u64, u64)>;

/// Notes told by the export.
#[derive(Default)]
struct Notes(Vec<String>);

impl Observer for Notes {
    fn note(&mut self, text: &str) {
        self.0.push(text.to_owned());
    }
}

fn opts(tags: &[&str]) -> Options {
    Options {
        format: Format::Parquet,
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        migrate_legacy: false,
        profile: None,
        policy: OnCorruption::Error,
        strict: false,
        output: None,
        compression: Compression::None,
        dataset: None,
    }
}

/// Exports `root` into `ds`; the notes.
fn export_to(root: &Path, ds: &Path, tags: &[&str]) -> Result<Vec<String>, crate::Error> {
    let mut o = opts(tags);
    o.dataset = Some(ds.to_owned());
    let mut notes = Notes::default();
    export(&[root.to_owned()], &o, &mut std::io::sink(), &mut notes)?;
    Ok(notes.0)
}

/// The records of events (step, scalars), wall time 1000 + step.
fn records(events: &[(i64, &[(&str, f64)])]) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new());
    for &(step, scalars) in events {
        let mut buf = Vec::new();
        encode_scalar_event(step, 1000.0 + step as f64, scalars, &mut buf);
        w.write_record(&buf).unwrap();
    }
    w.into_inner()
}

/// The purge marker's record at `step`, after a `file_version` event dated after every event
/// of the other files (a resumed run's new file).
fn marker(step: i64) -> Vec<u8> {
    use prost::Message;
    use tally_tfevents::proto::{event, session_start_event, Event};
    let mut w = RecordWriter::new(Vec::new());
    let version = Event {
        wall_time: 2000.0,
        what: Some(event::What::FileVersion("brain.Event:2".into())),
        ..Default::default()
    };
    w.write_record(&version.encode_to_vec()).unwrap();
    w.write_record(&session_start_event(step, 2000.0).encode_to_vec())
        .unwrap();
    w.into_inner()
}

fn append(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

fn steps(from: i64, to: i64) -> Vec<(i64, &'static [(&'static str, f64)])> {
    (from..=to)
        .map(|s| (s, &[("loss", 0.5), ("ret", 1.5)][..]))
        .collect()
}

/// `%XX` back to bytes.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let (mut out, mut i) = (Vec::new(), 0);
    while i < b.len() {
        if b[i] == b'%' {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Every run's rows in the dataset, its parts read in name order, and each run's part names.
fn dataset_rows(ds: &Path) -> (BTreeMap<String, Rows>, BTreeMap<String, Vec<String>>) {
    let (mut rows, mut parts) = (BTreeMap::new(), BTreeMap::new());
    for entry in std::fs::read_dir(ds.join("scalars")).unwrap() {
        let dir = entry.unwrap().path();
        let enc = dir.file_name().unwrap().to_str().unwrap().to_owned();
        let run = decode(enc.strip_prefix("run=").unwrap());
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_str().unwrap().to_owned())
            .collect();
        names.sort();
        let mut got: Rows = Vec::new();
        for name in &names {
            assert!(
                name.starts_with("part-") && name.ends_with(".parquet"),
                "{name}"
            );
            let file = std::fs::File::open(dir.join(name)).unwrap();
            let reader = SerializedFileReader::new(file).unwrap();
            let schema = reader.metadata().file_metadata().schema_descr();
            let columns: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
            assert_eq!(columns, ["tag", "step", "wall_time", "value"]);
            for row in reader.get_row_iter(None).unwrap() {
                let row = row.unwrap();
                got.push((
                    row.get_string(0).unwrap().clone(),
                    row.get_long(1).unwrap(),
                    row.get_double(2).unwrap().to_bits(),
                    row.get_double(3).unwrap().to_bits(),
                ));
            }
        }
        rows.insert(run.clone(), got);
        parts.insert(run, names);
    }
    (rows, parts)
}

/// Every run's rows as `tally.read` reads `root` now.
fn fresh(root: &Path, tags: Option<&[String]>) -> BTreeMap<String, Rows> {
    let c = read_all(&[root.to_owned()], tags, ReadOptions::default()).unwrap();
    let mut out: BTreeMap<String, Rows> = BTreeMap::new();
    for chunk in &c.chunks {
        for i in 0..chunk.rows() {
            out.entry(c.runs.get(chunk.run_codes[i] as usize).to_owned())
                .or_default()
                .push((
                    c.tags.get(chunk.tag_codes[i] as usize).to_owned(),
                    chunk.step[i],
                    chunk.wall_time[i].to_bits(),
                    chunk.value[i].to_bits(),
                ));
        }
    }
    out
}

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ds: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    let ds = tmp.path().join("lake");
    std::fs::create_dir_all(&root).unwrap();
    Fixture {
        root,
        ds,
        _tmp: tmp,
    }
}

const A: &str = "seed 1/a=b%c";

fn file(f: &Fixture, run: &str, n: u32) -> PathBuf {
    f.root
        .join(run)
        .join(format!("events.out.tfevents.{n}.host"))
}

#[test]
fn growth_within_and_across_files_adds_only_the_new_points_as_new_parts() {
    let f = fixture();
    append(&file(&f, A, 1), &records(&steps(1, 3)));
    append(&file(&f, "b", 1), &records(&steps(1, 2)));
    assert_eq!(
        export_to(&f.root, &f.ds, &[]).unwrap(),
        Vec::<String>::new()
    );
    let (rows, parts) = dataset_rows(&f.ds);
    assert_eq!(rows, fresh(&f.root, None));
    assert_eq!(rows[A].len(), 6);
    assert_eq!(parts[A], ["part-000000-00000000000000000000.parquet"]);
    let enc: Vec<String> = std::fs::read_dir(f.ds.join("scalars"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        enc.contains(&"run=seed%201%2Fa%3Db%25c".to_owned()),
        "{enc:?}"
    );

    // Nothing new: no part.
    let state = std::fs::read(f.ds.join("_tally/state.json")).unwrap();
    export_to(&f.root, &f.ds, &[]).unwrap();
    assert_eq!(dataset_rows(&f.ds).1, parts);
    assert_eq!(
        std::fs::read(f.ds.join("_tally/state.json")).unwrap(),
        state
    );

    // The file grows: one part of the new points, named by where it started.
    let len = std::fs::metadata(file(&f, A, 1)).unwrap().len();
    append(&file(&f, A, 1), &records(&steps(4, 5)));
    export_to(&f.root, &f.ds, &[]).unwrap();
    let (rows, parts) = dataset_rows(&f.ds);
    assert_eq!(rows, fresh(&f.root, None));
    assert_eq!(
        parts[A][1],
        format!("part-000000-{len:020}.parquet"),
        "{parts:?}"
    );
    assert_eq!(parts["b"].len(), 1);

    // A new file (a resumed run): one more part, from its start.
    append(&file(&f, A, 2), &records(&steps(6, 7)));
    export_to(&f.root, &f.ds, &[]).unwrap();
    let (rows, parts) = dataset_rows(&f.ds);
    assert_eq!(rows, fresh(&f.root, None));
    assert_eq!(parts[A].len(), 3);
    assert_eq!(parts[A][2], "part-000001-00000000000000000000.parquet");
    assert_eq!(rows[A].len(), 14);
}

#[test]
fn a_partial_record_at_the_end_is_read_once_it_is_whole() {
    let f = fixture();
    let path = file(&f, "r", 1);
    let whole = records(&steps(1, 3));
    let first = records(&steps(1, 2)).len();
    let cut = first + 10;
    append(&path, &whole[..cut]);
    export_to(&f.root, &f.ds, &[]).unwrap();
    assert_eq!(dataset_rows(&f.ds).0["r"].len(), 4);
    append(&path, &whole[cut..]);
    append(&path, &records(&steps(4, 4)));
    export_to(&f.root, &f.ds, &[]).unwrap();
    let (rows, parts) = dataset_rows(&f.ds);
    assert_eq!(rows, fresh(&f.root, None));
    assert_eq!(rows["r"].len(), 8);
    assert_eq!(parts["r"][1], format!("part-000000-{first:020}.parquet"));
}

/// Exports, changes the run with `change`, exports again: the notes of the second export, and
/// checks the dataset equals a fresh read with the run in one part.
fn changed(setup: &[(u32, Vec<u8>)], change: impl FnOnce(&Fixture)) -> Vec<String> {
    let f = fixture();
    for (n, bytes) in setup {
        append(&file(&f, "r", *n), bytes);
    }
    append(&file(&f, "other", 1), &records(&steps(1, 2)));
    export_to(&f.root, &f.ds, &[]).unwrap();
    change(&f);
    let notes = export_to(&f.root, &f.ds, &[]).unwrap();
    let (rows, parts) = dataset_rows(&f.ds);
    assert_eq!(rows, fresh(&f.root, None));
    if !notes.is_empty() {
        assert_eq!(parts["r"], ["part-000000-00000000000000000000.parquet"]);
        assert!(!f.ds.join("_tally/staging").join("run=r").exists());
        assert!(!f.ds.join("_tally/replaced").join("run=r").exists());
    }
    notes
}

#[test]
fn a_shrunk_rewritten_or_vanished_file_re_exports_the_run_whole_saying_why() {
    let one = vec![(1, records(&steps(1, 5)))];
    let notes = changed(&one, |f| {
        std::fs::write(file(f, "r", 1), records(&steps(1, 2))).unwrap();
    });
    assert!(notes.len() == 1 && notes[0].contains("shrank"), "{notes:?}");
    let notes = changed(&one, |f| {
        std::fs::write(file(f, "r", 1), records(&[(9, &[("x", 1.0)])])).unwrap();
        append(&file(f, "r", 1), &records(&steps(1, 6)));
    });
    assert!(
        notes.len() == 1 && notes[0].contains("written anew"),
        "{notes:?}"
    );
    let two = vec![(1, records(&steps(1, 2))), (2, records(&steps(3, 4)))];
    let notes = changed(&two, |f| std::fs::remove_file(file(f, "r", 1)).unwrap());
    assert!(
        notes.len() == 1 && notes[0].contains("is gone"),
        "{notes:?}"
    );
}

#[test]
fn a_purge_marker_below_exported_steps_re_exports_the_run_above_them_adds_a_part() {
    let one = vec![(1, records(&steps(1, 5)))];
    let notes = changed(&one, |f| {
        let mut bytes = marker(3);
        bytes.extend(records(&steps(3, 4)));
        append(&file(f, "r", 2), &bytes);
    });
    assert!(
        notes.len() == 1 && notes[0].contains("purge marker at step 3"),
        "{notes:?}"
    );
    let notes = changed(&one, |f| {
        let mut bytes = marker(6);
        bytes.extend(records(&steps(6, 7)));
        append(&file(f, "r", 2), &bytes);
    });
    assert_eq!(notes, Vec::<String>::new());
}

#[test]
fn other_tags_re_export_the_run_and_a_missing_partition_is_written_again() {
    let f = fixture();
    append(&file(&f, "r", 1), &records(&steps(1, 3)));
    export_to(&f.root, &f.ds, &["loss"]).unwrap();
    let tags = [String::from("loss")];
    assert_eq!(dataset_rows(&f.ds).0, fresh(&f.root, Some(&tags)));
    let notes = export_to(&f.root, &f.ds, &[]).unwrap();
    assert!(notes[0].contains("--tags"), "{notes:?}");
    assert_eq!(dataset_rows(&f.ds).0, fresh(&f.root, None));
    std::fs::remove_dir_all(f.ds.join("scalars/run=r")).unwrap();
    let notes = export_to(&f.root, &f.ds, &[]).unwrap();
    assert!(notes[0].contains("partition is missing"), "{notes:?}");
    assert_eq!(dataset_rows(&f.ds).0, fresh(&f.root, None));
}

#[test]
fn an_export_stopped_before_saving_its_state_writes_the_same_part_again() {
    let f = fixture();
    append(&file(&f, "r", 1), &records(&steps(1, 3)));
    export_to(&f.root, &f.ds, &[]).unwrap();
    let state = f.ds.join("_tally/state.json");
    let before = std::fs::read(&state).unwrap();
    append(&file(&f, "r", 1), &records(&steps(4, 5)));
    export_to(&f.root, &f.ds, &[]).unwrap();
    let parts = dataset_rows(&f.ds).1;
    // The part is in place, the state as it was before it: the export stopped in between.
    std::fs::write(&state, before).unwrap();
    append(&file(&f, "r", 1), &records(&steps(6, 6)));
    export_to(&f.root, &f.ds, &[]).unwrap();
    let (rows, again) = dataset_rows(&f.ds);
    assert_eq!(again, parts);
    assert_eq!(rows, fresh(&f.root, None));
}

#[test]
fn a_failing_run_keeps_what_earlier_runs_exported_and_names_the_file() {
    let f = fixture();
    append(&file(&f, "a", 1), &records(&steps(1, 2)));
    let mut bad = records(&steps(1, 2));
    let n = bad.len();
    bad[n - 3] ^= 0xff;
    append(&file(&f, "b", 1), &bad);
    let err = export_to(&f.root, &f.ds, &[]).unwrap_err().to_string();
    assert!(err.contains("events.out.tfevents.1.host"), "{err}");
    let (rows, _) = dataset_rows(&f.ds);
    assert_eq!(rows.keys().collect::<Vec<_>>(), ["a"]);
    assert!(f.ds.join("runs/run=a/part-0.parquet").is_file());
    let leftovers: Vec<_> = walk(&f.ds)
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn every_runs_file_has_the_union_of_configuration_keys_and_the_run_figures() {
    let f = fixture();
    append(&file(&f, "a", 1), &records(&steps(1, 3)));
    append(&file(&f, "b", 1), &records(&steps(1, 1)));
    std::fs::write(
        f.root.join("a/run_config.json"),
        r#"{"config": {"lr": 0.1}}"#,
    )
    .unwrap();
    std::fs::write(
        f.root.join("b/run_config.json"),
        r#"{"config": {"seed": 2}}"#,
    )
    .unwrap();
    export_to(&f.root, &f.ds, &["ret"]).unwrap();
    let read = |run: &str| {
        let path = f.ds.join(format!("runs/run={run}/part-0.parquet"));
        let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
        let schema = reader.metadata().file_metadata().schema_descr();
        let cols: Vec<String> = schema
            .columns()
            .iter()
            .map(|c| c.name().to_owned())
            .collect();
        let row = reader.get_row_iter(None).unwrap().next().unwrap().unwrap();
        (cols, row.to_string())
    };
    let (a_cols, a) = read("a");
    let (b_cols, b) = read("b");
    assert_eq!(a_cols, b_cols);
    assert_eq!(
        a_cols,
        [
            "dir",
            "status",
            "start",
            "duration",
            "last_step",
            "points",
            "config.config.lr",
            "config.config.seed"
        ]
    );
    // Points count every tag, whatever --tags kept.
    assert!(
        a.contains("points: 6") && a.contains("config.config.seed: null"),
        "{a}"
    );
    assert!(
        a.contains("duration: 2.0") && a.contains("last_step: 3"),
        "{a}"
    );
    assert!(
        b.contains("config.config.lr: null") && b.contains("config.config.seed: 2"),
        "{b}"
    );
}

#[test]
fn a_dataset_goes_with_parquet_and_without_an_output_file() {
    let f = fixture();
    append(&file(&f, "r", 1), &records(&steps(1, 1)));
    for (format, output) in [(Format::Csv, None), (Format::Parquet, Some("x.parquet"))] {
        let mut o = opts(&[]);
        o.format = format;
        o.output = output.map(|o| f.root.join(o));
        o.dataset = Some(f.ds.clone());
        let err = export(
            std::slice::from_ref(&f.root),
            &o,
            &mut std::io::sink(),
            &mut Notes::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("--dataset"), "{err}");
        assert!(!f.ds.exists());
    }
}
