//! Writes one of `bench/board.py`'s runs with tally's event writer (`bench_logdir DIR STEPS
//! TAG...`: at each step one event of every tag, wall time 1e9 + step, tag i's value
//! (step % 97) / 97 + i), so the benchmark runs without the Python wheel built.

use tally_tfevents::{EventFileWriter, WriterOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("bench_logdir DIR STEPS TAG...");
    let steps: i64 = args.next().and_then(|s| s.parse().ok()).expect("STEPS");
    let tags: Vec<String> = args.collect();
    std::fs::create_dir_all(&dir).expect("making DIR");
    let mut w = EventFileWriter::open(&dir, WriterOptions::default()).expect("opening DIR");
    let mut scalars: Vec<(&str, f64)> = tags.iter().map(|t| (t.as_str(), 0.0)).collect();
    for step in 0..steps {
        for (i, s) in scalars.iter_mut().enumerate() {
            s.1 = (step % 97) as f64 / 97.0 + i as f64;
        }
        w.write_scalars(step, 1e9 + step as f64, &scalars)
            .expect("writing");
    }
    w.close().expect("closing");
}
