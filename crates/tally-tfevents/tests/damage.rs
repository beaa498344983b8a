//! What a reader reports about a damaged file it reads past: a truncated tail (at a record
//! boundary there is none) and the records skipped under `OnCorruption::Skip`, each with the
//! file and byte offset.

use std::path::{Path, PathBuf};

use tally_tfevents::{open_event_file, Damage, EventFileWriter, OnCorruption, WriterOptions};

/// A file of `n` scalar steps; returns its path, bytes and each record's start offset
/// (record 0 is the file_version event).
fn file(dir: &Path, n: i64) -> (PathBuf, Vec<u8>, Vec<u64>) {
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    let mut offsets = vec![0];
    for step in 1..=n {
        offsets.push(w.bytes_written());
        w.write_scalars(step, 1000.0 + step as f64, &[("Loss/a", step as f64)])
            .unwrap();
    }
    let path = w.path().to_owned();
    offsets.push(w.bytes_written());
    w.close().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, *offsets.last().unwrap());
    (path, bytes, offsets)
}

fn steps_and_tail(path: &Path, policy: OnCorruption) -> (Vec<i64>, Vec<Damage>, Option<Damage>) {
    let mut r = open_event_file(path)
        .unwrap()
        .with_on_corruption(policy)
        .into_scalars();
    let mut steps = Vec::new();
    let mut skipped = Vec::new();
    while let Some(s) = r.read_scalar().unwrap() {
        steps.push(s.step);
        skipped.extend(r.take_skipped());
    }
    skipped.extend(r.take_skipped());
    (steps, skipped, r.truncated_tail())
}

#[test]
fn a_file_cut_at_a_record_boundary_has_no_truncated_tail() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes, offsets) = file(dir.path(), 5);
    std::fs::write(&path, &bytes[..offsets[4] as usize]).unwrap();
    let (steps, skipped, tail) = steps_and_tail(&path, OnCorruption::Error);
    assert_eq!(steps, vec![1, 2, 3]);
    assert!(skipped.is_empty());
    assert_eq!(tail, None);
}

#[test]
fn a_file_cut_mid_record_reports_the_incomplete_record_with_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes, offsets) = file(dir.path(), 5);
    // Cut inside the header, inside the payload, and one byte short of the data crc.
    for cut in [offsets[4] + 3, offsets[4] + 20, offsets[5] - 1] {
        std::fs::write(&path, &bytes[..cut as usize]).unwrap();
        let (steps, _, tail) = steps_and_tail(&path, OnCorruption::Error);
        assert_eq!(steps, vec![1, 2, 3], "cut at {cut}");
        let tail = tail.expect("a truncated tail");
        assert_eq!(
            tail,
            Damage::TruncatedTail {
                path: Some(path.clone()),
                offset: offsets[4],
                bytes: cut - offsets[4],
            }
        );
        let text = tail.to_string();
        assert!(
            text.starts_with(&format!(
                "{}: truncated tail at byte {}",
                path.display(),
                offsets[4]
            )),
            "{text}"
        );
        assert_eq!(tail.kind_name(), "truncated_tail");
    }
}

#[test]
fn a_flipped_payload_byte_under_skip_is_reported_with_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut bytes, offsets) = file(dir.path(), 5);
    bytes[offsets[2] as usize + 14] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let (steps, skipped, tail) = steps_and_tail(&path, OnCorruption::Skip);
    assert_eq!(steps, vec![1, 3, 4, 5]);
    assert_eq!(tail, None);
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0].offset(), offsets[2]);
    assert_eq!(skipped[0].path(), Some(path.as_path()));
    assert_eq!(skipped[0].kind_name(), "corrupt_record");
    assert!(
        skipped[0].to_string().contains("data crc mismatch"),
        "{}",
        skipped[0]
    );
}

#[test]
fn a_flipped_length_crc_stops_the_file_with_an_error_naming_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut bytes, offsets) = file(dir.path(), 5);
    bytes[offsets[3] as usize + 9] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let mut r = open_event_file(&path)
        .unwrap()
        .with_on_corruption(OnCorruption::Skip)
        .into_scalars();
    assert_eq!(r.read_scalar().unwrap().unwrap().step, 1);
    assert_eq!(r.read_scalar().unwrap().unwrap().step, 2);
    let err = r.read_scalar().unwrap_err();
    assert_eq!(err.offset(), Some(offsets[3]));
    assert!(err.to_string().contains("length crc mismatch"), "{err}");
    assert!(r.take_skipped().is_empty());
}
