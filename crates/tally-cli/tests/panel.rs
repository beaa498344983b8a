//! `tally demo` output modes (`docs/contract/panel.md`, plain fallback): `--panel off` and `auto` off a terminal print plain
//! summary lines with no escape codes; the run directory is the last line.

use std::process::Command;

fn demo(args: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .arg("demo")
        .args(args)
        .arg(format!("training.log_root={}", tmp.path().display()))
        .env("TERM", "xterm-256color")
        .output()
        .unwrap();
    (out, tmp)
}

fn check_plain(out: &std::process::Output, iterations: u64) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Not a terminal / --panel off: no escape codes at all.
    assert!(!out.stdout.contains(&0x1b), "escape code in plain output");
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.last().unwrap().starts_with("run: "), "{stdout}");
    let summary = lines[lines.len() - 2];
    // The one-line summary: iteration, Steps/s, mean reward, top learner phases.
    for part in [
        &format!("iter {iterations}/{iterations}") as &str,
        "Steps/s ",
        "Reward ",
        "Learning ",
        "Avg 2s (n=",
    ] {
        assert!(summary.contains(part), "{part} not in {summary:?}");
    }
}

#[test]
fn panel_off_prints_plain_summaries_without_escape_codes() {
    let (out, _tmp) = demo(&["--iterations", "150", "--panel", "off"]);
    check_plain(&out, 150);
}

#[test]
fn auto_mode_off_a_terminal_falls_back_to_plain_lines() {
    // auto = panel when stdout is a TTY and TERM is not dumb, else plain.
    let (out, _tmp) = demo(&["--algo", "appo", "--iterations", "150"]);
    check_plain(&out, 150);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains("Replay Batch Wait"), "{stdout}");
}

#[test]
fn warm_up_progress_is_not_printed_line_by_line() {
    // Status lines show, but warm-up progress does not flood a log file.
    let (out, _tmp) = demo(&["--iterations", "50", "--panel", "off"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let fills = stdout
        .lines()
        .filter(|l| l.starts_with("Buffer fill"))
        .count();
    assert!(fills <= 2, "{fills} buffer-fill lines:\n{stdout}");
}
