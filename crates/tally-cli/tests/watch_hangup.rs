//! `tally watch` whose terminal closes ends with exit 0 (`docs/contract/panel.md` "tally
//! watch"): the pty's master side is closed under it, with and without the pty being its
//! controlling terminal (without one no SIGHUP comes: only its input ends).

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fs::{open, Mode, OFlags};
use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
use rustix::termios::{tcsetwinsize, Winsize};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tally_tfevents::{encode_scalar_event, RecordWriter};

fn record(step: i64, wall: f64, scalars: &[(&str, f64)]) -> Vec<u8> {
    let mut data = Vec::new();
    encode_scalar_event(step, wall, scalars, &mut data);
    let mut w = RecordWriter::new(Vec::new());
    w.write_record(&data).unwrap();
    w.into_inner()
}

/// A pty pair: the master (kept by the test) and the slave, opened without making it this
/// process's controlling terminal.
fn pty(cols: u16, rows: u16) -> (OwnedFd, OwnedFd) {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    let size = Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    tcsetwinsize(&slave, size).unwrap();
    (master, slave)
}

/// Reads the master side into `screen`, answering cursor-position queries as a terminal
/// would, until `stop`; then the master is closed (dropped).
fn serve(master: OwnedFd, screen: Arc<Mutex<Vec<u8>>>, stop: Arc<AtomicBool>) {
    let mut file = File::from(master);
    let mut buf = [0u8; 8192];
    while !stop.load(Ordering::SeqCst) {
        let mut fds = [PollFd::new(&file, PollFlags::IN)];
        let timeout = Timespec {
            tv_sec: 0,
            tv_nsec: 50_000_000,
        };
        if poll(&mut fds, Some(&timeout)).unwrap_or(0) == 0 {
            continue;
        }
        let Ok(n) = file.read(&mut buf) else {
            return;
        };
        if n == 0 {
            return;
        }
        let got = &buf[..n];
        for _ in got.windows(4).filter(|w| w == b"\x1b[6n") {
            let _ = file.write_all(b"\x1b[1;1R");
        }
        screen.lock().unwrap().extend_from_slice(got);
    }
}

/// `tally watch RUN` (with `--curves` when `curves`) on a pty (the controlling terminal of its
/// new session when `ctty`), until the panel shows the run; then the master side is closed.
/// Returns the child.
fn watch_then_close_the_terminal(run: &std::path::Path, ctty: bool, curves: bool) -> Child {
    let (master, slave) = pty(100, 40);
    let mut cmd = Command::new("setsid");
    if ctty {
        cmd.arg("--ctty");
    }
    let mut child = cmd
        .arg(env!("CARGO_BIN_EXE_tally"))
        .arg("watch")
        .arg(run)
        .args(curves.then_some("--curves"))
        .env("TERM", "xterm-256color")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("NO_COLOR")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (screen, stop) = (
        Arc::new(Mutex::new(Vec::new())),
        Arc::new(AtomicBool::new(false)),
    );
    let server = {
        let (screen, stop) = (screen.clone(), stop.clone());
        std::thread::spawn(move || serve(master, screen, stop))
    };
    let t = Instant::now();
    while !String::from_utf8_lossy(&screen.lock().unwrap()).contains("49.000") {
        if t.elapsed() > Duration::from_secs(60) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "the panel never showed the run:\n{}\n{}",
                String::from_utf8_lossy(&screen.lock().unwrap()),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::SeqCst);
    server.join().unwrap();
    child
}

/// The child's exit code and stderr, once it ended; failed when it runs on past `bound`.
fn ends_within(mut child: Child, bound: Duration) -> (Option<i32>, String) {
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > bound {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "watch still ran {bound:?} after its terminal closed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn generic_run() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let events: Vec<u8> = (0..50)
        .flat_map(|s| record(s, 1000.0 + s as f64, &[("charts/return", s as f64)]))
        .collect();
    std::fs::write(dir.path().join("events.out.tfevents.1.h.1.0"), events).unwrap();
    dir
}

#[test]
fn watch_ends_with_0_when_its_terminal_closes_without_a_hang_up_signal() {
    // No controlling terminal: closing the master sends no SIGHUP, the input just ends
    // (read returns 0). The key reader used to read that end again and again, forever.
    let run = generic_run();
    let child = watch_then_close_the_terminal(run.path(), false, false);
    let (code, stderr) = ends_within(child, Duration::from_secs(10));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("tally watch:") && stderr.contains("stopped"),
        "{stderr}"
    );
}

#[test]
fn watch_ends_with_0_when_its_controlling_terminal_closes() {
    // The kernel sends SIGHUP; the panel thread must not be stuck reading the closed input
    // when watch stops it.
    let run = generic_run();
    let child = watch_then_close_the_terminal(run.path(), true, false);
    let (code, stderr) = ends_within(child, Duration::from_secs(10));
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn the_curves_view_ends_with_0_when_its_terminal_closes_with_or_without_a_hang_up() {
    // docs/contract/panel.md "Curves in the terminal": as the panel, within a key poll.
    for ctty in [false, true] {
        let run = generic_run();
        let child = watch_then_close_the_terminal(run.path(), ctty, true);
        let (code, stderr) = ends_within(child, Duration::from_secs(10));
        assert_eq!(code, Some(0), "{stderr}");
        assert!(stderr.contains("tally watch:"), "{stderr}");
    }
}
