//! What a soak shows while it runs and when it ends, on stderr: a live one-line status on a
//! terminal (rewritten in place at every sample), plain lines every few samples otherwise, and
//! a short summary at the end.

use std::io::Write;
use tally_schema::artifacts::{SoakArtifact, SoakSample, SoakStatus};

/// Samples between plain status lines when stderr is not a terminal.
pub const PLAIN_EVERY_SAMPLES: u64 = 12;

/// The status line of one sample: elapsed, age of the last progress change, the tree's total
/// resident set and its process count.
pub fn line(s: &SoakSample, progress_age_s: Option<f64>) -> String {
    let rss: u64 = s.process.iter().map(|p| p.rss_kib).sum();
    let progress = match progress_age_s {
        Some(age) => format!(
            "last progress {} ago ({})",
            clock(age),
            bytes(s.progress.bytes_total)
        ),
        None => "no progress yet".to_owned(),
    };
    format!(
        "soak {} | {progress} | RSS {} | {} process{}",
        clock(s.elapsed_s),
        bytes(rss.saturating_mul(1024)),
        s.process.len(),
        if s.process.len() == 1 { "" } else { "es" }
    )
}

/// Shows the status lines.
pub struct Status {
    live: bool,
    shown: bool,
}

impl Status {
    /// Live (in place) when stderr is a terminal, plain lines otherwise.
    pub fn new() -> Status {
        Status {
            live: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            shown: false,
        }
    }

    /// Show sample number `n` (from 1).
    pub fn sample(&mut self, n: u64, s: &SoakSample, progress_age_s: Option<f64>) {
        let text = line(s, progress_age_s);
        let mut err = std::io::stderr().lock();
        if self.live {
            // Cut to the terminal's width: a wrapped line could not be rewritten in place.
            let width = rustix::termios::tcgetwinsize(std::io::stderr())
                .map_or(80, |w| usize::from(w.ws_col))
                .max(2);
            let text: String = text.chars().take(width - 1).collect();
            let _ = write!(err, "\r\x1b[2K{text}");
            self.shown = true;
        } else if n % PLAIN_EVERY_SAMPLES == 1 {
            let _ = writeln!(err, "{text}");
        }
        let _ = err.flush();
    }

    /// Clear the live line and print the summary of `a`, written to `path`.
    pub fn finish(&mut self, a: &SoakArtifact, path: &std::path::Path) {
        let mut err = std::io::stderr().lock();
        if self.live && self.shown {
            let _ = write!(err, "\r\x1b[2K");
        }
        let _ = writeln!(err, "{}", summary(a));
        let _ = writeln!(err, "soak artifact: {}", path.display());
    }
}

/// The end-of-soak summary: status, classification, duration, peak RSS, samples.
pub fn summary(a: &SoakArtifact) -> String {
    let status = match a.status {
        SoakStatus::Passed => "passed",
        SoakStatus::Failed => "failed",
    };
    let class = a.failure_classification.map_or("none", |c| c.as_str());
    format!(
        "soak {status} | classification {class} | duration {} | peak RSS {} (one process) | {} samples",
        clock(a.duration_s),
        bytes(a.resource_summary.max_process_rss_kib.saturating_mul(1024)),
        a.resource_summary.sample_count
    )
}

/// `h:mm:ss`, or `12.3s` under a minute.
fn clock(s: f64) -> String {
    if s < 60.0 {
        return format!("{s:.1}s");
    }
    let t = s as u64;
    format!("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
}

/// Bytes in B, KiB, MiB or GiB.
fn bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;
    use tally_schema::artifacts::{SoakFdClasses, SoakProcessSample, SoakProgressSample};

    #[test]
    fn status_line() {
        let p = |rss| SoakProcessSample {
            pid: 1,
            start_ticks: 1,
            rss_kib: rss,
            fd_count: 0,
            fd_classes: SoakFdClasses::default(),
            command: String::new(),
            extra: Map::new(),
        };
        let s = SoakSample {
            elapsed_s: 3725.0,
            process: vec![p(1024), p(2048)],
            gpu: Vec::new(),
            progress: SoakProgressSample {
                count: 2,
                bytes_total: 3 * 1024 * 1024,
                max_mtime: Some(1.0),
                extra: Map::new(),
            },
            extra: Map::new(),
        };
        assert_eq!(
            line(&s, Some(4.31)),
            "soak 1:02:05 | last progress 4.3s ago (3.0 MiB) | RSS 3.0 MiB | 2 processes"
        );
        assert_eq!(
            line(&s, None),
            "soak 1:02:05 | no progress yet | RSS 3.0 MiB | 2 processes"
        );
    }
}
