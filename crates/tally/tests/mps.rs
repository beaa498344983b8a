//! The CUDA MPS probe (docs/contract/panel.md "System column"): its inputs (the pipe
//! directory, `PATH`) point at a temp dir holding a real FIFO and a stand-in control binary.

#![cfg(unix)]

use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use tally::host::{detect_mps, mps_requested, MpsEnv, MPS_CONTROL_BINARY};
use tally::MpsState;

fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo {}", p.display());
}

/// A stand-in `nvidia-cuda-mps-control` in `dir` that records its arguments, its pipe
/// directory and its stdin, then exits with `code`.
fn control_binary(dir: &Path, code: i32) -> PathBuf {
    let bin = dir.join(MPS_CONTROL_BINARY);
    let log = dir.join("asked");
    std::fs::write(
        &bin,
        format!(
            "#!/bin/sh\necho \"args:$*\" > '{log}'\necho \"dir:$CUDA_MPS_PIPE_DIRECTORY\" >> '{log}'\ncat >> '{log}'\nexit {code}\n",
            log = log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

struct Host {
    _tmp: tempfile::TempDir,
    pipes: PathBuf,
    bin_dir: PathBuf,
}

impl Host {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let pipes = tmp.path().join("nvidia-mps");
        let bin_dir = tmp.path().join("bin");
        std::fs::create_dir_all(&pipes).unwrap();
        std::fs::create_dir_all(&bin_dir).unwrap();
        Host {
            _tmp: tmp,
            pipes,
            bin_dir,
        }
    }

    fn env(&self) -> MpsEnv {
        MpsEnv {
            pipe_directory: Some(self.pipes.clone()),
            path: Some(self.bin_dir.clone().into_os_string()),
        }
    }

    fn asked(&self) -> String {
        std::fs::read_to_string(self.bin_dir.join("asked")).unwrap_or_default()
    }
}

#[test]
fn without_a_control_pipe_mps_is_off() {
    let h = Host::new();
    let d = detect_mps(&h.env(), true);
    assert_eq!(d.state, MpsState::Off);
    assert!(
        d.evidence
            .contains(&h.pipes.join("control").display().to_string()),
        "{}",
        d.evidence
    );
}

#[test]
fn a_regular_file_is_not_a_control_pipe() {
    let h = Host::new();
    std::fs::write(h.pipes.join("control"), "").unwrap();
    assert_eq!(detect_mps(&h.env(), false).state, MpsState::Off);
}

#[test]
fn a_control_pipe_is_ambient_unless_the_run_asked_for_mps() {
    let h = Host::new();
    mkfifo(&h.pipes.join("control"));
    // No control binary installed: the pipe is the evidence.
    let d = detect_mps(&h.env(), false);
    assert_eq!(d.state, MpsState::Ambient, "{}", d.evidence);
    assert_eq!(detect_mps(&h.env(), true).state, MpsState::On);
}

#[test]
fn the_daemon_is_asked_for_its_server_list_and_nothing_else() {
    let h = Host::new();
    mkfifo(&h.pipes.join("control"));
    control_binary(&h.bin_dir, 0);
    let d = detect_mps(&h.env(), true);
    assert_eq!(d.state, MpsState::On, "{}", d.evidence);
    let asked = h.asked();
    let lines: Vec<&str> = asked.lines().collect();
    assert_eq!(
        lines,
        [
            "args:",
            &format!("dir:{}", h.pipes.display()),
            "get_server_list"
        ],
        "no -d (start) and no quit (stop): only a query"
    );
}

#[test]
fn a_daemon_that_does_not_answer_means_off() {
    let h = Host::new();
    mkfifo(&h.pipes.join("control"));
    control_binary(&h.bin_dir, 1);
    let d = detect_mps(&h.env(), true);
    assert_eq!(d.state, MpsState::Off);
    assert!(d.evidence.contains("does not answer"), "{}", d.evidence);
}

#[test]
fn the_request_is_the_run_configs_training_cuda_process_sharing() {
    assert!(mps_requested(
        &json!({"training": {"cuda_process_sharing": "mps"}})
    ));
    assert!(!mps_requested(
        &json!({"training": {"cuda_process_sharing": null}})
    ));
    assert!(!mps_requested(&json!({})));
}
