//! Criterion benches for the logger's hot path (one 60-tag step to a file) and for reading scalars back (fast path, owned, prost, framing alone).

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use tally_tfevents::{
    encode_scalar_event, into_scalars, EventFileWriter, EventReader, FsyncPolicy, RecordWriter,
    ScalarReader, TfRecordReader, WriterOptions,
};

const TAGS_PER_STEP: usize = 60;
const EVENTS_TO_READ: usize = 10_000;

fn tags() -> Vec<String> {
    (0..TAGS_PER_STEP)
        .map(|i| format!("Group{}/metric_number_{i}", i % 6))
        .collect()
}

fn write_one_step(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let options = WriterOptions::from_env().with_fsync(FsyncPolicy::Never);
    let mut writer = EventFileWriter::open(dir.path(), options).unwrap();
    let names = tags();
    let mut scalars: Vec<(&str, f64)> = names.iter().map(|t| (t.as_str(), 0.0)).collect();
    let mut step = 0i64;
    let mut group = c.benchmark_group("write");
    group.throughput(Throughput::Elements(1));
    group.bench_function("write_scalars_60_tags_to_file", |b| {
        b.iter(|| {
            step += 1;
            for (i, s) in scalars.iter_mut().enumerate() {
                s.1 = step as f64 * 0.5 + i as f64;
            }
            writer
                .write_scalars(step, 1.7e9 + step as f64, black_box(&scalars))
                .unwrap();
        })
    });
    group.finish();
}

/// `events` events of `per_event` of the 60 tags each (60: tally's step; 1: torch/tensorboardX).
fn event_bytes(events: usize, per_event: usize) -> Vec<u8> {
    let names = tags();
    let mut records = RecordWriter::new(Vec::new());
    let mut buf = Vec::new();
    for e in 0..events {
        let first = (e * per_event) % TAGS_PER_STEP;
        let scalars: Vec<(&str, f64)> = (0..per_event)
            .map(|i| (names[(first + i) % TAGS_PER_STEP].as_str(), (e + i) as f64))
            .collect();
        buf.clear();
        encode_scalar_event(e as i64, 1.7e9 + e as f64, &scalars, &mut buf);
        records.write_record(&buf).unwrap();
    }
    records.into_inner()
}

/// Reading scalars from memory three ways: borrowed through the fast path (what `tally.read`
/// and `tally export` do), owned (`read_to_end`), and the general prost decode of every record.
fn read_scalars(c: &mut Criterion) {
    for (name, events, per_event) in [
        ("10k_60_tag_events", EVENTS_TO_READ, TAGS_PER_STEP),
        ("600k_1_tag_events", EVENTS_TO_READ * TAGS_PER_STEP, 1),
    ] {
        let bytes = event_bytes(events, per_event);
        let total = events * per_event;
        let mut group = c.benchmark_group("read");
        group.throughput(Throughput::Elements(total as u64));
        group.bench_function(format!("fast_borrowed_{name}"), |b| {
            b.iter(|| {
                let mut r = ScalarReader::new(black_box(bytes.as_slice()));
                let mut n = 0;
                while r.advance().unwrap() {
                    n += usize::from(r.current().is_some());
                }
                assert_eq!(n, total);
            })
        });
        group.bench_function(format!("fast_owned_{name}"), |b| {
            b.iter(|| {
                let got = ScalarReader::new(black_box(bytes.as_slice()))
                    .read_to_end()
                    .unwrap();
                assert_eq!(got.len(), total);
            })
        });
        group.bench_function(format!("prost_{name}"), |b| {
            b.iter(|| {
                let mut r = EventReader::new(black_box(bytes.as_slice()));
                let mut n = 0;
                while let Some(event) = r.read_event().unwrap() {
                    n += into_scalars(event).count();
                }
                assert_eq!(n, total);
            })
        });
        group.bench_function(format!("framing_and_crc_{name}"), |b| {
            b.iter(|| {
                let mut r = TfRecordReader::new(black_box(bytes.as_slice()));
                let mut n = 0;
                while r.read_record().unwrap().is_some() {
                    n += 1;
                }
                assert_eq!(n, events);
            })
        });
        group.finish();
    }
}

// Written out instead of criterion_group!/criterion_main!, whose generated `pub fn` trips
// the workspace's missing_docs lint.
fn main() {
    let mut c = Criterion::default().configure_from_args();
    write_one_step(&mut c);
    read_scalars(&mut c);
    c.final_summary();
}
