//! The monitored process tree read from `/proc`: which processes belong to the soaked command
//! (its process group, plus descendants that left it), and for each its identity, resident set,
//! open descriptors by class and command line.
//!
//! The parsers are pure functions over the file contents so they can be tested on fixtures; a
//! process that exits while it is read is simply skipped (it is gone, not an error).

use serde_json::Map;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::Path;
use tally_schema::artifacts::{SoakFdClasses, SoakProcessSample};

/// The longest command line a sample keeps, in characters.
pub const COMMAND_MAX_CHARS: usize = 512;

/// The fields of `/proc/PID/stat` the monitor uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// Process id.
    pub pid: u32,
    /// One-letter state (`R`, `S`, `Z`, ...).
    pub state: char,
    /// Parent process id.
    pub ppid: u32,
    /// Process group id.
    pub pgrp: u32,
    /// Start time in clock ticks since boot.
    pub start_ticks: u64,
}

/// Parse `/proc/PID/stat`. The command name (field 2) is parenthesised and may itself hold
/// spaces and parentheses, so the fields after it are found from the last `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); starttime is field 22.
    Some(Stat {
        pid,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        pgrp: rest.get(2)?.parse().ok()?,
        start_ticks: rest.get(19)?.parse().ok()?,
    })
}

/// `VmRSS` of `/proc/PID/status` in KiB; 0 when absent (a kernel thread or a zombie).
pub fn parse_rss_kib(status: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The command line of `/proc/PID/cmdline` (NUL-separated) joined by spaces and cut to
/// [`COMMAND_MAX_CHARS`] characters.
pub fn command_line(cmdline: &[u8]) -> String {
    let text = String::from_utf8_lossy(cmdline);
    let joined = text
        .trim_end_matches('\0')
        .split('\0')
        .collect::<Vec<_>>()
        .join(" ");
    joined.chars().take(COMMAND_MAX_CHARS).collect()
}

/// One descriptor's class from its `/proc/PID/fd/N` link target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FdClass {
    /// `pipe:[...]`.
    Pipe,
    /// `socket:[...]`.
    Socket,
    /// `/memfd:...`.
    Memfd,
    /// `anon_inode:[eventfd]`.
    Eventfd,
    /// `anon_inode:[eventpoll]`.
    Eventpoll,
    /// `/dev/nvidia*`.
    Nvidia,
    /// `/dev/shm/...`.
    SharedMemory,
    /// Anything else.
    Other,
}

/// Classify a descriptor by its link target.
pub fn classify_fd(target: &str) -> FdClass {
    if target.starts_with("pipe:") {
        FdClass::Pipe
    } else if target.starts_with("socket:") {
        FdClass::Socket
    } else if target.starts_with("/memfd:") {
        FdClass::Memfd
    } else if target == "anon_inode:[eventfd]" {
        FdClass::Eventfd
    } else if target == "anon_inode:[eventpoll]" {
        FdClass::Eventpoll
    } else if target.starts_with("/dev/nvidia") {
        FdClass::Nvidia
    } else if target.starts_with("/dev/shm/") {
        FdClass::SharedMemory
    } else {
        FdClass::Other
    }
}

/// Count descriptors by class.
pub fn fd_classes<'a>(targets: impl IntoIterator<Item = &'a str>) -> (u64, SoakFdClasses) {
    let mut c = SoakFdClasses::default();
    let mut n = 0;
    for t in targets {
        n += 1;
        let slot = match classify_fd(t) {
            FdClass::Pipe => &mut c.pipe,
            FdClass::Socket => &mut c.socket,
            FdClass::Memfd => &mut c.memfd,
            FdClass::Eventfd => &mut c.eventfd,
            FdClass::Eventpoll => &mut c.eventpoll,
            FdClass::Nvidia => &mut c.nvidia,
            FdClass::SharedMemory => &mut c.shared_memory,
            FdClass::Other => &mut c.other,
        };
        *slot += 1;
    }
    (n, c)
}

/// The pids of the monitored tree among `stats`: every live member of process group `pgid`,
/// and every live descendant of `root` (a child that moved to its own group or session is
/// still the command's while its parent chain leads back to it). Zombies are not counted: they
/// hold no resources but their exit status.
pub fn tree_members(stats: &[Stat], pgid: u32, root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for s in stats {
        children.entry(s.ppid).or_default().push(s.pid);
    }
    let mut members: HashSet<u32> = stats
        .iter()
        .filter(|s| s.pgrp == pgid)
        .map(|s| s.pid)
        .collect();
    let live: HashSet<u32> = stats.iter().map(|s| s.pid).collect();
    let mut seen = HashSet::new();
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        if !seen.insert(p) {
            continue;
        }
        if live.contains(&p) {
            members.insert(p);
        }
        if let Some(kids) = children.get(&p) {
            stack.extend(kids);
        }
    }
    let zombie: HashSet<u32> = stats
        .iter()
        .filter(|s| s.state == 'Z' || s.state == 'X')
        .map(|s| s.pid)
        .collect();
    let mut out: Vec<u32> = members
        .into_iter()
        .filter(|p| !zombie.contains(p))
        .collect();
    out.sort_unstable();
    out
}

/// Every process's stat line under `proc_root` (normally `/proc`).
pub fn all_stats(proc_root: &Path) -> std::io::Result<Vec<Stat>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(proc_root)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        // A process that exited since the listing is skipped.
        if let Ok(text) = fs::read_to_string(proc_root.join(pid).join("stat")) {
            if let Some(s) = parse_stat(&text) {
                out.push(s);
            }
        }
    }
    Ok(out)
}

/// Read one process's sample; None when it exited while being read.
pub fn sample_process(proc_root: &Path, stat: &Stat) -> Option<SoakProcessSample> {
    let dir = proc_root.join(stat.pid.to_string());
    let status = fs::read_to_string(dir.join("status")).ok()?;
    let cmdline = fs::read(dir.join("cmdline")).unwrap_or_default();
    let mut targets = Vec::new();
    // Descriptors of a process we may not inspect count as none rather than failing the soak.
    if let Ok(fds) = fs::read_dir(dir.join("fd")) {
        for fd in fds.flatten() {
            if let Ok(t) = fs::read_link(fd.path()) {
                targets.push(t.to_string_lossy().into_owned());
            }
        }
    }
    let (fd_count, classes) = fd_classes(targets.iter().map(String::as_str));
    Some(SoakProcessSample {
        pid: u64::from(stat.pid),
        start_ticks: stat.start_ticks,
        rss_kib: parse_rss_kib(&status),
        fd_count,
        fd_classes: classes,
        command: command_line(&cmdline),
        extra: Map::new(),
    })
}

/// Sample the tree of the command whose process group is `pgid` and whose first process is
/// `root`.
pub fn sample_tree(
    proc_root: &Path,
    pgid: u32,
    root: u32,
) -> std::io::Result<Vec<SoakProcessSample>> {
    let stats = all_stats(proc_root)?;
    let members = tree_members(&stats, pgid, root);
    Ok(stats
        .iter()
        .filter(|s| members.binary_search(&s.pid).is_ok())
        .filter_map(|s| sample_process(proc_root, s))
        .collect())
}

/// What outlives the command among `stats`: the live members of process group `pgid`, and
/// every process of the tree seen while it ran (`seen`: pid and start ticks, so a reused pid
/// is not mistaken for it) that is still alive though it left the group.
pub fn survivors(stats: &[Stat], pgid: u32, seen: &HashSet<(u32, u64)>) -> Vec<Stat> {
    stats
        .iter()
        .filter(|s| s.state != 'Z' && s.state != 'X')
        .filter(|s| s.pgrp == pgid || seen.contains(&(s.pid, s.start_ticks)))
        .copied()
        .collect()
}

/// [`survivors`] read from `proc_root`, each sampled.
pub fn sample_survivors(
    proc_root: &Path,
    pgid: u32,
    seen: &HashSet<(u32, u64)>,
) -> std::io::Result<Vec<SoakProcessSample>> {
    let stats = all_stats(proc_root)?;
    Ok(survivors(&stats, pgid, seen)
        .iter()
        .filter_map(|s| sample_process(proc_root, s))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(pid: u32, state: char, ppid: u32, pgrp: u32) -> Stat {
        Stat {
            pid,
            state,
            ppid,
            pgrp,
            start_ticks: 0,
        }
    }

    #[test]
    fn stat_with_parentheses_and_spaces_in_the_name() {
        // A real stat line of a process named "a) b (c", fields as the kernel writes them.
        let line = "4242 (a) b (c) S 17 4242 4242 0 -1 4194304 120 0 0 0 3 1 0 0 20 0 1 0 \
                    987654 10485760 250 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!(
            s,
            Stat {
                pid: 4242,
                state: 'S',
                ppid: 17,
                pgrp: 4242,
                start_ticks: 987654
            }
        );
    }

    #[test]
    fn stat_that_is_cut_short_is_refused() {
        assert_eq!(parse_stat("12 (sh) S 1 12"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn rss_from_status() {
        let status = "Name:\tpython\nVmPeak:\t  900 kB\nVmRSS:\t  123456 kB\nThreads:\t4\n";
        assert_eq!(parse_rss_kib(status), 123456);
        assert_eq!(parse_rss_kib("Name:\tkworker\nThreads:\t1\n"), 0);
    }

    #[test]
    fn command_line_is_joined_and_cut() {
        assert_eq!(command_line(b"sleep\x0030\x00"), "sleep 30");
        let long = vec![b'x'; 2000];
        assert_eq!(command_line(&long).chars().count(), COMMAND_MAX_CHARS);
        assert_eq!(command_line(b""), "");
    }

    #[test]
    fn descriptor_classes() {
        let targets = [
            "pipe:[1234]",
            "socket:[99]",
            "/memfd:cuda-ipc (deleted)",
            "anon_inode:[eventfd]",
            "anon_inode:[eventpoll]",
            "/dev/nvidia0",
            "/dev/nvidiactl",
            "/dev/shm/torch_1_2",
            "/dev/null",
            "/home/u/run/events.out.tfevents.1",
            "anon_inode:[timerfd]",
        ];
        let (n, c) = fd_classes(targets);
        assert_eq!(n, 11);
        assert_eq!(
            (
                c.pipe,
                c.socket,
                c.memfd,
                c.eventfd,
                c.eventpoll,
                c.nvidia,
                c.shared_memory,
                c.other
            ),
            (1, 1, 1, 1, 1, 2, 1, 3)
        );
    }

    #[test]
    fn tree_is_the_group_plus_descendants_without_zombies() {
        let stats = [
            stat(1, 'S', 0, 1),
            stat(100, 'S', 1, 100), // the command, group leader
            stat(101, 'S', 100, 100),
            stat(102, 'S', 100, 102), // moved to its own group: still a descendant
            stat(103, 'S', 102, 102), // its child
            stat(104, 'Z', 100, 100), // zombie
            stat(105, 'S', 1, 100),   // orphan reparented to init, still in the group
            stat(200, 'S', 1, 200),   // unrelated
        ];
        assert_eq!(
            tree_members(&stats, 100, 100),
            vec![100, 101, 102, 103, 105]
        );
        // After the command exited, its group is what is left.
        assert_eq!(tree_members(&stats[5..], 100, 100), vec![105]);
    }

    #[test]
    fn survivors_are_the_group_and_the_seen_processes_that_left_it() {
        let mut moved = stat(102, 'S', 1, 102);
        moved.start_ticks = 7;
        let mut reused = stat(103, 'S', 1, 103);
        reused.start_ticks = 99; // pid 103 was seen with start 8: another process now
        let stats = [
            stat(101, 'S', 1, 100),
            moved,
            reused,
            stat(104, 'Z', 1, 100),
            stat(200, 'S', 1, 200),
        ];
        let seen: HashSet<(u32, u64)> = [(102, 7), (103, 8)].into_iter().collect();
        let pids: Vec<u32> = survivors(&stats, 100, &seen)
            .iter()
            .map(|s| s.pid)
            .collect();
        assert_eq!(pids, vec![101, 102]);
    }
}
