//! The upload a logger writing to object storage hands its closed event-file segments to
//! (docs/contract/object-storage.md "Writing"): a trait, so the logger never depends on an
//! object-store client; `tally-cloud`'s `Uploader` implements it and the Python binding passes
//! it in ([`crate::LoggerConfig::upload`]).

use std::path::Path;
use std::time::Duration;

/// A run's uploader: puts files of the run directory (its staging directory) to the same keys
/// below the run's URL, in the order handed in, on a thread of its own.
pub trait Upload: Send + Sync + std::fmt::Debug {
    /// Queue a put of `local` (its first `len` bytes, or all of it); with `remove` the file is
    /// final and leaves staging once put. Returns the put's ticket. Never waits on the store.
    fn put(&self, local: &Path, len: Option<u64>, remove: bool) -> u64;
    /// What the uploader has to say (an outage begun or ended), each once; cheap when nothing.
    fn take_reports(&self) -> Vec<String>;
}

/// When a segment closes: the first of `after` since it opened or `bytes` written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Roll {
    /// How long a segment stays open (what a crash can lose at most).
    pub after: Duration,
    /// How large a segment grows.
    pub bytes: u64,
}

impl Roll {
    /// 5 s or 4 MiB; `TALLY_SEGMENT_SECONDS` and `TALLY_SEGMENT_BYTES` override.
    pub fn from_env() -> Roll {
        let secs = std::env::var("TALLY_SEGMENT_SECONDS")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .and_then(|s| Duration::try_from_secs_f64(s).ok());
        let bytes = std::env::var("TALLY_SEGMENT_BYTES")
            .ok()
            .and_then(|s| s.parse::<u64>().ok());
        Roll {
            after: secs.unwrap_or(Duration::from_secs(5)),
            bytes: bytes.unwrap_or(4 << 20),
        }
    }
}
