//! Whether a process on this machine still holds a run's event file open for writing: a run
//! without a summary saying `running` (a `tally.SummaryWriter`'s) is live while it does, so a
//! writer hung in its loop is judged for a stall at the run's end. torch's writer opens the
//! file for each write and is not seen here; `named_writer.rs` finds it by the process its
//! file's name carries (`docs/contract/health.md` "tally health").
//!
//! Linux only (`/proc/PID/fd`, `/proc/PID/fdinfo`); elsewhere, and for processes this user
//! cannot inspect, no file is seen open. The listing is kept for two seconds, so a runs table
//! of many runs scans `/proc` once per refresh.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// (device, inode) of the event files open for writing now.
type Open = Arc<HashSet<(u64, u64)>>;

/// How long one scan of `/proc` is reused.
const FRESH: Duration = Duration::from_secs(2);

/// Whether an event file directly in `dir` is open for writing by some process.
pub fn held_open(dir: &Path) -> bool {
    let open = open_event_files();
    if open.is_empty() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        e.file_name().to_string_lossy().contains("tfevents")
            && e.metadata().is_ok_and(|m| open.contains(&dev_ino(&m)))
    })
}

fn open_event_files() -> Open {
    static CACHE: Mutex<Option<(Instant, Open)>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((at, open)) = cache.as_ref() {
        if at.elapsed() < FRESH {
            return open.clone();
        }
    }
    let open: Open = Arc::new(scan());
    *cache = Some((Instant::now(), open.clone()));
    open
}

#[cfg(unix)]
fn dev_ino(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn dev_ino(_: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// Every process's descriptors naming an event file, opened to write (a reader such as
/// `tally watch` or the board holds it read-only and does not count).
#[cfg(target_os = "linux")]
fn scan() -> HashSet<(u64, u64)> {
    let mut open = HashSet::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return open;
    };
    for p in procs.flatten() {
        let pid = p.file_name();
        if !pid.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            if !target.to_string_lossy().contains("tfevents") {
                continue;
            }
            let info = p.path().join("fdinfo").join(fd.file_name());
            if !writable(&std::fs::read_to_string(info).unwrap_or_default()) {
                continue;
            }
            if let Ok(m) = std::fs::metadata(fd.path()) {
                open.insert(dev_ino(&m));
            }
        }
    }
    open
}

#[cfg(not(target_os = "linux"))]
fn scan() -> HashSet<(u64, u64)> {
    HashSet::new()
}

/// Whether an fdinfo's `flags:` (octal) open the file to write (O_WRONLY or O_RDWR).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn writable(fdinfo: &str) -> bool {
    fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        .is_some_and(|f| f & 0o3 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fdinfo_flags_say_whether_the_file_is_written() {
        assert!(writable("pos:\t0\nflags:\t02102001\nmnt_id:\t25\n"));
        assert!(writable("flags:\t0100002\n"));
        assert!(!writable("pos:\t0\nflags:\t0100000\n"));
        assert!(!writable(""));
    }
}
