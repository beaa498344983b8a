//! The process's and the machine's counters read from `/proc` (docs/contract/system-metrics.md
//! "Where each value comes from"). The parsers are pure functions over a file's text so they
//! can be tested on fixtures; a file that cannot be read leaves its values out of the sample.

use std::path::Path;

/// Clock ticks per second of `/proc`'s CPU times (`USER_HZ`, 100 on every Linux ABI).
const TICKS: f64 = 100.0;
/// The unit of `/proc/diskstats`' sector counts, whatever the device's own sector size.
const SECTOR: f64 = 512.0;

/// One reading of every counter; rates and percentages come from two readings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// This process's user + system CPU seconds.
    pub process_cpu_secs: Option<f64>,
    /// This process's resident set, bytes.
    pub rss_bytes: Option<f64>,
    /// This process's threads.
    pub threads: Option<f64>,
    /// This process's open file descriptors.
    pub open_files: Option<f64>,
    /// The machine's CPU ticks: (busy, total) over every core.
    pub cpu_ticks: Option<(u64, u64)>,
    /// `MemTotal` and `MemAvailable`, bytes.
    pub memory: Option<(f64, f64)>,
    /// The 1-minute load average.
    pub load_1m: Option<f64>,
    /// Bytes read and written by the whole disks.
    pub disk: Option<(f64, f64)>,
    /// Bytes received and sent by every interface but loopback.
    pub network: Option<(f64, f64)>,
    /// Bytes free to an unprivileged writer on the run directory's filesystem.
    pub disk_free_bytes: Option<f64>,
}

/// `/proc/self/stat`: (user + system CPU seconds, threads, resident pages). The command name
/// may hold spaces and parentheses, so fields are counted from the last `)`.
pub fn parse_self_stat(text: &str) -> Option<(f64, f64, f64)> {
    let rest: Vec<&str> = text
        .get(text.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    // rest[0] is field 3 (state): utime 14, stime 15, num_threads 20, rss 24.
    let n = |i: usize| rest.get(i).and_then(|v| v.parse::<f64>().ok());
    Some(((n(11)? + n(12)?) / TICKS, n(17)?, n(21)?))
}

/// `/proc/stat`'s `cpu` line: (busy, total) ticks; idle and iowait are not busy.
pub fn parse_cpu_line(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    if v.len() < 5 {
        return None;
    }
    let total: u64 = v.iter().sum();
    Some((total - v[3] - v[4], total))
}

/// `/proc/meminfo`: (`MemTotal`, `MemAvailable`) in bytes.
pub fn parse_meminfo(text: &str) -> Option<(f64, f64)> {
    let kib = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok())
            .map(|v| v * 1024.0)
    };
    Some((kib("MemTotal:")?, kib("MemAvailable:")?))
}

/// `/proc/loadavg`: the 1-minute load average.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// Whether a block device of `/sys/block` counts as a whole disk: loop, RAM, device-mapper,
/// software RAID and optical devices are left out (their I/O is a disk's, or none).
pub fn is_physical_disk(name: &str) -> bool {
    !["loop", "ram", "zram", "dm-", "md", "sr", "fd", "nbd"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// `/proc/diskstats` summed over `disks`: (bytes read, bytes written).
pub fn parse_diskstats(text: &str, disks: &[String]) -> (f64, f64) {
    let (mut read, mut written) = (0.0, 0.0);
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 10 || !disks.iter().any(|d| d == f[2]) {
            continue;
        }
        read += f[5].parse::<f64>().unwrap_or(0.0) * SECTOR;
        written += f[9].parse::<f64>().unwrap_or(0.0) * SECTOR;
    }
    (read, written)
}

/// `/proc/net/dev` summed over every interface but `lo`: (bytes received, bytes sent).
pub fn parse_net_dev(text: &str) -> (f64, f64) {
    let (mut rx, mut tx) = (0.0, 0.0);
    for line in text.lines().skip(2) {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        if name.trim() == "lo" {
            continue;
        }
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() >= 9 {
            rx += f[0].parse::<f64>().unwrap_or(0.0);
            tx += f[8].parse::<f64>().unwrap_or(0.0);
        }
    }
    (rx, tx)
}

/// The whole disks of `/sys/block`, read once when sampling starts.
pub fn physical_disks() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| is_physical_disk(n))
        .collect();
    names.sort();
    names
}

/// Read every counter now. `disks` from [`physical_disks`]; `run_dir` for the free space.
pub fn read(disks: &[String], run_dir: &Path, page_bytes: f64) -> Reading {
    let text = |p: &str| std::fs::read_to_string(p).ok();
    let mut r = Reading::default();
    if let Some((cpu, threads, pages)) =
        text("/proc/self/stat").as_deref().and_then(parse_self_stat)
    {
        r.process_cpu_secs = Some(cpu);
        r.threads = Some(threads);
        r.rss_bytes = Some(pages * page_bytes);
    }
    r.open_files = std::fs::read_dir("/proc/self/fd")
        .ok()
        // The directory's own descriptor, open while it is read, is not the process's.
        .map(|d| d.count().saturating_sub(1) as f64);
    r.cpu_ticks = text("/proc/stat").as_deref().and_then(parse_cpu_line);
    r.memory = text("/proc/meminfo").as_deref().and_then(parse_meminfo);
    r.load_1m = text("/proc/loadavg").as_deref().and_then(parse_loadavg);
    r.disk = text("/proc/diskstats").map(|t| parse_diskstats(&t, disks));
    r.network = text("/proc/net/dev").map(|t| parse_net_dev(&t));
    r.disk_free_bytes = rustix::fs::statvfs(run_dir)
        .ok()
        .map(|s| s.f_bavail as f64 * s.f_frsize as f64);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_stat_counts_fields_from_the_last_parenthesis() {
        let s = "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 1000 \
                 123456 300 18446744073709551615";
        assert_eq!(parse_self_stat(s), Some((3.0, 7.0, 300.0)));
    }

    #[test]
    fn cpu_line_leaves_idle_and_iowait_out_of_busy() {
        let s = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
        assert_eq!(parse_cpu_line(s), Some((150, 1000)));
    }

    #[test]
    fn meminfo_diskstats_net_and_load_parse() {
        let m = "MemTotal:       16000000 kB\nMemFree: 1 kB\nMemAvailable:    4000000 kB\n";
        assert_eq!(
            parse_meminfo(m),
            Some((16_000_000.0 * 1024.0, 4_000_000.0 * 1024.0))
        );
        let d = "   8       0 sda 10 0 200 0 5 0 100 0 0 0 0\n   8       1 sda1 1 0 9 0 1 0 9 0\n \
                 7 0 loop0 1 0 999 0 0 0 999 0 0 0 0\n";
        assert_eq!(
            parse_diskstats(d, &["sda".into()]),
            (200.0 * 512.0, 100.0 * 512.0)
        );
        let n = "Inter-|   Receive\n face |bytes\n    lo: 999 1 0 0 0 0 0 0 999 1 0 0 0 0 0 0\n\
                 eth0: 1000 5 0 0 0 0 0 0 300 3 0 0 0 0 0 0\n";
        assert_eq!(parse_net_dev(n), (1000.0, 300.0));
        assert_eq!(parse_loadavg("0.52 0.40 0.30 1/200 1234\n"), Some(0.52));
        assert!(is_physical_disk("nvme0n1") && !is_physical_disk("loop3"));
    }
}
