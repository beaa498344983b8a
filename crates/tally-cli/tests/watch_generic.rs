//! `tally watch` on a run another tool wrote (`docs/contract/panel.md` "The generic
//! dashboard"): event files as tensorboardX writes them, one scalar per event, with no
//! run_config.json or run_summary.json; the plain line and the live panel under a pty.

#[path = "support/pty.rs"]
mod pty;

use pty::{Pty, WAIT};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use tally_tfevents::{EventFileWriter, WriterOptions};

/// Steps 0, 256, ..., `last`, 1000 steps per second of wall time from 1000 s (no step on the
/// 2 s window's edge); each step one event per tag, as tensorboardX's `add_scalar` writes
/// them. Values: the return is the step, the value loss 1 / (1 + step / 256).
fn write_steps(w: &mut EventFileWriter, from: i64, last: i64) {
    for step in (from..=last).step_by(256) {
        let wall = 1000.0 + step as f64 / 1000.0;
        let loss = 1.0 / (1.0 + step as f64 / 256.0);
        w.write_scalars(step, wall, &[("charts/episodic_return", step as f64)])
            .unwrap();
        w.write_scalars(step, wall, &[("losses/value_loss", loss)])
            .unwrap();
        w.write_scalars(step, wall, &[("time/fps", 1024.0)])
            .unwrap();
    }
    w.flush().unwrap();
}

fn writer(dir: &Path) -> EventFileWriter {
    EventFileWriter::open(dir, WriterOptions::default()).unwrap()
}

/// The first plain summary line of `tally watch TARGET` (a run without a summary never ends).
fn first_summary(target: &Path) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "--panel", "off", "--every", "0.2"])
        .arg(target)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let t = Instant::now();
    let line = loop {
        let line = lines.next().expect("watch ended early").unwrap();
        if line.starts_with("step ") {
            break line;
        }
        assert!(t.elapsed() < WAIT, "no summary line");
    };
    child.kill().unwrap();
    child.wait().unwrap();
    line
}

#[test]
fn plain_lines_show_the_step_axis_and_every_tags_window_mean() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("PPO_1");
    std::fs::create_dir(&run).unwrap();
    let mut w = writer(&run);
    write_steps(&mut w, 0, 8192);
    // A run directory, or the event file itself.
    for target in [run.clone(), w.path().to_owned()] {
        let line = first_summary(&target);
        // The window is the last 2 s of wall time (steps 6400..=8192, from 1006.4 s to
        // 1008.192 s): the return's mean is 7296, 1792 steps in 1.792 s; the loss's mean is
        // that of 1/26 .. 1/33. The time is the 8.192 s the records span.
        let loss: f64 = (25..=32).map(|k| 1.0 / (1.0 + f64::from(k))).sum::<f64>() / 8.0;
        for part in [
            "step 8,192 | time 8s | ".to_owned(),
            "Steps/s 1,000 | ".to_owned(),
            "charts/episodic_return 7296.0".to_owned(),
            format!("losses/value_loss {loss:.4}"),
            "time/fps 1024.0".to_owned(),
            "Avg 2s (n=8)".to_owned(),
        ] {
            assert!(line.contains(&part), "{part:?} not in {line:?}");
        }
        assert!(!line.contains("iter "), "{line}");
    }
}

#[test]
fn the_live_dashboard_follows_a_growing_run_and_a_hang_up_ends_watch_with_0() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("cleanrl_run");
    std::fs::create_dir(&run).unwrap();
    let mut w = writer(&run);
    write_steps(&mut w, 0, 4096);
    let mut pty = Pty::spawn(&["watch", run.to_str().unwrap()], 100, 40, tmp.path());
    let screen = pty.wait_for(&["cleanrl_run", "step 4,096", "episodic_return", "avg 2s"]);
    // Two columns from 96: the groups sit side by side.
    let heading = screen.lines().find(|l| l.contains("charts")).unwrap();
    assert!(heading.contains("losses"), "{screen}");
    assert!(screen.contains("Steps/s 1,000"), "{screen}");
    assert!(
        !screen.contains("UNKNOWN") && !screen.contains("Waiting"),
        "{screen}"
    );
    // It follows the file as it grows.
    write_steps(&mut w, 4352, 6144);
    pty.wait_for(&["step 6,144"]);
    let pid = pty.child.process_id().unwrap();
    let kill = Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    assert_eq!(pty.wait_exit(), 0, "{}", pty.screen());
    pty.wait_for(&["the terminal hung up (SIGHUP)"]);
}

#[test]
fn below_96_columns_groups_stack_and_q_quits_with_0() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("sb3_run");
    std::fs::create_dir(&run).unwrap();
    write_steps(&mut writer(&run), 0, 2048);
    let mut pty = Pty::spawn(&["watch", run.to_str().unwrap()], 80, 40, tmp.path());
    let screen = pty.wait_for(&["sb3_run", "step 2,048", "value_loss", "fps"]);
    let heading = screen.lines().find(|l| l.contains("charts")).unwrap();
    assert!(!heading.contains("losses"), "one column:\n{screen}");
    pty.send(b"q");
    assert_eq!(pty.wait_exit(), 0, "{}", pty.screen());
}

/// `add_scalars("loss", {"train": .., "val": ..})` as torch and tensorboardX write it: the run's
/// own file, and one sub-run per key (`loss_train/`, `loss_val/`) holding the tag `loss`.
fn write_add_scalars(run: &Path, from: i64, last: i64) -> Vec<EventFileWriter> {
    let mut subs = Vec::new();
    for (key, scale) in [("train", 1.0), ("val", 2.0)] {
        let dir = run.join(format!("loss_{key}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut w = writer(&dir);
        for step in (from..=last).step_by(256) {
            let wall = 1000.0 + step as f64 / 1000.0;
            w.write_scalars(step, wall, &[("loss", scale * step as f64)])
                .unwrap();
        }
        w.flush().unwrap();
        subs.push(w);
    }
    subs
}

#[test]
fn add_scalars_sub_runs_show_as_series_of_their_chart() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("runs").join("exp");
    std::fs::create_dir_all(&run).unwrap();
    let mut w = writer(&run);
    write_steps(&mut w, 0, 8192);
    let _subs = write_add_scalars(&run, 0, 8192);
    // The run's directory, and a directory above it: one run with its sub-runs either way.
    for target in [run.clone(), tmp.path().join("runs")] {
        let line = first_summary(&target);
        // The window's steps 6400..=8192: the train series' mean is 7296, val's twice that.
        for part in [
            "loss/train 7296.0",
            "loss/val 14592.0",
            "charts/episodic_return 7296.0",
        ] {
            assert!(line.contains(part), "{part:?} not in {line:?}");
        }
    }
    // Two runs side by side are several runs: shown as curves, each directory with event files
    // a run of its own, as the runs table lists them (docs/contract/panel.md "Curves in the
    // terminal").
    let other = tmp.path().join("runs").join("exp2");
    std::fs::create_dir_all(&other).unwrap();
    write_steps(&mut writer(&other), 0, 256);
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "--panel", "off"])
        .arg(tmp.path().join("runs"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    // The sub-runs' series overlaid in their tag's chart, as TensorBoard overlays them.
    for part in [
        "[x] exp ",
        "[x] exp/loss_train",
        "[x] exp2",
        "■ exp/loss_val  last 16384.0",
    ] {
        assert!(text.contains(part), "{part:?} not in:\n{text}");
    }
}

#[test]
fn a_sub_run_that_appears_or_grows_later_is_followed() {
    use std::sync::{Arc, Mutex};
    use tally::terminal::{RunFacts, TerminalState};
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let mut w = writer(&run);
    write_steps(&mut w, 0, 256);
    let clock: Arc<dyn tally::Clock> = Arc::new(tally::ManualClock::at(0.0));
    let state = Mutex::new(TerminalState::new(RunFacts {
        algo: String::new(),
        task: "run".into(),
        sim: String::new(),
        name: None,
        num_gpus: 1,
        num_envs: None,
        max_iterations: None,
        profile: tally::Profile::SacFamily,
    }));
    let mut tail = tally_cli::cmd::watch::Tailer::generic(&run, clock);
    assert_eq!(tail.poll(&state).unwrap(), 6);
    let latest = |tag: &str| {
        let s = state.lock().unwrap();
        s.board
            .as_ref()
            .unwrap()
            .tags
            .get(tag)
            .map(|l| (l.step, l.value))
    };
    assert_eq!(latest("loss/train"), None);
    // The sub-runs appear after the first poll (add_scalars opens them on first use).
    let mut subs = write_add_scalars(&run, 0, 256);
    assert_eq!(tail.poll(&state).unwrap(), 4);
    assert_eq!(latest("loss/train"), Some((256, 256.0)));
    assert_eq!(latest("loss/val"), Some((256, 512.0)));
    // And grow.
    subs[1]
        .write_scalars(512, 1000.512, &[("loss", 7.0)])
        .unwrap();
    subs[1].flush().unwrap();
    assert_eq!(tail.poll(&state).unwrap(), 1);
    assert_eq!(latest("loss/val"), Some((512, 7.0)));
    assert_eq!(latest("loss/train"), Some((256, 256.0)));
}
