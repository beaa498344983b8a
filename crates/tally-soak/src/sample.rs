//! One monitor sample: the process tree (`procfs.rs`), GPU compute processes when
//! `nvidia-smi` exists, and the progress files under the progress directory.

use super::{probe, procfs};
use serde_json::Map;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;
use tally_schema::artifacts::{SoakGpuSample, SoakProgressSample, SoakSample};

/// What a sample is taken of.
pub struct Sampler {
    /// `/proc` (a parameter so the parsing is the same code the tests drive).
    pub proc_root: PathBuf,
    /// The progress directory.
    pub progress_dir: PathBuf,
    /// Files under it that are not progress (the console log).
    pub excluded: Vec<PathBuf>,
    /// `nvidia-smi`, when it is on PATH.
    pub nvidia_smi: Option<PathBuf>,
}

impl Sampler {
    /// Take one sample of the command whose process group is `pgid` and first process `root`.
    pub fn sample(&self, elapsed_s: f64, pgid: u32, root: u32) -> std::io::Result<SoakSample> {
        let process = procfs::sample_tree(&self.proc_root, pgid, root).map_err(|e| {
            std::io::Error::new(e.kind(), format!("{}: {e}", self.proc_root.display()))
        })?;
        let gpu = match &self.nvidia_smi {
            Some(smi) => gpu_apps(smi),
            None => Vec::new(),
        };
        Ok(SoakSample {
            elapsed_s,
            process,
            gpu,
            progress: progress(&self.progress_dir, &self.excluded),
            extra: Map::new(),
        })
    }
}

/// `name` on PATH, if it is there.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The progress files under `dir` (recursively, symlinks not followed), `excluded` left out:
/// count, total bytes and the newest modification time. A missing directory is no progress
/// yet; a file that vanishes while it is read is skipped.
pub fn progress(dir: &Path, excluded: &[PathBuf]) -> SoakProgressSample {
    let mut out = SoakProgressSample {
        count: 0,
        bytes_total: 0,
        max_mtime: None,
        extra: Map::new(),
    };
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() && !excluded.contains(&path) {
                out.count += 1;
                out.bytes_total += meta.len();
                if let Some(t) = meta
                    .modified()
                    .ok()
                    .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
                {
                    let t = t.as_secs_f64();
                    out.max_mtime = Some(out.max_mtime.map_or(t, |m: f64| m.max(t)));
                }
            }
        }
    }
    out
}

/// Compute processes from `nvidia-smi --query-compute-apps`; none when it fails or hangs (a
/// driver hiccup must not end a soak, and the samples show the gap).
fn gpu_apps(smi: &Path) -> Vec<SoakGpuSample> {
    probe::output(
        smi,
        &[
            "--query-compute-apps=pid,used_memory",
            "--format=csv,noheader,nounits",
        ],
        Path::new("/"),
        probe::SAMPLE_PROBE,
    )
    .map(|text| parse_compute_apps(&text))
    .unwrap_or_default()
}

/// Parse `pid, used_memory` CSV lines (MiB, no units); lines that do not parse (`[N/A]`) are
/// left out.
pub fn parse_compute_apps(text: &str) -> Vec<SoakGpuSample> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(',').map(str::trim);
            let pid = f.next()?.parse().ok()?;
            let used_memory_mib = f.next()?.parse().ok()?;
            Some(SoakGpuSample {
                pid,
                used_memory_mib,
                extra: Map::new(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_apps_csv() {
        let apps = parse_compute_apps("1234, 2048\n5678, [N/A]\n\n91, 10\n");
        let got: Vec<(u64, u64)> = apps.iter().map(|a| (a.pid, a.used_memory_mib)).collect();
        assert_eq!(got, vec![(1234, 2048), (91, 10)]);
    }

    #[test]
    fn progress_counts_files_recursively_except_the_excluded() {
        let dir = tempfile::tempdir().unwrap();
        let console = dir.path().join("soak-console.log");
        std::fs::write(&console, b"lots of console output").unwrap();
        let empty = progress(dir.path(), std::slice::from_ref(&console));
        assert_eq!(
            (empty.count, empty.bytes_total, empty.max_mtime),
            (0, 0, None)
        );
        std::fs::create_dir(dir.path().join("tb")).unwrap();
        std::fs::write(dir.path().join("tb/events"), b"12345").unwrap();
        std::fs::write(dir.path().join("run_summary.json"), b"{}").unwrap();
        let p = progress(dir.path(), &[console]);
        assert_eq!((p.count, p.bytes_total), (2, 7));
        assert!(p.max_mtime.is_some());
        let missing = progress(&dir.path().join("not-yet"), &[]);
        assert_eq!(missing.count, 0);
    }
}
