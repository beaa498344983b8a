//! One live logger per run (docs/contract/run-artifacts.md "Resume"): a logger holds an
//! exclusive advisory lock (`flock`) on its run directory from start to close, so a second
//! logger, in this process or another, is refused instead of interleaving the run's files and
//! overwriting its summary. The directory itself is locked: taking the lock writes nothing
//! into a run that is then refused.

use crate::error::{Error, Result};
use rustix::fs::{flock, FlockOperation};
use std::fs::File;
use std::path::Path;

/// The run's lock while its logger is live.
#[derive(Debug)]
pub struct RunLock(File);

impl RunLock {
    /// Lock `dir`, or refuse with [`Error::RunInUse`] while another logger holds it. A
    /// filesystem without locks (some network mounts) cannot tell: the run goes unguarded
    /// (None) rather than unlogged.
    pub fn acquire(dir: &Path) -> Result<Option<RunLock>> {
        let file = File::open(dir).map_err(Error::io("open", dir))?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(RunLock(file))),
            Err(rustix::io::Errno::WOULDBLOCK) => Err(Error::RunInUse(dir.to_owned())),
            Err(_) => Ok(None),
        }
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Released explicitly: a forked child sharing the descriptor would otherwise keep the
        // run locked until it exits.
        let _ = flock(&self.0, FlockOperation::Unlock);
    }
}
