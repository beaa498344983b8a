//! `tally demo` and `tally watch` under a real pseudo-terminal (`docs/contract/panel.md`): the
//! tier's titles on screen at 80 and 140 columns, re-evaluated on resize, and a restored
//! terminal (cursor visible, not in raw mode) after Ctrl-C, a panic, and `q`.
//!
//! The pty is driven from Rust (portable-pty) and its screen emulated with vt100, answering
//! the cursor-position queries a terminal answers (ratatui's inline viewport asks for it).

#[path = "support/pty.rs"]
mod pty;

use pty::{Pty, WAIT};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Not in raw mode: canonical input, echo and signals on (crossterm's raw mode clears them).
fn assert_cooked(stty: &str) {
    for flag in ["icanon", "echo", "isig"] {
        assert!(
            stty.split_whitespace().any(|w| w == flag),
            "{flag} is off (raw mode left on):\n{stty}"
        );
    }
}

fn run_dir_under(root: &Path) -> PathBuf {
    let algo_dir = std::fs::read_dir(root)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let task_dir = std::fs::read_dir(algo_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::read_dir(task_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

fn status_of(run: &Path) -> String {
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run_summary.json")).unwrap())
            .unwrap();
    s["status"].as_str().unwrap().to_owned()
}

fn demo_args(root: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["demo", "--iterations", "10000000", "--panel", "on"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a.push(format!("training.log_root={}", root.display()));
    a
}

#[test]
fn demo_at_80_columns_stacks_with_one_timing_column_and_ctrl_c_restores_the_terminal() {
    // Below 96 columns the metrics, rewards and timing areas stack vertically and timing is a
    // single Timing column (docs/contract/panel.md, width tiers).
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("logs");
    let args = demo_args(&root, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut pty = Pty::spawn(&args, 80, 60, tmp.path());
    let screen = pty.wait_for(&["Timing", "Iter Wall", "Avg 2s (n="]);
    for title in [
        "Metrics",
        "Rewards",
        "Timing",
        "Learner",
        "Collector",
        "System",
    ] {
        assert!(screen.contains(title), "{title}:\n{screen}");
    }
    assert!(!screen.contains("Learner (Iter Wall)"), "{screen}");
    assert!(
        pty.cursor_hidden(),
        "the panel hides the cursor while it draws"
    );
    assert!(pty.coloured(), "the panel uses colour without NO_COLOR");
    // Ctrl-C through the terminal: SIGINT, the run closes as interrupted, exit 130.
    pty.send(b"\x03");
    assert_eq!(pty.wait_exit(), 130, "{}", pty.screen());
    let after = pty.wait_for(&["run: "]);
    assert!(pty.wait_cursor_shown(), "cursor still hidden:\n{after}");
    assert_cooked(&pty.stty());
    assert_eq!(status_of(&run_dir_under(&root)), "interrupted");
}

#[test]
fn demo_at_140_columns_shows_three_timing_columns_and_follows_a_resize() {
    // From 120 columns timing has its three full columns: Learner (Iter Wall), Collector (own
    // clock) and System (docs/contract/panel.md, width tiers).
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("logs");
    let args = demo_args(&root, &["--algo", "appo"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut pty = Pty::spawn(&args, 140, 45, tmp.path());
    let screen = pty.wait_for(&[
        "Learner (Iter Wall)",
        "Collector (own clock)",
        "System",
        "Iter Wall ",
    ]);
    assert!(
        screen.contains("Losses & Metrics") && screen.contains("Rewards"),
        "{screen}"
    );
    assert!(
        screen.contains("🚀 APPO · go2_joystick_flat · mujoco | GPUs 1 | iter "),
        "{screen}"
    );
    assert!(
        screen.contains("Weight Publish") && !screen.contains("Collector Release"),
        "{screen}"
    );
    // Width tiers are re-evaluated on every resize.
    pty.resize(90, 80);
    pty.wait_for(&["Timing"]);
    pty.send(b"\x03");
    assert_eq!(pty.wait_exit(), 130, "{}", pty.screen());
    let after = pty.wait_for(&["run: "]);
    // Lines the program logs scroll above the panel (here the logger's close line).
    let lines: Vec<&str> = after.lines().collect();
    let top = lines.iter().position(|l| l.starts_with('╭')).unwrap();
    assert!(
        lines[..top].iter().any(|l| l.contains("Run interrupted")),
        "{after}"
    );
    assert!(pty.wait_cursor_shown(), "{}", pty.screen());
    assert_cooked(&pty.stty());
}

#[test]
fn a_panic_in_the_training_loop_restores_the_terminal() {
    // A panic in the training loop restores the terminal (cursor, raw mode).
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("logs");
    let args = demo_args(&root, &["--panic-at-iteration", "300"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut pty = Pty::spawn(&args, 100, 50, tmp.path());
    let code = pty.wait_exit();
    assert_eq!(code, 101, "{}", pty.screen());
    let screen = pty.wait_for(&["injected panic at iteration 300"]);
    assert!(
        screen.contains("Learner"),
        "the panel was drawn before the panic:\n{screen}"
    );
    assert!(pty.wait_cursor_shown(), "{screen}");
    assert_cooked(&pty.stty());
    assert_eq!(status_of(&run_dir_under(&root)), "failed");
}

#[test]
fn watch_shows_a_finished_run_and_q_quits_leaving_raw_mode() {
    // `tally watch RUN_DIR` renders the same panel; for a finished run, the final state; `q` quits.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("logs");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tally"))
        .args([
            "demo",
            "--iterations",
            "60",
            "--gpus",
            "2",
            "--panel",
            "off",
        ])
        .arg(format!("training.log_root={}", root.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = run_dir_under(&root);
    let run_s = run.to_str().unwrap();
    let mut pty = Pty::spawn(&["watch", run_s], 130, 50, tmp.path());
    let screen = pty.wait_for(&[
        "iter 60/60",
        "Learner (Iter Wall)",
        "GPUs 2",
        "Run completed",
    ]);
    assert!(
        screen.contains("🚀 SAC · go2_joystick_flat · mujoco | GPUs 2"),
        "{screen}"
    );
    assert!(
        pty.child.try_wait().unwrap().is_none(),
        "watch waits for q on a finished run"
    );
    pty.send(b"q");
    assert_eq!(pty.wait_exit(), 0, "{}", pty.screen());
    assert!(pty.wait_cursor_shown(), "{}", pty.screen());
    assert_cooked(&pty.stty());
}

#[test]
fn no_color_and_a_c_locale_draw_the_panel_plainly_in_ascii() {
    // NO_COLOR is respected, and the panel falls back to ASCII when the encoding cannot show
    // its symbols (docs/contract/panel.md).
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("logs");
    let args = demo_args(&root, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let env = [("NO_COLOR", "1"), ("LANG", "C")];
    let mut pty = Pty::spawn_env(&args, 120, 50, tmp.path(), &env);
    let screen = pty.wait_for(&["Learner (Iter Wall)", "Iter Wall ", "Avg 2s (n="]);
    assert!(!pty.coloured(), "colour despite NO_COLOR:\n{screen}");
    assert!(screen.is_ascii(), "non-ASCII under LANG=C:\n{screen}");
    assert!(
        screen.contains("+ SAC - go2_joystick_flat - mujoco | GPUs 1 | iter "),
        "{screen}"
    );
    pty.send(b"\x03");
    assert_eq!(pty.wait_exit(), 130);
}

/// The run directory `root/<algo>/<task>/<run>`, once it exists (no panic while it is created).
fn find_run(root: &Path) -> Option<PathBuf> {
    let first =
        |p: &Path| -> Option<PathBuf> { Some(std::fs::read_dir(p).ok()?.next()?.ok()?.path()) };
    first(&first(&first(root)?)?)
}

/// The iteration the title shows (`iter N/M`).
fn title_iteration(screen: &str) -> Option<u64> {
    let at = screen.find("| iter ")? + "| iter ".len();
    screen[at..].split('/').next()?.parse().ok()
}

#[test]
fn watch_follows_a_run_that_is_still_writing() {
    // `tally watch RUN_DIR` renders the same panel live, tailing the file as it grows.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("logs");
    let mut writer = std::process::Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["demo", "--iterations", "10000000", "--panel", "off"])
        .arg(format!("training.log_root={}", root.display()))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let run = loop {
        if let Some(run) = find_run(&root)
            .filter(|r| tally_read::files::run_event_files(r).is_ok_and(|f| !f.is_empty()))
        {
            break run;
        }
        assert!(t.elapsed() < WAIT, "no event file under {}", root.display());
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut pty = Pty::spawn(&["watch", run.to_str().unwrap()], 140, 50, tmp.path());
    let first = pty.wait_for(&["Learner (Iter Wall)", "Avg 2s (n="]);
    let i0 = title_iteration(&first).unwrap();
    let t = Instant::now();
    loop {
        let i = title_iteration(&pty.screen()).unwrap_or(0);
        if i > i0 + 10 {
            break;
        }
        assert!(
            t.elapsed() < WAIT,
            "the iteration stayed at {i0}:\n{}",
            pty.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!pty.screen().contains("Run completed"));
    pty.send(b"q");
    assert_eq!(pty.wait_exit(), 0, "{}", pty.screen());
    let _ = writer.kill();
    let _ = writer.wait();
    assert_cooked(&pty.stty());
}
