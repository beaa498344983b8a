//! The read floor and the two scalar paths on the same event files, for `make bench`:
//! `read_floor REPEATS FILE...` prints one JSON object with each measurement's seconds per
//! repeat: `floor` (read every byte in 1 MiB chunks and CRC-32C it, what any reader must do),
//! `prost` (every record decoded as an `Event` by prost, then its scalars: the general path)
//! and `fast` (`ScalarReader::advance`/`current`: the scalar fast path, no allocation per
//! scalar), plus the file bytes and scalars counted. Instructions per scalar of the fast path
//! alone: `valgrind --tool=callgrind --toggle-collect='read_floor::fast_path' read_floor 1 FILE`.

use std::fs::File;
use std::io::Read;
use std::time::Instant;

use tally_tfevents::{into_scalars, open_event_file};

// Not inlined: a symbol for `valgrind --tool=callgrind --toggle-collect`.
#[inline(never)]
fn floor(files: &[String]) -> (u64, u32) {
    let mut buf = vec![0u8; 1 << 20];
    let (mut bytes, mut crc) = (0u64, 0u32);
    for f in files {
        let mut file = File::open(f).expect("open");
        loop {
            let n = file.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            bytes += n as u64;
            crc = crc32c::crc32c_append(crc, &buf[..n]);
        }
    }
    (bytes, crc)
}

// Not inlined: a symbol for `valgrind --tool=callgrind --toggle-collect`.
#[inline(never)]
fn prost_path(files: &[String]) -> (u64, f64) {
    let (mut n, mut sum) = (0u64, 0.0);
    for f in files {
        let mut reader = open_event_file(f).expect("open");
        while let Some(event) = reader.read_event().expect("read") {
            for s in into_scalars(event) {
                n += 1;
                sum += s.value + s.tag.len() as f64;
            }
        }
    }
    (n, sum)
}

// Not inlined: a symbol for `valgrind --tool=callgrind --toggle-collect`.
#[inline(never)]
fn fast_path(files: &[String]) -> (u64, f64) {
    let (mut n, mut sum) = (0u64, 0.0);
    for f in files {
        let mut reader = open_event_file(f).expect("open").into_scalars();
        while reader.advance().expect("read") {
            let s = reader.current().expect("a scalar after advance");
            n += 1;
            sum += s.value + s.tag.len() as f64;
        }
    }
    (n, sum)
}

fn times<T>(repeats: usize, mut f: impl FnMut() -> T) -> (Vec<f64>, T) {
    let mut out = Vec::new();
    let mut last = None;
    for _ in 0..repeats {
        let t = Instant::now();
        last = Some(std::hint::black_box(f()));
        out.push(t.elapsed().as_secs_f64());
    }
    (out, last.expect("at least one repeat"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: read_floor REPEATS FILE...";
    let repeats: usize = args.first().and_then(|s| s.parse().ok()).expect(usage);
    let files = &args[1..];
    assert!(!files.is_empty() && repeats > 0, "{usage}");
    let (floor_s, (bytes, _)) = times(repeats, || floor(files));
    let (prost_s, (n_prost, sum_prost)) = times(repeats, || prost_path(files));
    let (fast_s, (n_fast, sum_fast)) = times(repeats, || fast_path(files));
    assert_eq!(n_prost, n_fast, "both paths count the same scalars");
    assert_eq!(
        sum_prost.to_bits(),
        sum_fast.to_bits(),
        "both paths read the same values"
    );
    println!(
        "{}",
        serde_json::json!({
            "bytes": bytes, "scalars": n_fast,
            "floor": floor_s, "prost": prost_s, "fast": fast_s,
        })
    );
}
