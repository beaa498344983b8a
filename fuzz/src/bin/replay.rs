//! Runs every committed fuzz input (`corpus/<target>/` and the crash inputs kept in
//! `regressions/<target>/`) through its target's body, on stable: the bounded check `make
//! test` runs. A panic fails the input and names its file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn inputs(root: &Path, target: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for folder in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(folder).join(target)) else {
            continue;
        };
        files.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_file()));
    }
    files.sort();
    files
}

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut passed, mut failed) = (0usize, 0usize);
    for (name, body) in tally_fuzz::TARGETS {
        let files = inputs(root, name);
        if files.is_empty() {
            eprintln!("{name}: no committed input under corpus/{name} or regressions/{name}");
            failed += 1;
            continue;
        }
        for file in &files {
            let data = match std::fs::read(file) {
                Ok(data) => data,
                Err(e) => {
                    eprintln!("FAILED {}: {e}", file.display());
                    failed += 1;
                    continue;
                }
            };
            // Silent while the body runs: the failure is reported below, cut to one line.
            let hook = std::panic::take_hook();
            std::panic::set_hook(Box::new(|_| {}));
            let outcome = std::panic::catch_unwind(|| body(&data));
            std::panic::set_hook(hook);
            match outcome {
                Ok(()) => passed += 1,
                Err(panic) => {
                    let why = panic
                        .downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| panic.downcast_ref::<&str>().copied())
                        .unwrap_or("(no message)");
                    // The first line, cut: an assertion can print whole inputs.
                    let why: String = why.lines().next().unwrap_or("").chars().take(300).collect();
                    eprintln!("FAILED {}: {why}", file.display());
                    failed += 1;
                }
            }
        }
        println!("{name}: {} inputs", files.len());
    }
    println!("fuzz replay: {passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
