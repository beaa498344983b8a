//! Whether a run's event file is being written by a process its name carries: tensorboard's
//! `EventFileWriter` (torch's `SummaryWriter`, stable-baselines3's and CleanRL's default) opens
//! the file for each write, so no descriptor shows a hung writer, but it names the file
//! `events.out.tfevents.<secs>.<hostname>.<pid>.<n>` and says who wrote it in the first event
//! (docs/contract/health.md "tally health").
//!
//! A file is taken as being written when its first event names that writer, its host name is
//! this machine's, and the process of its pid is alive, was started no later than the file
//! was made (a pid used again by a later process is not its writer) and runs as the file's
//! owner. Linux only (`/proc`); elsewhere no writer is found alive.

use std::path::Path;

/// The `source_metadata.writer` of tensorboard's `EventFileWriter` (torch's writer is one).
const PER_WRITE_WRITER: &str = "tensorboard.summary.writer.event_file_writer";

/// How much later than the second its file name gives a writer's process may seem to have
/// started: the name's second is cut down, and the boot time a start is counted from is a
/// whole second that moves when the clock is set.
const START_SLACK_S: f64 = 5.0;

/// Whether an event file directly in `dir` is named by a writer process still alive here.
pub fn alive(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let host = tally_tfevents::default_hostname();
    entries.flatten().any(|e| {
        let name = e.file_name();
        let Some((secs, pid)) = parse_name(&name.to_string_lossy(), &host) else {
            return false;
        };
        e.metadata()
            .is_ok_and(|m| m.is_file() && process_wrote(pid, secs, &m))
            && writes_per_write(&e.path())
    })
}

/// `(secs, pid)` of `events.out.tfevents.<secs>.<host>.<pid>.<n><suffix>` when its host is
/// `host`; `None` for any other name (tensorboardX's `<secs>.<host><suffix>` carries no pid).
fn parse_name(name: &str, host: &str) -> Option<(u64, u32)> {
    let rest = name.strip_prefix("events.out.tfevents.")?;
    let (secs, rest) = rest.split_once('.')?;
    let (pid, n) = rest
        .strip_prefix(host)?
        .strip_prefix('.')?
        .split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(secs) || !digits(pid) || !n.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some((secs.parse().ok()?, pid.parse().ok()?))
}

/// Whether the first event of the file at `path` names a writer that opens the file for each
/// write (a writer that keeps it open is seen by its descriptor instead, and is not taken for
/// a live one once it closed the file, whatever its process does next).
fn writes_per_write(path: &Path) -> bool {
    #[derive(Clone, PartialEq, prost::Message)]
    struct First {
        #[prost(message, optional, tag = "10")]
        source_metadata: Option<Source>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    struct Source {
        #[prost(string, tag = "1")]
        writer: String,
    }
    let Ok(file) = tally_tfevents::open::open_regular(path) else {
        return false;
    };
    let mut records = tally_tfevents::TfRecordReader::new(std::io::BufReader::new(file));
    let Ok(Some(record)) = records.read_record() else {
        return false;
    };
    <First as prost::Message>::decode(record.data)
        .ok()
        .and_then(|f| f.source_metadata)
        .is_some_and(|s| s.writer == PER_WRITE_WRITER)
}

/// Whether process `pid` is alive, started by second `secs` (give or take the slack) and runs
/// as the owner of the file `meta` describes.
#[cfg(target_os = "linux")]
fn process_wrote(pid: u32, secs: u64, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let proc_dir = format!("/proc/{pid}");
    let Ok(owner) = std::fs::metadata(&proc_dir) else {
        return false;
    };
    let Ok(stat) = std::fs::read_to_string(format!("{proc_dir}/stat")) else {
        return false;
    };
    let Some((state, start_ticks)) = parse_stat(&stat) else {
        return false;
    };
    let Some(boot) = boot_time() else {
        return false;
    };
    let started = boot as f64 + start_ticks as f64 / rustix::param::clock_ticks_per_second() as f64;
    // A zombie (`Z`) or dead (`X`) process writes nothing more.
    !matches!(state, 'Z' | 'X')
        && owner.uid() == meta.uid()
        && started <= secs as f64 + START_SLACK_S
}

#[cfg(not(target_os = "linux"))]
fn process_wrote(_: u32, _: u64, _: &std::fs::Metadata) -> bool {
    false
}

/// The state (field 3) and start time in clock ticks since boot (field 22) of a
/// `/proc/PID/stat`; the command name (field 2) may hold spaces and parentheses, so the fields
/// after it are counted from its last `)`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_stat(stat: &str) -> Option<(char, u64)> {
    let rest: Vec<&str> = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    Some((rest.first()?.chars().next()?, rest.get(19)?.parse().ok()?))
}

/// The machine's boot time, in seconds since the epoch (`btime` of `/proc/stat`).
#[cfg(target_os = "linux")]
fn boot_time() -> Option<u64> {
    std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_gives_its_second_and_pid_on_this_host_only() {
        let name = "events.out.tfevents.1733375227.gpu-7.lab.example.4242.0";
        assert_eq!(
            parse_name(name, "gpu-7.lab.example"),
            Some((1733375227, 4242))
        );
        assert_eq!(
            parse_name(&format!("{name}.v2"), "gpu-7.lab.example"),
            Some((1733375227, 4242))
        );
        assert_eq!(parse_name(name, "gpu-7"), None, "another host");
        assert_eq!(parse_name(name, "gpu-8.lab.example"), None);
        // tensorboardX's name carries no pid.
        assert_eq!(
            parse_name("events.out.tfevents.1733375227.gpu-7", "gpu-7"),
            None
        );
        assert_eq!(
            parse_name("events.out.tfevents.1733375227.gpu-7.+42.0", "gpu-7"),
            None
        );
        assert_eq!(
            parse_name("events.out.tfevents.x.gpu-7.42.0", "gpu-7"),
            None
        );
    }

    #[test]
    fn a_stat_line_gives_state_and_start_past_a_command_with_parentheses() {
        let stat =
            "4242 (python (x) 1) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 1";
        assert_eq!(parse_stat(stat), Some(('S', 987654)));
        assert_eq!(parse_stat("4242 (python) Z 1"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_wrote_a_file_named_after_it_started_and_not_one_named_before() {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let meta = tmp.as_file().metadata().unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(process_wrote(std::process::id(), now, &meta));
        // Named a minute before the machine booted, so before this process started: another
        // process's file, its pid used again.
        let boot = boot_time().unwrap();
        assert!(!process_wrote(
            std::process::id(),
            boot.saturating_sub(60),
            &meta
        ));
    }
}
