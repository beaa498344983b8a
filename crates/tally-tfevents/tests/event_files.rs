//! Event files end to end through the public API: round trips, tensor scalars, corruption reporting, tailing a growing file.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use prost::Message;
use tally_tfevents::proto::{
    event, summary, summary_metadata::PluginData, tensor_shape_proto::Dim, DataType, Summary,
    SummaryMetadata, TensorProto, TensorShapeProto,
};
use tally_tfevents::{
    open_event_file, read_scalars_from_file, CorruptionKind, Event, EventFileWriter, EventReader,
    FsyncPolicy, OnCorruption, RecordWriter, ScalarEvent, ScalarReader, WriterOptions,
};

fn options() -> WriterOptions {
    WriterOptions {
        hostname: "testhost".into(),
        pid: 1,
        created_at: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        fsync: FsyncPolicy::Never,
        suffix: String::new(),
    }
}

fn tags(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("Group{}/metric_{i}", i % 7))
        .collect()
}

fn value(step: i64, i: usize) -> f64 {
    (step as f64).sqrt() * (i as f64 - 30.0) / 7.0
}

#[test]
fn many_steps_of_sixty_tags_round_trip_exactly_as_f32() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = EventFileWriter::open(dir.path(), options()).unwrap();
    let names = tags(60);
    let mut scalars: Vec<(&str, f64)> = Vec::new();
    for step in 1..=500 {
        scalars.clear();
        scalars.extend(
            names
                .iter()
                .enumerate()
                .map(|(i, t)| (t.as_str(), value(step, i))),
        );
        w.write_scalars(step * 256, 1_700_000_000.0 + step as f64, &scalars)
            .unwrap();
    }
    let path = w.path().to_path_buf();
    w.close().unwrap();

    let got = read_scalars_from_file(&path).unwrap();
    assert_eq!(got.len(), 500 * 60);
    let mut it = got.iter();
    for step in 1..=500 {
        for (i, tag) in names.iter().enumerate() {
            let s = it.next().unwrap();
            assert_eq!(s.tag, *tag);
            assert_eq!(s.step, step * 256);
            assert_eq!(s.wall_time, 1_700_000_000.0 + step as f64);
            assert_eq!(s.value, f64::from(value(step, i) as f32));
        }
    }
}

/// A summary event whose single value is a tensor owned by the scalars plugin.
fn tensor_event(step: i64, tag: &str, tensor: TensorProto) -> Event {
    Event {
        wall_time: 5.0,
        step,
        what: Some(event::What::Summary(Summary {
            value: vec![summary::Value {
                tag: tag.into(),
                metadata: Some(SummaryMetadata {
                    plugin_data: Some(PluginData {
                        plugin_name: "scalars".into(),
                        content: vec![],
                    }),
                    ..Default::default()
                }),
                value: Some(summary::value::Value::Tensor(Box::new(tensor))),
                ..Default::default()
            }],
        })),
    }
}

fn scalar_shape() -> Option<TensorShapeProto> {
    Some(TensorShapeProto::default())
}

fn framed(events: &[Event]) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new());
    for e in events {
        w.write_message(e).unwrap();
    }
    w.into_inner()
}

#[test]
fn scalar_tensor_summaries_are_read_from_float_val_double_val_and_tensor_content() {
    let events = vec![
        tensor_event(
            1,
            "float_val",
            TensorProto {
                dtype: DataType::DtFloat as i32,
                tensor_shape: scalar_shape(),
                float_val: vec![1.25],
                ..Default::default()
            },
        ),
        tensor_event(
            2,
            "double_val",
            TensorProto {
                dtype: DataType::DtDouble as i32,
                tensor_shape: scalar_shape(),
                double_val: vec![0.1],
                ..Default::default()
            },
        ),
        tensor_event(
            3,
            "float_content",
            TensorProto {
                dtype: DataType::DtFloat as i32,
                tensor_shape: scalar_shape(),
                tensor_content: (-3.5f32).to_le_bytes().to_vec(),
                ..Default::default()
            },
        ),
        tensor_event(
            4,
            "double_content",
            TensorProto {
                dtype: DataType::DtDouble as i32,
                tensor_shape: Some(TensorShapeProto {
                    dim: vec![Dim {
                        size: 1,
                        name: String::new(),
                    }],
                    unknown_rank: false,
                }),
                tensor_content: 1e300f64.to_le_bytes().to_vec(),
                ..Default::default()
            },
        ),
        tensor_event(
            5,
            "not_a_scalar",
            TensorProto {
                dtype: DataType::DtDouble as i32,
                tensor_shape: Some(TensorShapeProto {
                    dim: vec![Dim {
                        size: 3,
                        name: String::new(),
                    }],
                    unknown_rank: false,
                }),
                double_val: vec![1.0, 2.0, 3.0],
                ..Default::default()
            },
        ),
        tensor_event(
            6,
            "text",
            TensorProto {
                dtype: DataType::DtString as i32,
                tensor_shape: scalar_shape(),
                string_val: vec![b"hello".to_vec()],
                ..Default::default()
            },
        ),
    ];
    let bytes = framed(&events);
    let got = ScalarReader::new(bytes.as_slice()).read_to_end().unwrap();
    let s = |tag: &str, step, value| ScalarEvent {
        tag: tag.into(),
        step,
        wall_time: 5.0,
        value,
    };
    assert_eq!(
        got,
        vec![
            s("float_val", 1, 1.25),
            s("double_val", 2, 0.1),
            s("float_content", 3, -3.5),
            s("double_content", 4, 1e300),
        ]
    );
}

/// Writes a small file of three scalar steps and returns its bytes and record offsets.
fn three_step_file(dir: &Path) -> (std::path::PathBuf, Vec<u8>, Vec<u64>) {
    let mut w = EventFileWriter::open(dir, options()).unwrap();
    let mut offsets = Vec::new();
    for step in 1..=3 {
        offsets.push(w.bytes_written());
        w.write_scalars(step, 1.0, &[("a", step as f64), ("b", -(step as f64))])
            .unwrap();
    }
    let path = w.path().to_path_buf();
    w.close().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes, offsets)
}

#[test]
fn data_corruption_error_names_the_file_and_the_record_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut bytes, offsets) = three_step_file(dir.path());
    bytes[offsets[1] as usize + 14] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();

    let mut r = open_event_file(&path).unwrap();
    r.read_event().unwrap().unwrap(); // file_version
    r.read_event().unwrap().unwrap(); // step 1
    let err = r.read_event().unwrap_err();
    let want = format!(
        "{}: corrupt record at byte {}: data crc mismatch",
        path.display(),
        offsets[1]
    );
    assert!(err.to_string().starts_with(&want), "{err}");
    assert_eq!(r.read_event().unwrap().unwrap().step, 3);

    let mut skipping = open_event_file(&path)
        .unwrap()
        .with_on_corruption(OnCorruption::Skip);
    let steps: Vec<i64> = skipping
        .read_to_end()
        .unwrap()
        .iter()
        .map(|e| e.step)
        .collect();
    assert_eq!(steps, vec![0, 1, 3]);
    assert_eq!(skipping.skipped_records(), 1);
}

#[test]
fn length_corruption_error_names_the_file_and_stops_reading() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut bytes, offsets) = three_step_file(dir.path());
    bytes[offsets[2] as usize + 1] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    // Even under Skip: with the length unreadable there is no next record to skip to.
    let mut r = open_event_file(&path)
        .unwrap()
        .with_on_corruption(OnCorruption::Skip);
    let steps: Vec<i64> = (0..3)
        .map(|_| r.read_event().unwrap().unwrap().step)
        .collect();
    assert_eq!(steps, vec![0, 1, 2]);
    let want = format!(
        "{}: corrupt record at byte {}: length crc mismatch",
        path.display(),
        offsets[2]
    );
    for _ in 0..2 {
        let err = r.read_event().unwrap_err();
        assert!(err.to_string().starts_with(&want), "{err}");
    }
    assert_eq!(r.skipped_records(), 0);
}

#[test]
fn undecodable_event_is_reported_at_its_offset_or_skipped_under_skip() {
    let good = Event {
        step: 9,
        ..Default::default()
    };
    let mut w = RecordWriter::new(Vec::new());
    w.write_message(&good).unwrap();
    // Field 1 claims a double but the record ends: valid framing, invalid protobuf.
    let bad_offset = w.write_record(&[0x09, 0x01]).unwrap();
    w.write_message(&good).unwrap();
    let bytes = w.into_inner();

    let mut r = EventReader::new(bytes.as_slice());
    assert_eq!(r.read_event().unwrap().unwrap().step, 9);
    let err = r.read_event().unwrap_err();
    assert_eq!(err.offset(), Some(bad_offset));
    assert!(
        matches!(err.corruption(), Some(CorruptionKind::UndecodableEvent(_))),
        "{err}"
    );
    assert_eq!(r.read_event().unwrap().unwrap().step, 9);

    let mut r = EventReader::new(bytes.as_slice()).with_on_corruption(OnCorruption::Skip);
    assert_eq!(r.read_to_end().unwrap().len(), 2);
    assert_eq!(r.skipped_records(), 1);
}

#[test]
fn tailing_a_file_resumes_after_the_rest_of_a_record_is_appended() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes, offsets) = three_step_file(dir.path());
    // Rewrite the file as it looked halfway through writing step 2's record.
    let mid = offsets[1] as usize + 20;
    std::fs::write(&path, &bytes[..mid]).unwrap();

    let mut r = open_event_file(&path).unwrap().into_scalars();
    let first = r.read_to_end().unwrap();
    assert_eq!(first.iter().map(|s| s.step).collect::<Vec<_>>(), vec![1, 1]);
    assert!(
        r.read_scalar().unwrap().is_none(),
        "half a record is not an error"
    );

    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(&bytes[mid..]).unwrap();
    let rest = r.read_to_end().unwrap();
    assert_eq!(
        rest.iter()
            .map(|s| (s.tag.as_str(), s.step, s.value))
            .collect::<Vec<_>>(),
        vec![("a", 2, 2.0), ("b", 2, -2.0), ("a", 3, 3.0), ("b", 3, -3.0)]
    );
}

#[test]
fn missing_file_error_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.out.tfevents.nope");
    let err = open_event_file(&path).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{}: cannot open event file", path.display())),
        "{err}"
    );
}

#[test]
fn events_written_with_prost_and_with_write_scalars_decode_identically() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = EventFileWriter::open(dir.path(), options()).unwrap();
    w.write_scalars(4, 2.5, &[("x", 0.5)]).unwrap();
    let via_prost = Event {
        wall_time: 2.5,
        step: 4,
        what: Some(event::What::Summary(Summary {
            value: vec![summary::Value {
                tag: "x".into(),
                value: Some(summary::value::Value::SimpleValue(0.5)),
                ..Default::default()
            }],
        })),
    };
    w.write_event(&via_prost).unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    let events = open_event_file(&path).unwrap().read_to_end().unwrap();
    assert_eq!(events.len(), 3);
    assert_eq!(events[1], events[2]);
    assert_eq!(events[1].encode_to_vec(), via_prost.encode_to_vec());
}

#[test]
fn writer_file_cut_at_every_byte_reads_its_complete_events_then_none() {
    let dir = tempfile::tempdir().unwrap();
    let (_, bytes, offsets) = three_step_file(dir.path());
    // Record boundaries: the file_version event ends where step 1 starts, and so on.
    let ends = [offsets[0], offsets[1], offsets[2], bytes.len() as u64];
    for cut in 0..=bytes.len() {
        let mut r = EventReader::new(&bytes[..cut]);
        let events = r.read_to_end().unwrap_or_else(|e| panic!("cut {cut}: {e}"));
        let complete = ends.iter().filter(|&&end| end <= cut as u64).count();
        let steps: Vec<i64> = events.iter().map(|e| e.step).collect();
        assert_eq!(steps, (0..complete as i64).collect::<Vec<_>>(), "cut {cut}");
        assert!(r.read_event().unwrap().is_none(), "cut {cut}");
    }
}
