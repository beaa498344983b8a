//! One live writer per run directory (docs/contract/run-artifacts.md "Resume"): a logger, and
//! each of Python's `SummaryWriter`/`EventWriter`, holds an exclusive advisory lock (`flock`)
//! on its directory from start to close, so a second one, in this process or another, is
//! refused instead of interleaving the run's files and overwriting its summary. The directory
//! itself is locked: taking the lock writes nothing into a run that is then refused.

use crate::error::{Error, Result};
use rustix::fs::{flock, fstat, major, minor, FlockOperation};
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
            Err(rustix::io::Errno::WOULDBLOCK) => {
                let holder = holder(&file).map_or_else(
                    || "another writer".to_owned(),
                    |pid| match pid == std::process::id() {
                        true => "this process".to_owned(),
                        false => format!("process {pid}"),
                    },
                );
                Err(Error::RunInUse(dir.to_owned(), holder))
            }
            Err(_) => Ok(None),
        }
    }
}

/// The process holding the `flock` on `dir`, from the kernel's lock table (`/proc/locks` on
/// Linux); `None` where there is none to read.
fn holder(dir: &File) -> Option<u32> {
    let st = fstat(dir).ok()?;
    let (maj, min) = (major(st.st_dev), minor(st.st_dev));
    let want = format!("{maj:02x}:{min:02x}:{}", st.st_ino);
    let table = std::fs::read_to_string("/proc/locks").ok()?;
    table.lines().find_map(|line| {
        // "1: FLOCK  ADVISORY  WRITE 2817 08:02:1234 0 EOF"; waiters are "1: -> FLOCK ...".
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            [_, "FLOCK", _, _, pid, dev_ino, ..] if *dev_ino == want => pid.parse().ok(),
            _ => None,
        }
    })
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Released explicitly: a forked child sharing the descriptor would otherwise keep the
        // run locked until it exits.
        let _ = flock(&self.0, FlockOperation::Unlock);
    }
}
