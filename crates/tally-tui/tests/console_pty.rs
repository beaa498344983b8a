//! The user's output under the live panel, on a real pseudo-terminal (`docs/contract/panel.md`,
//! "The user's output under the panel"): lines printed through the [`Console`] from two
//! threads, interleaved with the panel's status lines, land whole and in order above the
//! panel, stay in the scrollback, and leave the panel's frame intact.
//!
//! Without a live panel (`plain`, `off`, not a terminal) the lines reach their own stream
//! byte for byte.
//!
//! The test binary re-runs itself as the child on the pty (`TALLY_CONSOLE_CHILD`); the pty is
//! emulated with vt100, answering the cursor-position queries ratatui's inline viewport asks.

// Only the SAC state of the shared fixtures is used here.
#[allow(dead_code)]
#[path = "support/fixtures.rs"]
mod fixtures;

use portable_pty::{native_pty_system, CommandBuilder, PtySize};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tally::terminal::Level;
use tally::SystemClock;
use tally_tui::{Console, Mode, Output, Panel, PanelOptions, Stream};

const CHILD: &str = "TALLY_CONSOLE_CHILD";
const ROWS: u16 = 90;
const COLS: u16 = 100;
const LINES: usize = 30;
const WAIT: Duration = Duration::from_secs(60);

/// The long line: wider than the terminal, so it wraps onto a second row.
fn long_line() -> String {
    (0..150)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect()
}

/// On the pty: a panel, status lines and user lines from two threads, then stop.
fn child() {
    let state = Arc::new(Mutex::new(fixtures::sac_state()));
    let mut panel = Panel::start(
        state.clone(),
        Arc::new(SystemClock::default()),
        PanelOptions {
            mode: Mode::On,
            refresh: Duration::from_millis(20),
            ..PanelOptions::default()
        },
    );
    let console = panel.console();
    assert_eq!(console.output(), Output::Live);
    let other: Console = console.clone();
    let worker = std::thread::spawn(move || {
        for i in 0..LINES {
            other
                .print(Stream::Stderr, &format!("worker line {i:02}"))
                .unwrap();
            if i % 8 == 0 {
                std::thread::sleep(Duration::from_millis(7));
            }
        }
    });
    for i in 0..LINES {
        state
            .lock()
            .unwrap()
            .message(3740.0, Level::Warning, format!("status {i:02}"));
        console
            .print(Stream::Stdout, &format!("main line {i:02}"))
            .unwrap();
        if i % 10 == 0 {
            std::thread::sleep(Duration::from_millis(15));
        }
    }
    console
        .print(Stream::Stdout, "first of two\nsecond of two\n")
        .unwrap();
    console
        .print(Stream::Stdout, "\x1b[31mcoloured\x1b[0m\tline")
        .unwrap();
    console.print(Stream::Stdout, &long_line()).unwrap();
    worker.join().unwrap();
    panel.stop().unwrap();
    assert!(!console.is_live());
    console.print(Stream::Stdout, "after the panel").unwrap();
}

/// Every row the terminal ever showed, oldest first: the scrollback, then the screen.
fn history(parser: &mut vt100::Parser) -> Vec<String> {
    parser.set_scrollback(usize::MAX);
    let depth = parser.screen().scrollback();
    // vt100 cannot show a view more than one screen back.
    assert!(depth <= ROWS as usize, "{depth} rows of scrollback");
    let mut rows = Vec::new();
    for back in (1..=depth).rev() {
        parser.set_scrollback(back);
        rows.extend(parser.screen().rows(0, COLS).take(1));
    }
    parser.set_scrollback(0);
    rows.extend(parser.screen().rows(0, COLS));
    rows.into_iter().map(|r| r.trim_end().to_owned()).collect()
}

/// Run the child on a pty until it exits; the emulated terminal afterwards.
fn run_child(test: &str) -> vt100::Parser {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(std::env::current_exe().unwrap());
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"]);
    cmd.env(CHILD, "1");
    cmd.env("TERM", "xterm-256color");
    cmd.env("LANG", "C.UTF-8");
    cmd.env_remove("LC_ALL");
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 5000)));
    let mut writer = pair.master.take_writer().unwrap();
    let mut reader = pair.master.try_clone_reader().unwrap();
    let p = parser.clone();
    let pump = std::thread::spawn(move || {
        const DSR: &[u8] = b"\x1b[6n";
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut rest = &buf[..n];
            while let Some(i) = rest.windows(DSR.len()).position(|w| w == DSR) {
                let mut parser = p.lock().unwrap();
                parser.process(&rest[..i]);
                let (row, col) = parser.screen().cursor_position();
                drop(parser);
                let _ = write!(writer, "\x1b[{};{}R", row + 1, col + 1);
                let _ = writer.flush();
                rest = &rest[i + DSR.len()..];
            }
            p.lock().unwrap().process(rest);
        }
    });
    let t = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if t.elapsed() > WAIT {
            let _ = child.kill();
            panic!("the child did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The child's output is fully read once its side of the pty is closed.
    drop(pair.master);
    let _ = pump.join();
    let parser = Arc::try_unwrap(parser).ok().unwrap().into_inner().unwrap();
    assert!(
        status.success(),
        "the child failed:\n{}",
        parser.screen().contents()
    );
    parser
}

fn position(rows: &[String], line: &str) -> usize {
    let found: Vec<usize> = (0..rows.len()).filter(|&i| rows[i] == line).collect();
    assert_eq!(
        found.len(),
        1,
        "{line:?} should be one whole row, found at {found:?}:\n{}",
        rows.join("\n")
    );
    found[0]
}

#[test]
fn user_lines_land_whole_and_in_order_above_the_panel() {
    if std::env::var_os(CHILD).is_some() {
        return child();
    }
    let mut parser = run_child("user_lines_land_whole_and_in_order_above_the_panel");
    let rows = history(&mut parser);
    // Each thread's lines in its own order; the main thread's interleaved with the status
    // lines it recorded just before each.
    let mut last = 0;
    for i in 0..LINES {
        let status = position(&rows, &format!("WARN status {i:02}"));
        let main = position(&rows, &format!("main line {i:02}"));
        assert!(last <= status && status < main, "line {i} out of order");
        last = main;
    }
    let mut last = 0;
    for i in 0..LINES {
        let at = position(&rows, &format!("worker line {i:02}"));
        assert!(last <= at, "worker line {i} out of order");
        last = at;
    }
    let first = position(&rows, "first of two");
    assert_eq!(position(&rows, "second of two"), first + 1);
    // Escape sequences dropped (they would move the cursor in the panel), the tab expanded.
    position(&rows, "coloured        line");
    let long = long_line();
    let wrapped = position(&rows, &long[..COLS as usize]);
    assert_eq!(position(&rows, &long[COLS as usize..]), wrapped + 1);

    // The panel's last frame is whole below all of them: a top border, side borders on every
    // row, a bottom border; then the line printed after the panel stopped.
    let after = position(&rows, "after the panel");
    let top = rows
        .iter()
        .rposition(|r| r.starts_with('╭') || r.starts_with('┌'))
        .expect("the panel's top border");
    let bottom = rows[top..]
        .iter()
        .position(|r| r.starts_with('╰') || r.starts_with('└'))
        .map(|i| top + i)
        .expect("the panel's bottom border");
    assert!(wrapped + 1 < top && bottom < after, "{}", rows.join("\n"));
    for r in &rows[top + 1..bottom] {
        assert!(
            r.starts_with('│') && r.ends_with('│'),
            "a torn panel row {r:?}:\n{}",
            rows[top..=bottom].join("\n")
        );
    }
}

/// Off a terminal: a panel in `mode` with a status line, and two user lines.
fn child_without_a_terminal(mode: Mode) {
    let state = Arc::new(Mutex::new(fixtures::sac_state()));
    let mut panel = Panel::start(
        state.clone(),
        Arc::new(SystemClock::default()),
        PanelOptions {
            mode,
            ..PanelOptions::default()
        },
    );
    let console = panel.console();
    assert!(!console.is_live());
    state
        .lock()
        .unwrap()
        .message(3740.0, Level::Warning, "a status line".into());
    console
        .print(Stream::Stdout, "out \x1b[1mbold\x1b[0m\ttab\r")
        .unwrap();
    console.print(Stream::Stderr, "err line").unwrap();
    panel.stop().unwrap();
}

/// The child's stdout and stderr, off a terminal, with the test harness's own lines removed.
fn run_without_a_terminal(mode: &str) -> (String, String) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "without_a_live_panel_lines_reach_their_stream_unchanged",
            "--exact",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(CHILD, mode)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // Whole lines, `\r` included: the user's bytes are compared exactly.
    let harness = |l: &&str| {
        let l = l.trim_end_matches('\n');
        l.is_empty() || l.starts_with("running ") || l.starts_with("test result") || l == "."
    };
    let text = |b: &[u8]| {
        String::from_utf8(b.to_vec())
            .unwrap()
            .split_inclusive('\n')
            .filter(|l| !harness(l))
            .collect::<String>()
    };
    (text(&out.stdout), text(&out.stderr))
}

#[test]
fn without_a_live_panel_lines_reach_their_stream_unchanged() {
    match std::env::var(CHILD).as_deref() {
        Ok("off") => return child_without_a_terminal(Mode::Off),
        Ok("plain") => return child_without_a_terminal(Mode::Plain),
        _ => {}
    }
    let user = "out \x1b[1mbold\x1b[0m\ttab\r\n";
    // `off`: nothing of the panel's, the user's bytes as written.
    let (out, err) = run_without_a_terminal("off");
    assert_eq!(out, user);
    assert_eq!(err, "err line\n");
    // `plain`: the user's line unchanged among the panel's plain lines.
    let (out, err) = run_without_a_terminal("plain");
    assert!(out.contains(user), "{out:?}");
    assert!(out.contains("WARN a status line\n"), "{out:?}");
    assert_eq!(err, "err line\n");
}
