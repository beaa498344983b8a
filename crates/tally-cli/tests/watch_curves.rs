//! `tally watch --curves` and `tally watch` on a folder of runs (`docs/contract/panel.md`
//! "Curves in the terminal"): one frame as text off a terminal, and the live view under a
//! pty: both runs overlaid, a run unpicked by its keys, a growing run's newest value, `q`
//! restoring the terminal, SIGHUP ending it with 0.

#[path = "support/pty.rs"]
mod pty;

use pty::Pty;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use tally_tfevents::{EventFileWriter, WriterOptions};

/// Steps `from..=to` of run `seed`: a return rising by `1 + seed` per step, a loss falling;
/// one event per tag, as tensorboardX writes them.
fn write_steps(w: &mut EventFileWriter, seed: i64, from: i64, to: i64) {
    for step in from..=to {
        let wall = 1000.0 + step as f64 / 100.0;
        let ret = (step * (1 + seed)) as f64;
        w.write_scalars(step, wall, &[("charts/episodic_return", ret)])
            .unwrap();
        w.write_scalars(
            step,
            wall,
            &[("losses/value_loss", 64.0 / (1 + step) as f64)],
        )
        .unwrap();
    }
    w.flush().unwrap();
}

/// A folder `logs` of runs `a` (seed 0) and `b` (seed 1), steps 0..=200.
fn two_runs(root: &Path) -> (EventFileWriter, EventFileWriter) {
    let open = |name: &str| {
        let dir = root.join("logs").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        EventFileWriter::open(&dir, WriterOptions::default()).unwrap()
    };
    let (mut a, mut b) = (open("a"), open("b"));
    write_steps(&mut a, 0, 0, 200);
    write_steps(&mut b, 1, 0, 200);
    (a, b)
}

fn is_braille(c: char) -> bool {
    ('\u{2801}'..='\u{28ff}').contains(&c)
}

#[test]
fn off_a_terminal_one_frame_of_both_runs_curves_and_values_is_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let _writers = two_runs(tmp.path());
    // With --curves, and without: a folder of several runs is shown as curves.
    for args in [
        &["watch", "logs", "--curves", "--panel", "off"][..],
        &["watch", "logs"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tally"))
            .args(args)
            .current_dir(tmp.path())
            .env("COLUMNS", "100")
            .env("LANG", "C.UTF-8")
            .env_remove("LC_ALL")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert!(text.starts_with("logs  2 of 2 runs  2 tags"), "{text}");
        assert!(text.contains("[x] a") && text.contains("[x] b"), "{text}");
        // Each tag's chart, each run's newest value and 2 s mean (the points from wall time
        // 1000.0 on: steps 0..=200, the return's mean 100 for a, 200 for b).
        for part in [
            "charts/episodic_return",
            "losses/value_loss",
            "■ a  last 200.0  avg 2s 100.0  step 200",
            "■ b  last 400.0  avg 2s 200.0  step 200",
            "└0",
        ] {
            assert!(text.contains(part), "{part:?} not in:\n{text}");
        }
        let dots = text.chars().filter(|&c| is_braille(c)).count();
        assert!(dots > 100, "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    }

    // An ASCII locale: the same frame in ASCII.
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "logs/a", "--curves", "--panel", "off"])
        .current_dir(tmp.path())
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.is_ascii(), "{text}");
    assert!(text.contains("# a  last 200.0"), "{text}");
}

/// Wait until `f` holds, or fail with the screen.
fn wait_until(pty: &Pty, what: &str, f: impl Fn(&Pty) -> bool) {
    let t = Instant::now();
    while !f(pty) {
        assert!(
            t.elapsed() < pty::WAIT,
            "timed out: {what}\n{}",
            pty.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_live_view_overlays_runs_unpicks_one_by_keys_follows_growth_and_q_restores() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut a, _b) = two_runs(tmp.path());
    let mut pty = Pty::spawn(&["watch", "logs", "--curves"], 100, 40, tmp.path());
    let screen = pty.wait_for(&[
        "charts/episodic_return",
        "■ a  last 200.0",
        "■ b  last 400.0",
        "q quit",
    ]);
    assert!(screen.chars().any(is_braille), "{screen}");
    // a in cyan, b in yellow (the first two colours).
    let (cyan, yellow) = (vt100::Color::Idx(6), vt100::Color::Idx(3));
    assert!(pty.has_colour(cyan) && pty.has_colour(yellow), "{screen}");

    // The cursor to b, and b unpicked: its colour and its values leave the charts.
    pty.send(b"l");
    pty.send(b" ");
    pty.wait_for(&["[ ] b", "1 of 2 runs"]);
    wait_until(&pty, "b's colour gone", |p| !p.has_colour(yellow));
    let screen = pty.screen();
    assert!(!screen.contains("■ b  last"), "{screen}");
    assert!(pty.has_colour(cyan), "{screen}");

    // a grows while watched: its newest value moves.
    write_steps(&mut a, 0, 201, 300);
    pty.wait_for(&["■ a  last 300.0"]);

    // Picked again.
    pty.send(b" ");
    pty.wait_for(&["[x] b", "■ b  last 400.0"]);

    pty.send(b"q");
    assert_eq!(pty.wait_exit(), 0, "{}", pty.screen());
    assert!(pty.wait_cursor_shown(), "{}", pty.screen());
    let stty = pty.stty();
    for flag in ["icanon", "echo", "isig"] {
        assert!(
            stty.split_whitespace().any(|w| w == flag),
            "{flag} is off (raw mode left on):\n{stty}"
        );
    }
}

#[test]
fn the_filter_keeps_matching_tags_and_a_hang_up_ends_the_view_with_0() {
    let tmp = tempfile::tempdir().unwrap();
    let _writers = two_runs(tmp.path());
    let mut pty = Pty::spawn(&["watch", "logs"], 100, 40, tmp.path());
    pty.wait_for(&["charts/episodic_return", "losses/value_loss"]);
    pty.send(b"/loss\r");
    pty.wait_for(&["filter: loss", "1 tags"]);
    wait_until(&pty, "the return's chart gone", |p| {
        !p.screen().contains("charts/episodic_return")
    });
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
fn a_run_that_cannot_be_read_is_named_and_the_others_are_drawn_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let _writers = two_runs(tmp.path());
    let bad = tmp.path().join("logs").join("c");
    std::fs::create_dir_all(&bad).unwrap();
    // A record whose length's checksum is wrong: a corrupt record at byte 0.
    std::fs::write(bad.join("events.out.tfevents.1.host"), [7u8; 64]).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "logs", "--panel", "off"])
        .current_dir(tmp.path())
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}\n{err}");
    assert!(
        text.contains("[x] c !") && text.contains("■ b  last 400.0"),
        "{text}"
    );
    assert!(
        err.contains("c: ") && err.contains("events.out.tfevents.1.host"),
        "{err}"
    );
}
