//! The keys of `tally watch` (`q`, `Esc`, Ctrl-C; the curves view's arrows and letters), read
//! from the terminal without blocking.
//!
//! Read here rather than through crossterm's event reader: that one reads its input again at
//! once when a read returns nothing, so a terminal that closed (its input at its end, every
//! read returning 0) kept the panel thread spinning for ever (docs/contract/panel.md "tally
//! watch"). Here the end of the input, a hang-up or a read error ends the panel instead.

use crate::key::{parse, Key};
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use std::fs::File;
use std::io::{self, IsTerminal};
use std::os::fd::{AsFd, BorrowedFd};

/// Where keys come from: stdin when it is the terminal, else the process's terminal.
enum Input {
    Stdin(io::Stdin),
    Tty(File),
}

/// The terminal's input, in raw mode: bytes, not lines.
pub(super) struct Keys {
    input: Input,
}

/// What a look at the input found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pressed {
    /// Nothing that asks to quit.
    Nothing,
    /// `q`, `Q`, `Esc` or Ctrl-C.
    Quit,
}

impl Keys {
    /// The terminal's input: stdin when it is a terminal, else `/dev/tty` (as crossterm
    /// chooses, so raw mode and keys are on the same terminal).
    pub(super) fn open() -> io::Result<Keys> {
        let stdin = io::stdin();
        if stdin.is_terminal() {
            return Ok(Keys {
                input: Input::Stdin(stdin),
            });
        }
        let tty = File::options().read(true).write(true).open("/dev/tty")?;
        Ok(Keys {
            input: Input::Tty(tty),
        })
    }

    fn fd(&self) -> BorrowedFd<'_> {
        match &self.input {
            Input::Stdin(stdin) => stdin.as_fd(),
            Input::Tty(f) => f.as_fd(),
        }
    }

    /// The terminal's size (columns, rows), when it can be asked.
    pub(super) fn size(&self) -> Option<(u16, u16)> {
        let size = rustix::termios::tcgetwinsize(self.fd()).ok()?;
        Some((size.ws_col, size.ws_row))
    }

    /// Read what was typed, without waiting. An error when the terminal is gone: its input
    /// ended (a read of 0 bytes), it hung up, or reading it failed.
    pub(super) fn read(&mut self) -> io::Result<Pressed> {
        let mut pressed = Pressed::Nothing;
        self.each_read(|bytes| {
            if quits(bytes) {
                pressed = Pressed::Quit;
            }
        })?;
        Ok(pressed)
    }

    /// Every key typed since the last look, without waiting (the curves view's keys); an
    /// error when the terminal is gone, as for [`read`](Self::read).
    pub(super) fn read_keys(&mut self) -> io::Result<Vec<Key>> {
        let mut keys = Vec::new();
        self.each_read(|bytes| keys.extend(parse(bytes)))?;
        Ok(keys)
    }

    /// Hand each read of what is waiting to `take`, without waiting for more.
    fn each_read(&mut self, mut take: impl FnMut(&[u8])) -> io::Result<()> {
        let mut buf = [0u8; 256];
        // A bounded number of reads per look: a terminal pasting megabytes does not hold
        // the frame back.
        for _ in 0..16 {
            let fd = self.fd();
            let mut fds = [PollFd::new(&fd, PollFlags::IN)];
            let zero = Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            match poll(&mut fds, Some(&zero)) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            let revents = fds[0].revents();
            if revents.contains(PollFlags::NVAL) {
                return Err(gone("the terminal's input is closed"));
            }
            if !revents.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR) {
                return Ok(());
            }
            // Readable, hung up or failed: a read says which (a hang-up reads 0 bytes).
            let n = match rustix::io::read(self.fd(), &mut buf) {
                Ok(0) => return Err(gone("the terminal closed (its input ended)")),
                Ok(n) => n,
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => continue,
                Err(e) => return Err(io::Error::from(e)),
            };
            take(&buf[..n]);
        }
        Ok(())
    }
}

fn gone(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, what)
}

/// Whether `bytes` (one read in raw mode) hold `q`, `Q`, Ctrl-C, or an `Esc` of its own. An
/// escape sequence (an arrow key, a function key, Alt with a key) is passed over whole: a
/// lone `Esc` is one that ends the read, as terminals send a sequence in one write.
fn quits(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'q' | b'Q' | 0x03 => return true,
            0x1b if i + 1 == bytes.len() => return true,
            0x1b => {
                i += 1;
                match bytes[i] {
                    // CSI: parameters, then one final byte in 0x40..=0x7e.
                    b'[' => {
                        i += 1;
                        while i < bytes.len() && !(0x40..=0x7e).contains(&bytes[i]) {
                            i += 1;
                        }
                    }
                    // SS3: one more byte (F1-F4, keypad).
                    b'O' => i += 1,
                    // Alt with a key.
                    _ => {}
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::quits;

    #[test]
    fn q_esc_and_ctrl_c_quit_escape_sequences_do_not() {
        for quit in [&b"q"[..], b"Q", b"\x03", b"\x1b", b"abq", b"\x1b[Aq"] {
            assert!(quits(quit), "{quit:?}");
        }
        for other in [
            &b"a"[..],
            b"\x1b[A",
            b"\x1b[1;5D",
            b"\x1bOP",
            b"\x1bq",
            b"\x1b[200~x",
        ] {
            assert!(!quits(other), "{other:?}");
        }
    }
}
