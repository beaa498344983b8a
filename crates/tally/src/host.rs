//! Facts about the host and the source tree a run starts from: for `run_config.json`, and the
//! CUDA MPS state the panel shows when the runner does not pass one.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
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

/// Rank-local CUDA MPS state shown in the System column.
///
/// A validated request shows `on`, an environment-level transparent daemon `ambient`,
/// anything else `off` (docs/contract/panel.md "System column"); [`detect_mps`] tells
/// them apart when the runner passes none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MpsState {
    /// A validated MPS request.
    On,
    /// An environment-level transparent daemon.
    Ambient,
    /// No MPS.
    #[default]
    Off,
}

impl MpsState {
    /// `on`, `ambient` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            MpsState::On => "on",
            MpsState::Ambient => "ambient",
            MpsState::Off => "off",
        }
    }
}

impl std::str::FromStr for MpsState {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "on" => Ok(MpsState::On),
            "ambient" => Ok(MpsState::Ambient),
            "off" => Ok(MpsState::Off),
            _ => Err(format!(
                "unknown CUDA MPS state '{s}': expected on, ambient or off"
            )),
        }
    }
}

/// The MPS control daemon's client; asked `get_server_list`, never `-d` or `quit`.
pub const MPS_CONTROL_BINARY: &str = "nvidia-cuda-mps-control";
/// The pipe directory when `CUDA_MPS_PIPE_DIRECTORY` is unset.
pub const MPS_DEFAULT_PIPE_DIRECTORY: &str = "/tmp/nvidia-mps";
/// How long the daemon has to answer before it counts as not answering.
const MPS_ANSWER_TIMEOUT: Duration = Duration::from_secs(2);

/// What the CUDA MPS probe reads, passed in so it can be pointed anywhere (a test's temp dir).
#[derive(Debug, Clone, Default)]
pub struct MpsEnv {
    /// `$CUDA_MPS_PIPE_DIRECTORY`; unset means [`MPS_DEFAULT_PIPE_DIRECTORY`].
    pub pipe_directory: Option<PathBuf>,
    /// `$PATH`, searched for [`MPS_CONTROL_BINARY`].
    pub path: Option<OsString>,
}

impl MpsEnv {
    /// This process's environment.
    pub fn from_process() -> Self {
        MpsEnv {
            pipe_directory: std::env::var_os("CUDA_MPS_PIPE_DIRECTORY")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            path: std::env::var_os("PATH"),
        }
    }
}

/// The probe's verdict and the evidence it rests on (shown on the panel when a request fails).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpsDetection {
    /// `on`, `ambient` or `off`.
    pub state: MpsState,
    /// What was found, naming the pipe and the daemon's answer.
    pub evidence: String,
}

/// Whether a run config asks for MPS: `training.cuda_process_sharing` is `"mps"`.
pub fn mps_requested(run_config: &serde_json::Value) -> bool {
    run_config
        .pointer("/training/cuda_process_sharing")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|s| s.eq_ignore_ascii_case("mps"))
}

/// The CUDA MPS state of this host (docs/contract/panel.md "System column"): a daemon is there
/// when its control pipe (`<pipe directory>/control`) is a FIFO and, where the control binary
/// is installed, the daemon answers `get_server_list`. With a daemon, `on` when the run
/// asked for MPS, `ambient` when it did not (clients join it transparently); without one,
/// `off`. Nothing is started or stopped.
pub fn detect_mps(env: &MpsEnv, requested: bool) -> MpsDetection {
    let dir = env
        .pipe_directory
        .clone()
        .unwrap_or_else(|| PathBuf::from(MPS_DEFAULT_PIPE_DIRECTORY));
    let control = dir.join("control");
    let off = |evidence: String| MpsDetection {
        state: MpsState::Off,
        evidence,
    };
    if !is_fifo(&control) {
        return off(format!("no MPS control pipe at {}", control.display()));
    }
    let answer = match find_in_path(env.path.as_deref(), MPS_CONTROL_BINARY) {
        Some(bin) => match ask_daemon(&bin, &dir) {
            Ok(()) => format!("the daemon answered {}", bin.display()),
            Err(why) => {
                return off(format!(
                    "MPS control pipe at {}, but the daemon does not answer: {why}",
                    control.display()
                ))
            }
        },
        None => format!("{MPS_CONTROL_BINARY} not installed"),
    };
    MpsDetection {
        state: if requested {
            MpsState::On
        } else {
            MpsState::Ambient
        },
        evidence: format!("MPS control pipe at {} ({answer})", control.display()),
    }
}

/// The probed state of a run with this config (this process's environment), and the warning
/// to show when the run asked for MPS and has none.
pub fn run_mps(run_config: &serde_json::Value) -> (MpsState, Option<String>) {
    let requested = mps_requested(run_config);
    let d = detect_mps(&MpsEnv::from_process(), requested);
    let warning = (requested && d.state == MpsState::Off).then(|| {
        format!(
            "CUDA MPS asked for (training.cuda_process_sharing=mps) but not available: {}",
            d.evidence
        )
    });
    (d.state, warning)
}

#[cfg(unix)]
fn is_fifo(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p).is_ok_and(|m| m.file_type().is_fifo())
}

#[cfg(not(unix))]
fn is_fifo(_: &Path) -> bool {
    false
}

fn find_in_path(path: Option<&OsStr>, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// `echo get_server_list | nvidia-cuda-mps-control` with the probe's pipe directory, given
/// [`MPS_ANSWER_TIMEOUT`] to answer.
fn ask_daemon(bin: &Path, pipe_directory: &Path) -> Result<(), String> {
    let mut child = Command::new(bin)
        .env("CUDA_MPS_PIPE_DIRECTORY", pipe_directory)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        // A client that exits before reading is judged by its exit status below.
        let _ = stdin.write_all(b"get_server_list\n");
    }
    let deadline = Instant::now() + MPS_ANSWER_TIMEOUT;
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) if status.success() => return Ok(()),
            Some(status) => return Err(format!("get_server_list exited with {status}")),
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "no answer to get_server_list within {} s",
                    MPS_ANSWER_TIMEOUT.as_secs()
                ));
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}
