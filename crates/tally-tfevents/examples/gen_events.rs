//! Write a large synthetic event file for benchmarks:
//! `gen_events STEPS TAGS OUTDIR [per-tag]`: STEPS steps of TAGS scalars, one event per step as
//! tally writes them, or with `per-tag` one event per scalar as torch's and tensorboardX's
//! `add_scalar` write them (the same `simple_value` wire shape).

use tally_tfevents::{EventFileWriter, WriterOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: gen_events STEPS TAGS OUTDIR [per-tag]";
    let events: i64 = args.get(1).and_then(|s| s.parse().ok()).expect(usage);
    let tags: usize = args.get(2).and_then(|s| s.parse().ok()).expect(usage);
    let dir = args.get(3).expect(usage);
    let per_tag = match args.get(4).map(String::as_str) {
        None => false,
        Some("per-tag") => true,
        Some(other) => panic!("{usage}: unknown mode {other:?}"),
    };
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
        let wall = 1.7e9 + step as f64;
        if per_tag {
            for s in &scalars {
                w.write_scalars(step, wall, std::slice::from_ref(s))
                    .expect("write");
            }
        } else {
            w.write_scalars(step, wall, &scalars).expect("write");
        }
    }
    w.close().expect("close");
    println!("{}", dir);
}
