//! `tally` under a real pseudo-terminal for the watch tests: portable-pty drives it, vt100
//! emulates the screen and answers the cursor-position queries ratatui's inline viewport sends.

use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a screen or an exit is waited for before the test fails.
pub const WAIT: Duration = Duration::from_secs(60);

pub struct Pty {
    _master: Box<dyn MasterPty + Send>,
    pub child: Box<dyn Child + Send + Sync>,
    parser: Arc<Mutex<vt100::Parser>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
}

/// Feed `bytes` to the emulator, answering each `ESC [ 6 n` with the emulated cursor.
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
    pub fn spawn(args: &[&str], cols: u16, rows: u16, cwd: &Path) -> Pty {
        let size = PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        };
        let pair = native_pty_system().openpty(size).unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_tally"));
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env("TERM", "xterm-256color");
        cmd.env("LANG", "C.UTF-8");
        cmd.env_remove("LC_ALL");
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
            _master: pair.master,
            child,
            parser,
            writer,
        }
    }

    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
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
}
