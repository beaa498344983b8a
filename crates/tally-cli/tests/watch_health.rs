//! Health findings in `tally watch` (docs/contract/health.md "In tally watch"): another tool's
//! run is checked by the default rules as it is read, a logger's run shows the findings its
//! summary holds; each new finding is one line (`health: RULE on TAG: MESSAGE`) and the newest
//! is the panel's Health line; a clean run shows none.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tally::health::RuleKind;
use tally::terminal::{RunFacts, TerminalState};
use tally::{Logger, LoggerConfig, ManualClock, Profile, RunStatus, StepInput};
use tally_cli::cmd::watch::Tailer;
use tally_tfevents::{EventFileWriter, WriterOptions};

/// A tensorboardX-style run: one scalar per event, steps 0, 256, ..., 8192; the value loss is
/// NaN at `nan_at` when given.
fn generic_run(dir: &Path, nan_at: Option<i64>) {
    std::fs::create_dir_all(dir).unwrap();
    let mut w = EventFileWriter::open(dir, WriterOptions::default()).unwrap();
    for step in (0..=8192i64).step_by(256) {
        let wall = 1000.0 + step as f64 / 1000.0;
        let loss = match nan_at {
            Some(s) if s == step => f64::NAN,
            _ => 1.0 / (1.0 + step as f64 / 256.0),
        };
        w.write_scalars(step, wall, &[("charts/episodic_return", step as f64)])
            .unwrap();
        w.write_scalars(step, wall, &[("losses/value_loss", loss)])
            .unwrap();
    }
    w.flush().unwrap();
}

fn state() -> Mutex<TerminalState> {
    Mutex::new(TerminalState::new(RunFacts {
        algo: "ppo".into(),
        task: "t".into(),
        sim: String::new(),
        name: None,
        num_gpus: 1,
        num_envs: None,
        max_iterations: None,
        profile: Profile::OnPolicy,
    }))
}

/// `tally watch --panel off` of a run that never ends: its lines until the third summary line.
fn plain_lines(run: &Path) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "--panel", "off", "--every", "0.2"])
        .arg(run)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    let mut summaries = 0;
    let t = Instant::now();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        summaries += usize::from(line.starts_with("step "));
        lines.push(line);
        if summaries == 3 || t.elapsed() > Duration::from_secs(60) {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(summaries, 3, "{lines:?}");
    lines
}

#[test]
fn another_tools_nan_is_one_line_and_the_health_line() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("PPO_1");
    generic_run(&run, Some(4096));
    let lines = plain_lines(&run);
    let health: Vec<&String> = lines.iter().filter(|l| l.contains("health:")).collect();
    assert_eq!(health.len(), 1, "{lines:?}");
    assert!(
        health[0].contains("health: nonfinite on losses/value_loss: NaN at step 4096"),
        "{}",
        health[0]
    );
    // The Health line's finding, as the panel draws it.
    let s = state();
    let mut t = Tailer::generic(&run, Arc::new(ManualClock::at(0.0)));
    t.poll(&s).unwrap();
    let f = s.lock().unwrap().snapshot().health.expect("a Health line");
    assert_eq!((f.tag.as_str(), f.first_step), ("losses/value_loss", 4096));
}

#[test]
fn another_tools_run_still_being_written_and_quiet_too_long_is_a_stall() {
    // As `tally health` judges a live run's end (docs/contract/health.md "In tally watch").
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("PPO_1");
    std::fs::create_dir_all(&run).unwrap();
    let mut w = EventFileWriter::open(&run, WriterOptions::default()).unwrap();
    for step in 0..=32i64 {
        w.write_scalars(step, 1000.0 + step as f64, &[("losses/value_loss", 1.0)])
            .unwrap();
    }
    w.flush().unwrap();
    // The listing of open files is kept for 2 s: one made before this file was open is stale.
    std::thread::sleep(Duration::from_millis(2100));
    let health_after = |quiet: f64| {
        let s = state();
        let clock = Arc::new(ManualClock::with_wall(0.0, 1032.0 + quiet));
        Tailer::generic(&run, clock).poll(&s).unwrap();
        let f = s.lock().unwrap().snapshot().health;
        f.map(|f| (f.rule, f.first_step))
    };
    // The stall rule's default: 60 s at least (its median gap here is 1 s).
    assert_eq!(health_after(30.0), None);
    assert_eq!(health_after(600.0), Some((RuleKind::Stall, 32)));
    // Its writer closed the file: ended, not hung.
    w.close().unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(health_after(600.0), None);
}

#[test]
fn a_clean_run_shows_no_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("PPO_1");
    generic_run(&run, None);
    let lines = plain_lines(&run);
    assert!(!lines.iter().any(|l| l.contains("health")), "{lines:?}");
    let s = state();
    let mut t = Tailer::generic(&run, Arc::new(ManualClock::at(0.0)));
    t.poll(&s).unwrap();
    assert!(s.lock().unwrap().snapshot().health.is_none());
}

#[test]
fn a_loggers_run_shows_the_findings_of_its_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("sac", "watch", "mujoco");
    c.log_dir = Some(tmp.path().join("run"));
    c.max_iterations = Some(10);
    let mut log = Logger::new(c).unwrap();
    for it in 1..=10 {
        let critic = if it == 5 { f64::NAN } else { 1.0 };
        log.step(&StepInput::new(it).metric("Loss/critic", critic))
            .unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    let run = log.run_dir().to_owned();
    // A finished run: watch prints its final state and ends.
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "--panel", "off"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let health: Vec<&str> = stdout.lines().filter(|l| l.contains("health:")).collect();
    assert_eq!(health.len(), 1, "{stdout}");
    assert!(
        health[0].contains("health: nonfinite on Loss/critic: NaN at step 5"),
        "{stdout}"
    );
    let s = state();
    let mut t = Tailer::new(&run, Arc::new(ManualClock::at(0.0)));
    t.poll(&s).unwrap();
    let f = s.lock().unwrap().snapshot().health.expect("a Health line");
    assert_eq!((f.tag.as_str(), f.first_step), ("Loss/critic", 5));
}

#[test]
fn the_curves_show_each_runs_newest_finding() {
    // A folder of runs: another tool's with a NaN, a logger's with a NaN, a clean one.
    let tmp = tempfile::tempdir().unwrap();
    let logs = tmp.path().join("logs");
    generic_run(&logs.join("sick"), Some(4096));
    generic_run(&logs.join("well"), None);
    let mut c = LoggerConfig::new("sac", "watch", "mujoco");
    c.log_dir = Some(logs.join("logged"));
    c.max_iterations = Some(10);
    let mut log = Logger::new(c).unwrap();
    for it in 1..=10 {
        let critic = if it == 5 { f64::NAN } else { 1.0 };
        log.step(&StepInput::new(it).metric("Loss/critic", critic))
            .unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "logs", "--curves", "--panel", "off"])
        .current_dir(tmp.path())
        .env("COLUMNS", "160")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let health: Vec<&str> = text.lines().filter(|l| l.contains("Health")).collect();
    assert_eq!(health.len(), 2, "{text}");
    assert!(
        health
            .iter()
            .any(|l| l.contains("sick: Health nonfinite losses/value_loss at step 4096")),
        "{text}"
    );
    assert!(
        health
            .iter()
            .any(|l| l.contains("logged: Health nonfinite Loss/critic at step 5")),
        "{text}"
    );
}
