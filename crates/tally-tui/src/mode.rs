//! Choosing between the live panel and plain text, and whether to use colour.
//!
//! `auto` shows the panel when stdout is a terminal and `TERM` is not `dumb`, plain
//! lines otherwise (a cluster job's log file, CI); `plain` is always plain; `off` prints
//! nothing; `on` asks for the panel even when detection says no (it still falls back to plain
//! text if the terminal cannot be driven). `NO_COLOR` (any non-empty value, <https://no-color.org>) removes colour.
//! See `docs/contract/panel.md` ("Plain output").

use std::io::IsTerminal;

/// What the caller asked for (`panel="auto"|"on"|"plain"|"off"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// The panel on a capable terminal, plain lines otherwise.
    #[default]
    Auto,
    /// The panel.
    On,
    /// Plain lines only: no escape codes at all.
    Plain,
    /// Nothing at all: the process's output is only its own.
    Off,
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Mode::Auto),
            "on" => Ok(Mode::On),
            "plain" => Ok(Mode::Plain),
            "off" => Ok(Mode::Off),
            _ => Err(format!(
                "unknown panel mode '{s}': expected auto, on, plain or off"
            )),
        }
    }
}

/// What actually runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The live ratatui panel in an inline viewport.
    Live,
    /// A compact one-line summary every few seconds, no escape codes.
    Plain,
    /// Nothing printed.
    Off,
}

/// The facts about the process's terminal that the choice depends on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TermEnv {
    /// Whether stdout is a terminal.
    pub stdout_is_tty: bool,
    /// `TERM`, if set.
    pub term: Option<String>,
    /// `NO_COLOR` is set to a non-empty value.
    pub no_color: bool,
}

impl TermEnv {
    /// Read the environment of this process.
    pub fn detect() -> TermEnv {
        TermEnv {
            stdout_is_tty: std::io::stdout().is_terminal(),
            term: std::env::var("TERM").ok(),
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
        }
    }

    /// Whether `TERM` names a terminal that can take cursor movement (set, not `dumb`).
    pub fn capable_term(&self) -> bool {
        self.term
            .as_deref()
            .is_some_and(|t| !t.is_empty() && t != "dumb")
    }

    /// The output for `mode` in this environment.
    pub fn output(&self, mode: Mode) -> Output {
        match mode {
            Mode::Off => Output::Off,
            Mode::Plain => Output::Plain,
            Mode::On => Output::Live,
            Mode::Auto if self.stdout_is_tty && self.capable_term() => Output::Live,
            Mode::Auto => Output::Plain,
        }
    }

    /// Whether the panel may use colour.
    pub fn color(&self) -> bool {
        !self.no_color
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(tty: bool, term: Option<&str>, no_color: bool) -> TermEnv {
        TermEnv {
            stdout_is_tty: tty,
            term: term.map(str::to_owned),
            no_color,
        }
    }

    #[test]
    fn auto_shows_the_panel_only_on_a_capable_terminal() {
        // auto = panel when stdout is a TTY and TERM is not dumb, else plain
        // (docs/contract/panel.md).
        assert_eq!(
            env(true, Some("xterm-256color"), false).output(Mode::Auto),
            Output::Live
        );
        assert_eq!(
            env(false, Some("xterm-256color"), false).output(Mode::Auto),
            Output::Plain
        );
        assert_eq!(
            env(true, Some("dumb"), false).output(Mode::Auto),
            Output::Plain
        );
        assert_eq!(env(true, None, false).output(Mode::Auto), Output::Plain);
    }

    #[test]
    fn plain_is_always_plain_off_is_nothing_and_on_always_asks_for_the_panel() {
        assert_eq!(
            env(true, Some("xterm"), false).output(Mode::Plain),
            Output::Plain
        );
        assert_eq!(
            env(true, Some("xterm"), false).output(Mode::Off),
            Output::Off
        );
        assert_eq!(env(false, None, false).output(Mode::On), Output::Live);
    }

    #[test]
    fn no_color_removes_colour_but_not_the_panel() {
        let e = env(true, Some("xterm"), true);
        assert!(!e.color());
        assert_eq!(e.output(Mode::Auto), Output::Live);
    }

    #[test]
    fn mode_parses_the_flag_values() {
        assert_eq!("auto".parse::<Mode>(), Ok(Mode::Auto));
        assert_eq!("off".parse::<Mode>(), Ok(Mode::Off));
        assert_eq!("plain".parse::<Mode>(), Ok(Mode::Plain));
        assert!("maybe".parse::<Mode>().is_err());
    }
}
