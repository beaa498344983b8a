//! A logger whose runner passes no CUDA MPS state shows the probed one (docs/contract/panel.md
//! "System column"). Alone in its binary: it sets `CUDA_MPS_PIPE_DIRECTORY` and `PATH`.

#![cfg(unix)]

use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use tally::terminal::Level;
use tally::{
    Backend, Logger, LoggerConfig, ManualClock, MpsState, RunStatus, StepInput, SystemInfo,
};

fn logger(dir: &Path, requested: bool) -> Logger {
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.backend = Backend::None;
    if requested {
        c.run_config = json!({"training": {"cuda_process_sharing": "mps"}});
    }
    Logger::with_sinks(c, vec![], Arc::new(ManualClock::at(100.0))).unwrap()
}

fn shown(log: &Logger) -> Option<MpsState> {
    log.terminal().lock().unwrap().snapshot().system.cuda_mps
}

#[test]
fn the_panel_shows_the_probed_mps_state_unless_the_runner_passes_one() {
    let tmp = tempfile::tempdir().unwrap();
    let pipes = tmp.path().join("mps");
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&pipes).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let control = bin.join(tally::host::MPS_CONTROL_BINARY);
    std::fs::write(&control, "#!/bin/sh\ncat > /dev/null\nexit 0\n").unwrap();
    std::fs::set_permissions(&control, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    std::env::set_var("PATH", path);
    std::env::set_var("CUDA_MPS_PIPE_DIRECTORY", &pipes);

    // Asked for, no daemon: off, and the panel says why.
    let mut log = logger(&tmp.path().join("a"), true);
    assert_eq!(shown(&log), Some(MpsState::Off));
    let messages = log.terminal().lock().unwrap().snapshot().messages;
    assert!(
        messages.iter().any(|m| m.level == Level::Warning
            && m.text.contains("training.cuda_process_sharing")
            && m.text
                .contains(&pipes.join("control").display().to_string())),
        "{messages:?}"
    );
    log.close(RunStatus::Interrupted).unwrap();

    let made = std::process::Command::new("mkfifo")
        .arg(pipes.join("control"))
        .status()
        .unwrap();
    assert!(made.success());
    let mut log = logger(&tmp.path().join("b"), true);
    log.step(&StepInput::new(1)).unwrap();
    assert_eq!(shown(&log), Some(MpsState::On));
    // The runner's own state wins.
    let own = SystemInfo {
        cuda_mps: Some(MpsState::Off),
        ..Default::default()
    };
    log.step(&StepInput::new(2).system(own)).unwrap();
    assert_eq!(shown(&log), Some(MpsState::Off));
    log.close(RunStatus::Interrupted).unwrap();

    let log = logger(&tmp.path().join("c"), false);
    assert_eq!(shown(&log), Some(MpsState::Ambient));
}
