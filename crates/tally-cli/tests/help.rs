//! `tally --help` and `tally demo --help` list what exists, and only that: every command the
//! help names runs, every algorithm the demo runs is named, and no command is promised.

#[path = "support/run.rs"]
mod run;
use run::tally;

fn stdout(args: &[&str]) -> String {
    let out = tally(args);
    assert!(out.status.success(), "tally {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The command names of the "Commands:" section of `tally --help`.
fn listed_commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn top_level_help_names_only_commands_that_exist() {
    let help = stdout(&["--help"]);
    let listed = listed_commands(&help);
    assert!(listed.len() >= 8, "{help}");
    for cmd in listed.iter().filter(|c| *c != "help") {
        let out = tally(&[cmd, "--help"]);
        assert!(out.status.success(), "tally {cmd} --help failed: {out:?}");
    }
    // The description above the list promises no command the list lacks.
    let about = help.split("Usage:").next().unwrap();
    assert!(!about.contains("later"), "{help}");
    for word in ["soak", "sync", "trace-stats", "diagnose", "demo", "watch"] {
        let named = about
            .split(|c: char| !(c.is_alphanumeric() || c == '-'))
            .any(|w| w == word);
        if named {
            assert!(
                listed.iter().any(|c| c == word),
                "help names '{word}' but it is not a command: {help}"
            );
        }
    }
}

#[test]
fn demo_help_names_every_algorithm_the_demo_runs() {
    let help = stdout(&["demo", "--help"]);
    let algo_line = help
        .lines()
        .skip_while(|l| !l.contains("--algo"))
        .nth(1)
        .unwrap_or_else(|| panic!("no --algo help: {help}"))
        .to_owned();
    let named: Vec<&str> = algo_line
        .trim()
        .trim_start_matches("Algorithm:")
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty() && *w != "or")
        .collect();
    assert!(named.contains(&"grpo"), "{algo_line}");
    // Even with no logger a run has its directory: keep it out of the source tree.
    let tmp = tempfile::tempdir().unwrap();
    let log_root = format!("training.log_root={}", tmp.path().display());
    for algo in tally_schema::ALGOS.iter().map(|a| a.name) {
        let out = tally(&[
            "demo",
            "--algo",
            algo,
            "--iterations",
            "2",
            "--num-envs",
            "4",
            "--panel",
            "off",
            "training.logger=none",
            &log_root,
        ]);
        let runs = out.status.success();
        assert_eq!(
            runs,
            named.contains(&algo),
            "--algo {algo}: runs = {runs}, named in help = {}: {}",
            named.contains(&algo),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn demo_help_names_every_override_the_demo_accepts() {
    let help = stdout(&["demo", "--help"]);
    for key in tally_demo::KNOWN_OVERRIDES {
        assert!(help.contains(key), "{key} missing from demo --help: {help}");
    }
    assert!(help.contains("--slow"), "{help}");
}
