//! Writes a deterministic event file into OUTDIR and prints its path and scalars as JSON, for cross-checking with TensorBoard's readers.
//!
//! Usage: `cargo run -q -p tally-tfevents --example write_fixture -- OUTDIR`

use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;
use tally_tfevents::{EventFileWriter, FsyncPolicy, WriterOptions};

const TAGS: [&str; 5] = [
    "Loss/critic",
    "Perf/learner_collector_wait_ms",
    "Perf/iteration_time",
    "Train/mean_reward",
    "reward/tracking_lin_vel",
];
const STEPS: i64 = 50;
const STEP_STRIDE: i64 = 256;

/// A value for tag `i` at step index `k`, covering zero, negatives, tiny and huge magnitudes.
fn value(k: i64, i: usize) -> f64 {
    match (k % 5, i) {
        (0, 0) => 0.0,
        (1, 1) => 1e20,
        (2, 2) => -1e-30,
        (3, 3) => 1.0e-7,
        (4, 4) => -12345.678,
        _ => ((k as f64) * 0.731 + i as f64).sin() * 10f64.powi(i as i32 - 1) - 0.5 * i as f64,
    }
}

fn main() -> std::process::ExitCode {
    // Report errors with their Display text (which names the file), not Debug.
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("write_fixture: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let outdir = std::env::args_os()
        .nth(1)
        .ok_or("usage: write_fixture OUTDIR")?;
    let options = WriterOptions {
        hostname: "fixture".into(),
        pid: 1,
        created_at: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        fsync: FsyncPolicy::Never,
        suffix: String::new(),
    };
    let mut writer = EventFileWriter::open(&outdir, options)?;
    let mut printed = Vec::new();
    let mut scalars = Vec::with_capacity(TAGS.len());
    for k in 1..=STEPS {
        let step = k * STEP_STRIDE;
        scalars.clear();
        scalars.extend(TAGS.iter().enumerate().map(|(i, tag)| (*tag, value(k, i))));
        writer.write_scalars(step, 1_700_000_000.0 + k as f64, &scalars)?;
        for (tag, v) in &scalars {
            // What is on disk is the f32 rounding; print that, widened back to f64.
            printed.push(json!({"tag": tag, "step": step, "value": f64::from(*v as f32)}));
        }
    }
    let path = writer.path().to_path_buf();
    writer.close()?;
    let doc = json!({"file": path.to_string_lossy(), "scalars": printed});
    println!("{doc}");
    Ok(())
}
