//! Facts about the host and the source tree a run starts from, for `run_config.json`.

use std::path::Path;
use std::process::Command;
use tally_schema::artifacts::{GitInfo, Hardware};

/// The host name: `/proc/sys/kernel/hostname`, else `$HOSTNAME`, else `localhost`.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "localhost".to_owned())
}

/// The OS user: `$USER`, else `$LOGNAME`, else `unknown`.
pub fn user() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "unknown".to_owned())
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Commit, branch and dirtiness of the git work tree containing `dir`, or None outside one.
pub fn git_info(dir: &Path) -> Option<GitInfo> {
    let commit = git(dir, &["rev-parse", "HEAD"])?;
    let branch = git(dir, &["rev-parse", "--abbrev-ref", "HEAD"]).filter(|b| b != "HEAD");
    let dirty = git(dir, &["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
    Some(GitInfo {
        commit: Some(commit),
        branch,
        dirty,
    })
}

/// Platform, CPU model, core count, GPU and memory, as strings.
pub fn hardware() -> Hardware {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let chip = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let kib: f64 = m
                .lines()
                .find(|l| l.starts_with("MemTotal:"))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some(format!("{:.1} GiB", kib / (1024.0 * 1024.0)))
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let gpu_name = Command::new("nvidia-smi")
        .args(["--query-gpu=name", "--format=csv,noheader"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|s| s.trim().to_owned())
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "none".to_owned());
    Hardware {
        platform: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        chip,
        cpu_total_cores: cores.to_string(),
        gpu_name,
        memory,
    }
}
