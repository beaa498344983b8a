//! Criterion benches for the logger's hot path (one 60-tag step to a file) and for reading scalars back.

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use tally_tfevents::{
    encode_scalar_event, EventFileWriter, FsyncPolicy, RecordWriter, ScalarReader, WriterOptions,
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

fn read_scalars(c: &mut Criterion) {
    let names = tags();
    let scalars: Vec<(&str, f64)> = names
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i as f64))
        .collect();
    let mut records = RecordWriter::new(Vec::new());
    let mut buf = Vec::new();
    for step in 0..EVENTS_TO_READ as i64 {
        buf.clear();
        encode_scalar_event(step, 1.7e9 + step as f64, &scalars, &mut buf);
        records.write_record(&buf).unwrap();
    }
    let bytes = records.into_inner();
    let mut group = c.benchmark_group("read");
    group.throughput(Throughput::Elements(EVENTS_TO_READ as u64));
    group.bench_function("scalars_from_10k_60_tag_events_in_memory", |b| {
        b.iter(|| {
            let got = ScalarReader::new(black_box(bytes.as_slice()))
                .read_to_end()
                .unwrap();
            assert_eq!(got.len(), EVENTS_TO_READ * TAGS_PER_STEP);
        })
    });
    group.finish();
}

// Written out instead of criterion_group!/criterion_main!, whose generated `pub fn` trips
// the workspace's missing_docs lint.
fn main() {
    let mut c = Criterion::default().configure_from_args();
    write_one_step(&mut c);
    read_scalars(&mut c);
    c.final_summary();
}
