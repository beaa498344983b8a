//! `tally` under a real pseudo-terminal for the panel and watch tests: portable-pty drives it,
//! vt100 emulates the screen and answers the cursor-position queries ratatui's inline viewport
//! sends, as a terminal would.
// Each test binary uses part of it.
#![allow(dead_code)]

use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize, SlavePty};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a screen or an exit is waited for before the test fails.
pub const WAIT: Duration = Duration::from_secs(60);

pub struct Pty {
    master: Box<dyn MasterPty + Send>,
    slave: Box<dyn SlavePty + Send>,
    pub child: Box<dyn Child + Send + Sync>,
    parser: Arc<Mutex<vt100::Parser>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
}

/// Feed `bytes` to the emulator, answering each cursor-position query (`ESC [ 6 n`) with
/// the emulated cursor, as a terminal would.
fn feed(parser: &Mutex<vt100::Parser>, writer: &Mutex<Box<dyn Write + Send>>, bytes: &[u8]) {
    const DSR: &[u8] = b"\x1b[6n";
    let mut rest = bytes;
    while let Some(i) = rest.windows(DSR.len()).position(|w| w == DSR) {
        let mut p = parser.lock().unwrap();
        p.process(&rest[..i]);
        let (row, col) = p.screen().cursor_position();
        drop(p);
        let mut w = writer.lock().unwrap();
        let _ = write!(w, "\x1b[{};{}R", row + 1, col + 1);
        let _ = w.flush();
        rest = &rest[i + DSR.len()..];
    }
    parser.lock().unwrap().process(rest);
}

impl Pty {
    /// `tally args` in a `cols` × `rows` terminal, in `cwd`.
    pub fn spawn(args: &[&str], cols: u16, rows: u16, cwd: &Path) -> Pty {
        Pty::spawn_env(args, cols, rows, cwd, &[])
    }

    /// As [`Pty::spawn`], with `env` set in the child's environment.
    pub fn spawn_env(args: &[&str], cols: u16, rows: u16, cwd: &Path, env: &[(&str, &str)]) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_tally"));
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env("TERM", "xterm-256color");
        cmd.env("LANG", "C.UTF-8");
        cmd.env_remove("LC_ALL");
        cmd.env_remove("NO_COLOR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let writer = Arc::new(Mutex::new(pair.master.take_writer().unwrap()));
        let mut reader = pair.master.try_clone_reader().unwrap();
        let (p, w) = (parser.clone(), writer.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                feed(&p, &w, &buf[..n]);
            }
        });
        Pty {
            master: pair.master,
            slave: pair.slave,
            child,
            parser,
            writer,
        }
    }

    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Whether any cell on screen has a foreground colour.
    pub fn coloured(&self) -> bool {
        let p = self.parser.lock().unwrap();
        let screen = p.screen();
        let (rows, cols) = screen.size();
        (0..rows).any(|r| {
            (0..cols).any(|c| {
                screen
                    .cell(r, c)
                    .is_some_and(|cell| cell.fgcolor() != vt100::Color::Default)
            })
        })
    }

    /// Whether any cell on screen is drawn in `colour`.
    pub fn has_colour(&self, colour: vt100::Color) -> bool {
        let p = self.parser.lock().unwrap();
        let screen = p.screen();
        let (rows, cols) = screen.size();
        (0..rows).any(|r| {
            (0..cols).any(|c| {
                screen
                    .cell(r, c)
                    .is_some_and(|cell| cell.fgcolor() == colour)
            })
        })
    }

    pub fn cursor_hidden(&self) -> bool {
        self.parser.lock().unwrap().screen().hide_cursor()
    }

    /// Whether the cursor is shown again, waiting (WAIT at most) for it: the reader thread may
    /// still be parsing the child's last bytes after the child has exited.
    pub fn wait_cursor_shown(&self) -> bool {
        let t = Instant::now();
        while self.cursor_hidden() && t.elapsed() < WAIT {
            std::thread::sleep(Duration::from_millis(50));
        }
        !self.cursor_hidden()
    }

    /// The screen once it shows every one of `what`.
    pub fn wait_for(&self, what: &[&str]) -> String {
        let t = Instant::now();
        loop {
            let s = self.screen();
            if what.iter().all(|w| s.contains(w)) {
                return s;
            }
            assert!(
                t.elapsed() < WAIT,
                "timed out waiting for {what:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn send(&self, bytes: &[u8]) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    pub fn resize(&self, cols: u16, rows: u16) {
        self.parser.lock().unwrap().set_size(rows, cols);
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    pub fn wait_exit(&mut self) -> u32 {
        let t = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.exit_code();
            }
            if t.elapsed() > WAIT {
                let _ = self.child.kill();
                panic!("the child did not exit; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The terminal's modes as `stty -a` reports them on this pty, after the child exited.
    pub fn stty(&self) -> String {
        let marker = "stty-done";
        let mut cmd = CommandBuilder::new("sh");
        cmd.args(["-c", &format!("stty -a; echo {marker}")]);
        let mut c = self.slave.spawn_command(cmd).unwrap();
        c.wait().unwrap();
        self.wait_for(&[marker])
    }
}
