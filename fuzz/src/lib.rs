//! The bodies of tally's fuzz targets, as plain functions of the fuzzer's bytes.
//!
//! Each body drives one parser of untrusted input and asserts what must hold for any input:
//! no panic, no hang, no unbounded allocation, and the parser's own contract (a resumable
//! reader reads a growing file as it reads the whole one, a validator names `$`-paths, a
//! parsed document round-trips). `fuzz_targets/` hands them to libFuzzer under nightly;
//! `src/bin/replay.rs` runs every committed input through them on stable.

mod artifacts;
mod events;
mod framing;
mod http;
mod keys;
mod read;

pub use artifacts::{run_config, run_summary, runtime_manifest, soak};
pub use events::{event, scalar};
pub use framing::tfrecord;
pub use http::http_head;
pub use keys::metric_key;
pub use read::read;

/// A target's body.
pub type Body = fn(&[u8]);

/// Every target by name (the name of its `fuzz_targets/` file, corpus and regression folder).
pub const TARGETS: [(&str, Body); 10] = [
    ("tfrecord", tfrecord),
    ("event", event),
    ("scalar", scalar),
    ("run_summary", run_summary),
    ("runtime_manifest", runtime_manifest),
    ("soak", soak),
    ("run_config", run_config),
    ("metric_key", metric_key),
    ("read", read),
    ("http_head", http_head),
];
