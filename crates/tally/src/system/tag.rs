//! The system metrics' tag names (docs/contract/system-metrics.md "Tags"): the sampler's, and
//! the order `ranks.rs` packs them in for the ranks' collective.

/// This process's CPU use, % of one core (above 100 on several).
pub const PROCESS_CPU: &str = "system/process/cpu_percent";
/// This process's resident memory, bytes.
pub const PROCESS_RSS: &str = "system/process/rss_bytes";
/// This process's threads.
pub const PROCESS_THREADS: &str = "system/process/threads";
/// This process's open file descriptors.
pub const PROCESS_FILES: &str = "system/process/open_files";
/// The machine's CPU use, % of all its cores.
pub const CPU: &str = "system/machine/cpu_percent";
/// The machine's memory in use (total less available), bytes.
pub const MEM_USED: &str = "system/machine/memory_used_bytes";
/// The machine's memory available without swapping, bytes.
pub const MEM_AVAILABLE: &str = "system/machine/memory_available_bytes";
/// The machine's 1-minute load average.
pub const LOAD: &str = "system/machine/load_1m";
/// Bytes read per second by the machine's whole disks.
pub const DISK_READ: &str = "system/machine/disk_read_bytes_per_s";
/// Bytes written per second by the machine's whole disks.
pub const DISK_WRITE: &str = "system/machine/disk_write_bytes_per_s";
/// Bytes free under the run directory.
pub const DISK_FREE: &str = "system/machine/disk_free_bytes";
/// Bytes received per second, every interface but loopback.
pub const NET_RECV: &str = "system/machine/network_recv_bytes_per_s";
/// Bytes sent per second, every interface but loopback.
pub const NET_SENT: &str = "system/machine/network_sent_bytes_per_s";

/// The process's tags, in their fixed order.
pub const PROCESS: [&str; 4] = [PROCESS_CPU, PROCESS_RSS, PROCESS_THREADS, PROCESS_FILES];

/// The machine's tags, in their fixed order.
pub const MACHINE: [&str; 9] = [
    CPU,
    MEM_USED,
    MEM_AVAILABLE,
    LOAD,
    DISK_READ,
    DISK_WRITE,
    DISK_FREE,
    NET_RECV,
    NET_SENT,
];

/// The last segment of each GPU's tags, `system/gpu<N>/<field>`, in their fixed order.
pub const GPU_FIELDS: [&str; 7] = [
    "util_percent",
    "memory_used_bytes",
    "memory_total_bytes",
    "power_watts",
    "temperature_celsius",
    "sm_clock_mhz",
    "memory_clock_mhz",
];

/// GPU `index`'s tag for `field` (one of [`GPU_FIELDS`]), under `prefix` (`system/`, or a
/// rank's `system/rank<R>/`).
pub fn gpu_tag(prefix: &str, index: u32, field: &str) -> String {
    format!("{prefix}gpu{index}/{field}")
}
