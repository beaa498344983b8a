//! Running the `tally` binary from the CLI tests: its output, and short demo runs to read.
// Each test binary uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `tally ARGS...`, waited for.
pub fn tally(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(args)
        .output()
        .unwrap()
}

/// A short demo run with the panel off under `root`; returns its run directory.
pub fn demo(root: &Path, args: &[&str]) -> PathBuf {
    let log_root = format!("training.log_root={}", root.display());
    let mut all = vec!["demo", "--panel", "off"];
    all.extend_from_slice(args);
    all.push(&log_root);
    let out = tally(&all);
    assert!(
        out.status.success(),
        "demo {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    PathBuf::from(
        last.strip_prefix("run: ")
            .expect("demo prints 'run: <dir>'"),
    )
}
