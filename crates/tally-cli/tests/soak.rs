//! End-to-end tests of `tally soak` on real processes: a demo run that passes, commands that
//! stall, never start, leave a child behind, fail, or are cancelled; every artifact is checked
//! by `tally validate` (docs/contract/manifest-and-soak.md "The soak monitor").

// The shared pty driver (it allows its own unused parts).
#[path = "support/pty.rs"]
mod pty;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const TALLY: &str = env!("CARGO_BIN_EXE_tally");

/// Short intervals so each soak takes about a second or two.
const FAST: [&str; 4] = [
    "--sample-interval-seconds",
    "0.2",
    "--post-shutdown-grace-seconds",
    "1",
];

fn soak(options: &[&str], command: &[&str]) -> Output {
    soak_in(Path::new(env!("CARGO_MANIFEST_DIR")), options, command)
}

fn soak_in(cwd: &Path, options: &[&str], command: &[&str]) -> Output {
    soak_with(cwd, None, options, command)
}

/// `tally soak` from `cwd`, with `path` in front of PATH when given.
fn soak_with(cwd: &Path, path: Option<&Path>, options: &[&str], command: &[&str]) -> Output {
    let mut cmd = Command::new(TALLY);
    if let Some(dir) = path {
        let old = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![dir.to_path_buf()];
        dirs.extend(std::env::split_paths(&old));
        cmd.env("PATH", std::env::join_paths(dirs).unwrap());
    }
    cmd.current_dir(cwd)
        .arg("soak")
        .args(FAST)
        .args(options)
        .arg("--")
        .args(command)
        .output()
        .unwrap()
}

fn artifact(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `tally validate` on the artifact: whether it passed, and its output line.
fn validate(path: &Path) -> (bool, String) {
    let o = Command::new(TALLY)
        .arg("validate")
        .arg(path)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// A failed soak: exit 1, the stderr line naming reason and artifact, an artifact that
/// validates as a failed one with `classification`.
fn assert_failed(o: &Output, artifact_path: &Path, classification: &str) -> Value {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    let err = stderr(o);
    let a = artifact(artifact_path);
    assert_eq!(a["status"], "failed", "{a:#}");
    assert_eq!(a["failure_classification"], classification, "{a:#}");
    let reason = a["failure_reason"].as_str().unwrap();
    let line = format!(
        "soak failed: {reason}; soak artifact: {}",
        artifact_path.display()
    );
    assert!(err.contains(&line), "{err}");
    let (ok, out) = validate(artifact_path);
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("status failed, classification {classification}")),
        "{out}"
    );
    a
}

/// Every pid the samples saw whose command line is `command`.
fn pids_running(a: &Value, command: &str) -> Vec<u64> {
    let mut pids: Vec<u64> = a["samples"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["process"].as_array().unwrap().iter())
        .filter(|p| p["command"] == command)
        .map(|p| p["pid"].as_u64().unwrap())
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// Whether `pid` is gone (or a zombie waiting for init), waiting up to 10 s for init to reap.
fn gone(pid: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        let dead = match stat {
            Err(_) => true,
            Ok(s) => s
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        };
        if dead || Instant::now() > deadline {
            return dead;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn a_demo_run_passes_and_its_artifact_validates() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let log_dir = format!("training.log_dir={}", s(&run));
    let o = soak(
        &[],
        &[
            TALLY,
            "demo",
            "--iterations",
            "30",
            "--num-envs",
            "64",
            "--panel",
            "off",
            &log_dir,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The progress dir came from training.log_dir=, the artifact defaults into it.
    let path = run.join("soak_artifact.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("}\n") && text.starts_with("{\n  \"schema_version\": \"0.3.0\""));
    let a = artifact(&path);
    assert_eq!(a["status"], "passed", "{a:#}");
    assert_eq!(a["failure_classification"], Value::Null);
    assert_eq!(a["returncode"], 0);
    assert_eq!(a["shutdown"]["classification"], "normal_completion");
    assert_eq!(a["run_summary"]["status"], "completed");
    assert_eq!(a["resource_summary"]["replay_ingress_slot_rows"], 64);
    let demo_seen = a["samples"].as_array().unwrap().iter().any(|s| {
        s["process"].as_array().unwrap().iter().any(|p| {
            p["command"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{TALLY} demo"))
        })
    });
    assert!(demo_seen, "{a:#}");
    assert!(
        a["resource_summary"]["max_process_rss_kib"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert_eq!(a["monitor"]["sample_interval_s"], 0.2);
    assert_eq!(
        a["monitor"]["sample_count"].as_u64(),
        Some(a["samples"].as_array().unwrap().len() as u64)
    );
    // The demo's plain lines went to the console log, not to soak's stdout.
    let console = std::fs::read_to_string(run.join("soak-console.log")).unwrap();
    assert!(console.contains("Run completed"), "{console}");
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("soak passed | classification none"),
        "{}",
        stderr(&o)
    );
    let (ok, out) = validate(&path);
    assert!(
        ok && out.contains("OK (soak artifact 0.3.0, status passed"),
        "{out}"
    );
    // Run from inside this repository: its HEAD is the source commit.
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let head = String::from_utf8(head.stdout).unwrap();
    assert_eq!(a["context"]["source"]["commit"], head.trim());
    assert_eq!(a["context"]["software"]["tally"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn a_completed_run_shorter_than_the_minimum_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let log_dir = format!("training.log_dir={}", s(&run));
    let o = soak(
        &["--min-duration-seconds", "3600"],
        &[
            TALLY,
            "demo",
            "--iterations",
            "5",
            "--panel",
            "off",
            &log_dir,
        ],
    );
    let a = assert_failed(&o, &run.join("soak_artifact.json"), "unknown_failure");
    let reason = a["failure_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("ran ") && reason.ends_with("shorter than --min-duration-seconds 3600"),
        "{reason}"
    );
    assert_eq!(a["run_summary"]["status"], "completed");
}

#[test]
fn a_command_that_stops_making_progress_is_a_stale_tick() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    let script = format!("echo x > {}/f; exec sleep 30", s(&dir));
    let out_path = tmp.path().join("soak.json");
    let start = Instant::now();
    let o = soak(
        &[
            "--progress-dir",
            &s(&dir),
            "--output",
            &s(&out_path),
            "--stale-progress-seconds",
            "1",
        ],
        &["sh", "-c", &script],
    );
    // Ended by the monitor, not by the command's 30 s.
    assert!(start.elapsed() < Duration::from_secs(20));
    let a = assert_failed(&o, &out_path, "timeout/stale_tick");
    assert_eq!(a["returncode"], Value::Null);
    // Not a terminal: a plain status line for the 1st, 13th, 25th, ... sample.
    let taken = a["monitor"]["sample_count"].as_u64().unwrap() as usize;
    assert_eq!(
        status_lines(&stderr(&o)),
        taken.div_ceil(12),
        "{}",
        stderr(&o)
    );
    assert!(a["failure_reason"]
        .as_str()
        .unwrap()
        .contains("unchanged for"));
    assert_eq!(a["resource_summary"]["max_progress_bytes"], 2);
    let sleepers = pids_running(&a, "sleep 30");
    assert!(!sleepers.is_empty(), "{a:#}");
    assert!(sleepers.iter().all(|p| gone(*p)));
}

#[test]
fn a_demo_that_stops_making_progress_is_a_stale_tick() {
    // Both threads slowed 1000×: after its start the demo writes nothing for minutes, and is
    // still inside a slowed phase when the grace period ends, so its summary stays `running`
    // without a manifest: unfinished, not a schema violation (docs/contract/
    // manifest-and-soak.md "A failed soak: classification").
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let log_dir = format!("training.log_dir={}", s(&run));
    let o = soak(
        &["--stale-progress-seconds", "2"],
        &[
            TALLY,
            "demo",
            "--panel",
            "off",
            "--slow",
            "learning=1000",
            "--slow",
            "env_step=1000",
            &log_dir,
        ],
    );
    let a = assert_failed(&o, &run.join("soak_artifact.json"), "timeout/stale_tick");
    let reason = a["failure_reason"].as_str().unwrap();
    assert!(reason.starts_with("progress under"), "{reason}");
    assert!(reason.contains("unchanged for"), "{reason}");
}

#[test]
fn a_stalled_run_whose_worker_ignores_sigterm_keeps_its_classification_and_lists_the_worker() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    let out_path = dir.join("soak_artifact.json");
    let script = format!(
        "echo x > {}/f; (trap '' TERM; exec sleep 30) & exec sleep 31",
        s(&dir)
    );
    let o = soak(
        &["--progress-dir", &s(&dir), "--stale-progress-seconds", "1"],
        &["sh", "-c", &script],
    );
    let a = assert_failed(&o, &out_path, "timeout/stale_tick");
    let residual = a["post_shutdown"]["residual_processes"].as_array().unwrap();
    assert_eq!(residual.len(), 1, "{a:#}");
    assert_eq!(residual[0]["command"], "sleep 30");
    assert!(a["failure_reason"]
        .as_str()
        .unwrap()
        .contains("1 process(es) of the command's group still alive 1s after it ended"));
    assert!(gone(residual[0]["pid"].as_u64().unwrap()));
}

#[test]
fn a_child_left_behind_is_a_resource_leak_and_is_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    let out_path = dir.join("soak_artifact.json");
    let o = soak(
        &["--progress-dir", &s(&dir)],
        &["sh", "-c", "sleep 30 & exit 0"],
    );
    let a = assert_failed(&o, &out_path, "resource_leak");
    assert_eq!(a["returncode"], 0);
    let residual = a["post_shutdown"]["residual_processes"].as_array().unwrap();
    assert_eq!(residual.len(), 1, "{a:#}");
    assert_eq!(residual[0]["command"], "sleep 30");
    assert_eq!(a["resource_summary"]["residual_process_count"], 1);
    assert!(gone(residual[0]["pid"].as_u64().unwrap()));
}

#[test]
fn a_child_that_left_the_group_is_still_found_and_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    let out_path = dir.join("soak_artifact.json");
    // The child moves to its own session; the command lives on long enough to be sampled with it.
    let o = soak(
        &["--progress-dir", &s(&dir)],
        &["sh", "-c", "setsid sleep 30 & sleep 1; exit 0"],
    );
    let a = assert_failed(&o, &out_path, "resource_leak");
    let residual = a["post_shutdown"]["residual_processes"].as_array().unwrap();
    assert_eq!(residual.len(), 1, "{a:#}");
    assert_eq!(residual[0]["command"], "sleep 30");
    assert!(gone(residual[0]["pid"].as_u64().unwrap()));
}

#[test]
fn no_progress_before_the_startup_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    let out_path = dir.join("soak_artifact.json");
    let o = soak(
        &["--progress-dir", &s(&dir), "--startup-timeout-seconds", "1"],
        &["sleep", "30"],
    );
    let a = assert_failed(&o, &out_path, "timeout/startup");
    // The console log is no progress.
    assert!(dir.join("soak-console.log").exists());
    assert_eq!(a["resource_summary"]["max_progress_bytes"], 0);
    assert!(pids_running(&a, "sleep 30").iter().all(|p| gone(*p)));
}

#[test]
fn files_already_in_a_resumed_run_directory_are_no_progress() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("events.out.tfevents.1"),
        b"from the earlier segment",
    )
    .unwrap();
    let out_path = dir.join("soak_artifact.json");
    // Stale sooner than startup: the old file must not count as this run's first progress.
    let o = soak(
        &[
            "--progress-dir",
            &s(&dir),
            "--startup-timeout-seconds",
            "1.5",
            "--stale-progress-seconds",
            "0.5",
        ],
        &["sleep", "30"],
    );
    let a = assert_failed(&o, &out_path, "timeout/startup");
    assert_eq!(a["resource_summary"]["max_progress_bytes"], 24);
}

#[test]
fn a_failing_exit_code_sets_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    let out_path = dir.join("soak_artifact.json");
    // From outside any repository (a relative progress dir is the working directory's).
    let o = soak_in(
        tmp.path(),
        &["--progress-dir", "p"],
        &["sh", "-c", "echo oops >&2; exit 3"],
    );
    let a = assert_failed(&o, &out_path, "missing_run_summary");
    assert_eq!(a["context"]["source"]["commit"], Value::Null);
    assert_eq!(a["context"]["source"]["path"], s(tmp.path()));
    assert_eq!(a["console_log"], s(&dir.join("soak-console.log")));
    assert_eq!(a["returncode"], 3);
    assert!(a["failure_reason"]
        .as_str()
        .unwrap()
        .starts_with("command exited with code 3"));
    let console = std::fs::read_to_string(dir.join("soak-console.log")).unwrap();
    assert_eq!(console, "oops\n");
}

#[test]
fn the_producer_classification_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    let src = tmp.path().join("summary.json");
    let summary = serde_json::json!({
        "metric_schema_version": 1,
        "status": "failed",
        "runtime_manifest": {"schema_version": 1, "shutdown": {
            "classification": "collector_failure", "owner": "collector", "phase": "env_step",
            "exception": {"type": "RuntimeError", "message": "env crashed"},
            "cleanup": {"errors": []}}}
    });
    std::fs::write(&src, summary.to_string()).unwrap();
    let script = format!("cp {} {}/run_summary.json; exit 1", s(&src), s(&dir));
    let out_path = dir.join("soak_artifact.json");
    let o = soak(&["--progress-dir", &s(&dir)], &["sh", "-c", &script]);
    let a = assert_failed(&o, &out_path, "collector_failure");
    assert_eq!(
        a["failure_reason"],
        "command exited with code 1; the run's status is failed; producer shutdown: \
         collector_failure (owner collector, phase env_step): RuntimeError: env crashed"
    );
    assert_eq!(a["shutdown"], summary["runtime_manifest"]["shutdown"]);
}

#[test]
fn a_summary_that_is_not_json_is_embedded_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    let script = format!("printf '{{\"status\": ' > {}/run_summary.json", s(&dir));
    let o = soak(&["--progress-dir", &s(&dir)], &["sh", "-c", &script]);
    let a = assert_failed(&o, &dir.join("soak_artifact.json"), "invalid_run_summary");
    assert_eq!(a["run_summary"], "{\"status\": ");
    assert!(a["failure_reason"]
        .as_str()
        .unwrap()
        .contains("run_summary.json: not JSON"));
}

#[test]
fn a_summary_that_is_not_a_file_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    // A FIFO would block a reader forever.
    let script = format!("mkfifo {}/run_summary.json", s(&dir));
    let o = soak(&["--progress-dir", &s(&dir)], &["sh", "-c", &script]);
    let a = assert_failed(&o, &dir.join("soak_artifact.json"), "invalid_run_summary");
    assert_eq!(a["run_summary"], Value::Null);
    assert!(a["failure_reason"]
        .as_str()
        .unwrap()
        .contains("run_summary.json: not a regular file"));
}

#[test]
fn sigint_ends_the_whole_group_as_an_external_cancellation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    let out_path = dir.join("soak_artifact.json");
    let script = format!("echo x > {}/f; sleep 30 & sleep 30", s(&dir));
    let child = Command::new(TALLY)
        .arg("soak")
        .args(FAST)
        .args(["--progress-dir", &s(&dir), "--", "sh", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the command wrote its progress file, then interrupt tally.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !dir.join("f").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    let a = assert_failed(&o, &out_path, "external_cancellation");
    let sleepers = pids_running(&a, "sleep 30");
    assert_eq!(sleepers.len(), 2, "{a:#}");
    assert!(sleepers.iter().all(|p| gone(*p)));
    assert!(a["post_shutdown"]["residual_processes"]
        .as_array()
        .unwrap()
        .is_empty());
}

#[test]
fn a_cancelled_demo_says_so_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let log_dir = format!("training.log_dir={}", s(&run));
    let child = Command::new(TALLY)
        .args(["soak"])
        // The grace bounds how long the demo may take to close its run (it is done in
        // milliseconds; a loaded machine must not turn that into a SIGKILL).
        .args([
            "--sample-interval-seconds",
            "0.2",
            "--post-shutdown-grace-seconds",
            "20",
        ])
        .args([
            "--",
            TALLY,
            "demo",
            "--iterations",
            "1000000",
            "--num-envs",
            "64",
        ])
        .args(["--panel", "off", &log_dir])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the demo has persisted steps.
    let console = run.join("soak-console.log");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&console).is_ok_and(|c| c.contains("iter ")) {
        assert!(
            Instant::now() < deadline,
            "the demo never reported an iteration"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    // The demo closed its run as interrupted and said why in its shutdown snapshot, which
    // wins over the monitor's own cancellation.
    let a = assert_failed(&o, &run.join("soak_artifact.json"), "external_cancellation");
    assert_eq!(a["run_summary"]["status"], "interrupted");
    assert_eq!(a["shutdown"]["classification"], "external_cancellation");
    assert_eq!(a["returncode"], Value::Null);
    let reason = a["failure_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("cancelled (SIGINT/SIGTERM to tally)")
            && reason.contains("producer shutdown: external_cancellation"),
        "{reason}"
    );
}

#[test]
fn gpu_memory_and_devices_come_from_nvidia_smi_when_it_exists() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // nvidia-smi's CSV answers to the two queries the monitor makes (`[N/A]` is what it prints
    // for a process whose memory it cannot read).
    let fake = bin.join("nvidia-smi");
    std::fs::write(
        &fake,
        "#!/bin/sh\ncase \"$1\" in\n\
         --query-compute-apps=pid,used_memory) printf '4242, 1536\\n4343, [N/A]\\n' ;;\n\
         --query-gpu=index,uuid,name,driver_version) echo '0, GPU-5d1c, NVIDIA A100-SXM4-80GB, 550.54.15' ;;\n\
         *) exit 2 ;;\nesac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tmp.path().join("p");
    let script = format!("echo x > {}/f; sleep 0.5", s(&dir));
    let o = soak_with(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        Some(&bin),
        &["--progress-dir", &s(&dir)],
        &["sh", "-c", &script],
    );
    let a = assert_failed(&o, &dir.join("soak_artifact.json"), "missing_run_summary");
    assert_eq!(
        a["samples"][0]["gpu"],
        serde_json::json!([{"pid": 4242, "used_memory_mib": 1536}])
    );
    assert_eq!(a["resource_summary"]["max_gpu_used_memory_mib"], 1536);
    assert_eq!(
        a["context"]["gpu_devices"],
        serde_json::json!([{"index": 0, "uuid": "GPU-5d1c",
                            "name": "NVIDIA A100-SXM4-80GB", "driver_version": "550.54.15"}])
    );
}

#[test]
fn without_a_progress_dir_the_flag_is_named() {
    let o = soak(&[], &["sleep", "1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("--progress-dir is required") && err.contains("training.log_dir="),
        "{err}"
    );
}

#[test]
fn a_command_that_cannot_start_is_a_monitor_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().join("p");
    let out_path = dir.join("soak_artifact.json");
    let o = soak(
        &["--progress-dir", &s(&dir)],
        &["/nonexistent/train", "training.x=1"],
    );
    let a = assert_failed(&o, &out_path, "monitor_failure");
    assert!(a["failure_reason"]
        .as_str()
        .unwrap()
        .starts_with("cannot start /nonexistent/train:"));
}

#[test]
fn only_shell_runs_through_a_shell() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    let out_path = dir.join("soak_artifact.json");
    // Without --shell the words reach echo as they are.
    let o = soak(
        &["--progress-dir", &s(&dir)],
        &["echo", "$((1+2))", ";", "exit", "4"],
    );
    let a = assert_failed(&o, &out_path, "missing_run_summary");
    assert_eq!(a["returncode"], 0);
    let console = dir.join("soak-console.log");
    assert_eq!(
        std::fs::read_to_string(&console).unwrap(),
        "$((1+2)) ; exit 4\n"
    );
    std::fs::remove_file(&console).unwrap();
    let o = soak(
        &["--progress-dir", &s(&dir), "--shell"],
        &["echo", "$((1+2))", ";", "exit", "4"],
    );
    let a = assert_failed(&o, &out_path, "missing_run_summary");
    assert_eq!(a["returncode"], 4);
    assert_eq!(std::fs::read_to_string(&console).unwrap(), "3\n");
}

/// The lines of a screen that are a live status line (`soak <elapsed> | ...`).
fn status_lines(screen: &str) -> usize {
    screen
        .lines()
        .filter(|l| {
            l.strip_prefix("soak ")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count()
}

#[test]
fn on_a_terminal_the_status_is_one_line_rewritten_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    let script = format!("echo x > {}/f; sleep 3", s(&dir));
    let mut args = vec!["soak"];
    args.extend(FAST);
    let dir_s = s(&dir);
    args.extend(["--progress-dir", &dir_s, "--", "sh", "-c", &script]);
    // Narrower than the line: it is cut, not wrapped (a wrapped line cannot be rewritten).
    let mut pty = pty::Pty::spawn(&args, 40, 30, tmp.path());
    pty.wait_for(&["last progress"]);
    // A few more samples: still one line.
    std::thread::sleep(Duration::from_millis(600));
    let screen = pty.screen();
    assert_eq!(status_lines(&screen), 1, "{screen}");
    assert_eq!(pty.wait_exit(), 1);
    let screen = pty.wait_for(&["soak artifact:", "tally: soak failed:"]);
    // The live line is cleared; the summary stays.
    assert_eq!(status_lines(&screen), 0, "{screen}");
    assert!(
        screen.contains("soak failed | classification missing_run_s"),
        "{screen}"
    );
}
