//! What a command tells the user on stderr while it reads runs: damage as warnings, notes,
//! and export's progress bar ([`StderrObserver`], the CLI's [`Observer`]).

use std::fmt;
use std::io::Write as _;
use std::time::{Duration, Instant};
use tally_read::Observer;
use tally_tfevents::Damage;

/// Write `text` and a newline on stderr, best effort: stderr may be a closed pipe
/// (`tally ... 2>&1 | head`) or a terminal that went away, where `eprintln!` panics. A message
/// nobody can read is dropped; the command ends with its own exit code.
pub fn line(text: impl fmt::Display) {
    let text = shown(text.to_string());
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// `text` naming object-store URLs where it names their mirrors (docs/contract/object-storage.md
/// "Every front end").
pub fn shown(text: String) -> String {
    #[cfg(feature = "cloud")]
    {
        if text.contains(std::path::MAIN_SEPARATOR) {
            return tally_cloud::shown(&text);
        }
    }
    text
}

/// As [`line`], without the newline.
pub fn part(text: impl fmt::Display) {
    let text = shown(text.to_string());
    let _ = write!(std::io::stderr(), "{text}");
}

/// One line per damage found: `tally: warning: <file>: truncated tail at byte N: ...`.
pub fn warn(damage: &[Damage]) {
    for d in damage {
        line(format_args!("tally: warning: {d}"));
    }
}

/// One line per path a reader left out (a run it could not read, a special file, a directory
/// it could not list), with why: `tally: warning: <path>: skipped: ...`.
pub fn skipped(paths: &[(std::path::PathBuf, String)]) {
    for (path, why) in paths {
        line(format_args!(
            "tally: warning: {}: skipped: {why}",
            path.display()
        ));
    }
}

/// Prints notes and damage as they come, counts skipped records, and draws a one-line
/// progress bar (at most 5 times a second) when asked to.
pub struct StderrObserver {
    /// The progress bar's title (`export`); `None` draws no bar.
    bar: Option<&'static str>,
    last: Instant,
    /// Corrupt records skipped so far.
    pub skipped: usize,
}

impl StderrObserver {
    /// Prints notes and damage; with `bar`, also a progress bar titled `bar`.
    pub fn new(bar: Option<&'static str>) -> Self {
        StderrObserver {
            bar,
            last: Instant::now(),
            skipped: 0,
        }
    }
}

impl Observer for StderrObserver {
    fn note(&mut self, text: &str) {
        line(format_args!("tally: note: {text}"));
    }

    fn skipped(&mut self, path: &std::path::Path, why: &str) {
        skipped(&[(path.to_owned(), why.to_owned())]);
    }

    fn damage(&mut self, found: &[Damage]) {
        self.skipped += found
            .iter()
            .filter(|d| matches!(d, Damage::Skipped { .. }))
            .count();
        warn(found);
    }

    fn progress(&mut self, done: u64, total: u64, rows: u64, last: bool) {
        let Some(title) = self.bar else {
            return;
        };
        if !last && self.last.elapsed() < Duration::from_millis(200) {
            return;
        }
        self.last = Instant::now();
        let pct = if total > 0 {
            done as f64 / total as f64 * 100.0
        } else {
            100.0
        };
        part(format_args!(
            "\r{title}: {pct:5.1}% ({:.1} / {:.1} MB, {rows} scalars)",
            done as f64 / 1e6,
            total as f64 / 1e6,
        ));
        if last {
            line("");
        }
    }
}
