//! Write a large synthetic event file for benchmarks: `gen_events EVENTS TAGS_PER_EVENT OUTDIR`.

use tally_tfevents::{EventFileWriter, WriterOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: gen_events EVENTS TAGS_PER_EVENT OUTDIR";
    let events: i64 = args.get(1).and_then(|s| s.parse().ok()).expect(usage);
    let tags: usize = args.get(2).and_then(|s| s.parse().ok()).expect(usage);
    let dir = args.get(3).expect(usage);
    std::fs::create_dir_all(dir).expect("create OUTDIR");
    let names: Vec<String> = (0..tags)
        .map(|i| format!("Perf/bench_tag_{i:03}"))
        .collect();
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).expect("open event file");
    let mut scalars: Vec<(&str, f64)> = names.iter().map(|n| (n.as_str(), 0.0)).collect();
    for step in 1..=events {
        for (i, s) in scalars.iter_mut().enumerate() {
            s.1 = (step as f64) * 0.001 + i as f64;
        }
        w.write_scalars(step, 1.7e9 + step as f64, &scalars)
            .expect("write");
    }
    w.close().expect("close");
    println!("{}", dir);
}
