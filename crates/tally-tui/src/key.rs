//! A key as the curves view takes it, and the bytes a raw-mode terminal sends parsed into keys
//! (pure; `app` reads the bytes). See `docs/contract/panel.md` "Curves in the terminal".

/// One key press.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable character (`q`, `j`, space, a filter's letters).
    Char(char),
    /// Up arrow.
    Up,
    /// Down arrow.
    Down,
    /// Left arrow.
    Left,
    /// Right arrow.
    Right,
    /// Enter (CR or LF).
    Enter,
    /// An `Esc` of its own (not the start of a sequence).
    Esc,
    /// Backspace (DEL or BS).
    Backspace,
    /// Ctrl-C: raw mode takes it as a byte, not a signal.
    CtrlC,
}

/// The keys in `bytes`, one read in raw mode. A terminal sends an escape sequence in one write,
/// so an `Esc` that ends the read is the key itself; other sequences (function keys, Alt with a
/// key, a bracketed paste's markers) are passed over whole, arrows kept.
pub fn parse(bytes: &[u8]) -> Vec<Key> {
    let mut keys = Vec::new();
    let text = String::from_utf8_lossy(bytes);
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\x03' => keys.push(Key::CtrlC),
            '\r' | '\n' => keys.push(Key::Enter),
            '\x7f' | '\x08' => keys.push(Key::Backspace),
            '\x1b' if i + 1 == chars.len() => keys.push(Key::Esc),
            '\x1b' => {
                i += 1;
                match chars[i] {
                    // CSI (`ESC [`) or SS3 (`ESC O`): parameters, then one final byte.
                    '[' | 'O' => {
                        i += 1;
                        while i < chars.len() && !('\x40'..='\x7e').contains(&chars[i]) {
                            i += 1;
                        }
                        match chars.get(i) {
                            Some('A') => keys.push(Key::Up),
                            Some('B') => keys.push(Key::Down),
                            Some('C') => keys.push(Key::Right),
                            Some('D') => keys.push(Key::Left),
                            _ => {}
                        }
                    }
                    // Alt with a key.
                    _ => {}
                }
            }
            c if !c.is_control() => keys.push(Key::Char(c)),
            _ => {}
        }
        i += 1;
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_letters_and_a_lone_esc_are_keys_other_sequences_are_not() {
        assert_eq!(
            parse(b"q \x1b[A\x1bOB\x1b[C\x1b[D\r\x7f\x03"),
            [
                Key::Char('q'),
                Key::Char(' '),
                Key::Up,
                Key::Down,
                Key::Right,
                Key::Left,
                Key::Enter,
                Key::Backspace,
                Key::CtrlC
            ]
        );
        assert_eq!(parse(b"\x1b"), [Key::Esc]);
        assert_eq!(parse(b"\x1b[1;5D"), [Key::Left]);
        assert!(parse(b"\x1bOP").is_empty());
        assert!(parse(b"\x1bq").is_empty());
        assert_eq!(parse("é".as_bytes()), [Key::Char('é')]);
    }
}
