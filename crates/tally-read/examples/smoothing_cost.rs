//! What the board's smoothing costs a chart request (`docs/contract/board.md` "Every point
//! drawn"): a held series of N points (regular steps, float32 values, as most runs hold them)
//! bucketed for a 1 000-pixel chart, alone and with TensorBoard's average at each bucket, and
//! a followed chart's newest buckets smoothed from the first point and from the states the
//! board keeps, the median of 21 runs each. `cargo run --release -p tally-read --example smoothing_cost
//! [N...]` (default 1 000 000 and 10 000 000).

use std::time::Instant;
use tally_read::downsample::{Axis, Series};

fn median_ms(mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..21)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000_000, 10_000_000]
    } else {
        sizes
    };
    for n in sizes {
        let mut s = Series::new();
        for i in 0..n {
            s.push(
                i as i64,
                1e9 + i as f64,
                ((i * 7919) % 1013) as f32 as f64 * 0.25,
            );
        }
        let d = s.downsample(Axis::Step, None, None, 1000);
        let bucketed = median_ms(|| {
            std::hint::black_box(s.downsample(Axis::Step, None, None, 1000));
        });
        let smoothed = median_ms(|| {
            let d = s.downsample(Axis::Step, None, None, 1000);
            std::hint::black_box(s.smoothed(Axis::Step, &d, 0.99));
        });
        let tail = s
            .downsample_from(Axis::Step, (n - 100) as f64, None, 10.0, 16_384)
            .unwrap();
        let followed = median_ms(|| {
            std::hint::black_box(s.smoothed(Axis::Step, &tail, 0.99));
        });
        // As the board asks: from the states kept every 65 536 points by the first request.
        let mut kept = Vec::new();
        let at = s.last_indices(Axis::Step, &tail);
        s.smoothed_with(&at, 0.99, &mut kept);
        let followed_kept = median_ms(|| {
            std::hint::black_box(s.smoothed_with(&at, 0.99, &mut kept));
        });
        println!(
            "{n} points, {} buckets: bucketed {bucketed:.2} ms, bucketed and smoothed \
             {smoothed:.2} ms; a followed chart's 10 newest buckets smoothed {followed:.2} ms \
             from the first point, {followed_kept:.3} ms from the kept states",
            d.buckets.len()
        );
    }
}
