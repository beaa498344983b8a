//! The README's demo command (`cargo run --release -p tally-cli --no-default-features -- demo`)
//! compiles no query engine, no HTTP server and at most 150 packages: a newcomer's first build stays minutes,
//! not the quarter hour the SQL engine costs (BENCHMARKS.md "Building").

use std::collections::BTreeSet;
use std::process::Command;

/// The packages (name and version) `cargo build -p tally-cli` compiles with `features`.
fn packages(features: &[&str]) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-q",
            "--offline",
            "-p",
            "tally-cli",
            "-e",
            "normal,build",
        ])
        .args(["--prefix", "none"])
        .args(features)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_end_matches(" (*)").to_string())
        .collect()
}

fn named(set: &BTreeSet<String>, name: &str) -> bool {
    set.iter().any(|p| p.split(' ').next() == Some(name))
}

#[test]
fn the_demo_build_compiles_no_query_engine_and_at_most_150_packages() {
    let lean = packages(&["--no-default-features"]);
    for heavy in [
        "tally-sql",
        "datafusion",
        "arrow",
        "tokio",
        "tally-board",
        "hyper",
    ] {
        assert!(!named(&lean, heavy), "{heavy} is in the demo's build");
    }
    assert!(
        lean.len() <= 150,
        "{} packages in the demo's build",
        lean.len()
    );
    // The default build (cargo install, the wheel) has the engine: the check above looks at
    // the right tree.
    let full = packages(&[]);
    assert!(named(&full, "datafusion") && full.len() > lean.len());
}
