//! Asking the kernel to read files ahead of the reader: on a cold page cache a run's files are
//! otherwise read one request at a time per reading thread, and many runs read that way wait on
//! the disk's latency rather than its throughput (docs/contract/consumers.md "Reading scalars
//! fast").

use std::path::PathBuf;

/// Hints that `files` will be read soon, whole. Best effort: a file that cannot be opened is
/// left to the reader, which reports it.
pub fn will_need(files: &[PathBuf]) {
    for f in files {
        if let Ok(file) = tally_tfevents::open::open_regular(f) {
            let _ = rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::WillNeed);
        }
    }
}
