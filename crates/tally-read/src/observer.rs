//! [`Observer`]: what a long read tells its front end while it goes (a note about the run, damage
//! as soon as it is found, progress), so the library prints nothing and each front end shows
//! it its own way (the CLI on stderr, Python as warnings).

use std::path::{Path, PathBuf};
use tally_tfevents::Damage;

/// Receives what a read finds on the way; every method ignores it by default.
pub trait Observer {
    /// A fact about the run worth a line, that does not stop the read.
    fn note(&mut self, _text: &str) {}
    /// A path the listing left out and why (a special file, a link leading nowhere, a directory
    /// it could not read: docs/contract/untrusted-input.md "Special files"); the others are
    /// listed all the same. Told as a note unless the front end keeps them apart.
    fn skipped(&mut self, path: &Path, why: &str) {
        self.note(&format!("{}: skipped: {why}", path.display()));
    }
    /// Damage the reader read past (truncated tails, skipped records), in reading order.
    fn damage(&mut self, _found: &[Damage]) {}
    /// Bytes read of `total`, and rows written so far; `last` once, when the read is done.
    fn progress(&mut self, _done: u64, _total: u64, _rows: u64, _last: bool) {}
}

/// An [`Observer`] that keeps nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Quiet;

impl Observer for Quiet {}

/// Keeps what was skipped, each path with why, beside the runs a reader could not read (the
/// `skipped` every front end already shows).
impl Observer for Vec<(PathBuf, String)> {
    fn skipped(&mut self, path: &Path, why: &str) {
        self.push((path.to_owned(), why.to_owned()));
    }
}
