//! `tally validate PATH...`: detect and validate run summaries, runtime manifests and soak artifacts.
//!
//! A directory stands for its `run_summary.json`; a file named `run_summary.json` is taken for
//! a run summary whatever it holds; anything else is recognised by its members
//! ([`tally_schema::conformance::detect_kind`]). Every violation is printed as
//! `<file>: <json path>: expected <x>, found <y>`, a passing file as one `<file>: OK (...)` line.
//!
//! Only regular files of at most [`MAX_ARTIFACT_BYTES`] are read, checked before anything is
//! read, so a FIFO or a device never blocks and parsing memory stays bounded
//! (`docs/contract/consumers.md` "validate reads bounded input").

use super::to_stdout;
use crate::error::CliError;
use crate::error::Exit;
use serde_json::Value;
use std::fs::{File, Metadata};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use tally_schema::artifacts::ArtifactKind;
use tally_schema::conformance::{self, Violation};

/// `tally validate`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files, or run directories.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Check standalone runtime manifests as a completed run's (lifecycle members required).
    #[arg(long)]
    pub completed: bool,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args { paths, completed } = self;
        to_stdout(|out| run(&paths, completed, out))
    }
}

// The file a directory argument stands for, and the largest file `validate` reads: facts of
// the crates that write and check artefacts, which `tally soak` needs too.
pub use tally::run::RUN_SUMMARY_FILE;
pub use tally_schema::conformance::MAX_ARTIFACT_BYTES;

/// Validate every path and print the outcome; `Err` (exit 1) when any file failed.
///
/// `completed` checks standalone runtime manifests as a completed run's (lifecycle members
/// required); without it they are checked as an early-failure manifest, the validator's
/// default (`docs/contract/manifest-and-soak.md`). Manifests inside a run summary or soak artifact follow the summary's status.
pub fn run(paths: &[PathBuf], completed: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let mut failed = 0usize;
    for arg in paths {
        let file = if arg.is_dir() {
            arg.join(RUN_SUMMARY_FILE)
        } else {
            arg.clone()
        };
        let (status, lines) = check_file(&file, completed);
        if !status {
            failed += 1;
        }
        for line in lines {
            writeln!(out, "{}: {line}", file.display())?;
        }
    }
    if failed == 0 {
        Ok(())
    } else {
        Err(CliError::Refused(format!(
            "{failed} of {} file{} failed validation",
            paths.len(),
            if paths.len() == 1 { "" } else { "s" }
        )))
    }
}

/// Validate one file: whether it passed, and the lines to print after `<file>: `.
fn check_file(file: &Path, completed: bool) -> (bool, Vec<String>) {
    let text = match read_bounded(file) {
        Ok(t) => t,
        Err(found) => {
            let what = if file.file_name() == Some(RUN_SUMMARY_FILE.as_ref())
                && file.parent().is_some_and(Path::is_dir)
                && !file.exists()
            {
                "a run directory holding run_summary.json"
            } else {
                "a readable JSON file"
            };
            return (false, vec![format!("$: expected {what}, found {found}")]);
        }
    };
    let v: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            let hint = if text.contains("NaN") || text.contains("Infinity") {
                " (NaN and Infinity are not JSON: a producer must write finite numbers)"
            } else {
                ""
            };
            return (
                false,
                vec![format!("$: expected valid JSON{hint}, found {e}")],
            );
        }
    };
    let kind = if file.file_name() == Some(RUN_SUMMARY_FILE.as_ref()) {
        Some(ArtifactKind::RunSummary)
    } else {
        conformance::detect_kind(&v)
    };
    let violations: Vec<Violation> = match kind {
        Some(ArtifactKind::RuntimeManifest) => {
            conformance::validate_runtime_manifest(&v, completed)
        }
        Some(k) => conformance::validate_as(k, &v),
        None => conformance::validate(&v).violations,
    };
    if violations.is_empty() {
        let kind = kind.expect("a document of no kind has a violation");
        (true, vec![format!("OK ({})", ok_note(kind, &v, completed))])
    } else {
        (false, violations.iter().map(Violation::to_string).collect())
    }
}

/// What an OK line says about the file: its kind, versions and outcome.
fn ok_note(kind: ArtifactKind, v: &Value, completed: bool) -> String {
    let s = |key: &str| v.get(key).and_then(Value::as_str).unwrap_or("?").to_owned();
    match kind {
        ArtifactKind::RunSummary => {
            let manifest = if v.get("runtime_manifest").is_some_and(|m| !m.is_null()) {
                ", runtime manifest v1"
            } else {
                ""
            };
            format!(
                "run summary, metric schema v1{manifest}, status {}",
                s("status")
            )
        }
        ArtifactKind::RuntimeManifest => format!(
            "runtime manifest v1, checked as {}",
            if completed {
                "a completed run's"
            } else {
                "an early-failure manifest (--completed requires the lifecycle members)"
            }
        ),
        ArtifactKind::SoakArtifact => match v.get("failure_classification").and_then(Value::as_str)
        {
            Some(c) => format!(
                "soak artifact 0.3.0, status {}, classification {c}",
                s("status")
            ),
            None => format!("soak artifact 0.3.0, status {}", s("status")),
        },
    }
}

/// The text of `file` if it is a regular file of at most [`MAX_ARTIFACT_BYTES`]; otherwise
/// what was found instead. The kind and size are checked before opening (opening a FIFO
/// blocks), again on the opened handle, and the read stops one byte past the cap in case the
/// file grew in between.
fn read_bounded(file: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(file).map_err(|e| e.to_string())?;
    check_kind_and_size(&meta)?;
    let f = File::open(file).map_err(|e| e.to_string())?;
    check_kind_and_size(&f.metadata().map_err(|e| e.to_string())?)?;
    let mut bytes = Vec::new();
    f.take(MAX_ARTIFACT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_ARTIFACT_BYTES {
        return Err(over_cap(bytes.len() as u64, "and still growing"));
    }
    String::from_utf8(bytes).map_err(|e| format!("bytes that are not UTF-8 ({e})"))
}

fn check_kind_and_size(meta: &Metadata) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    let ty = meta.file_type();
    let kind = if ty.is_file() {
        None
    } else if ty.is_dir() {
        Some("a directory")
    } else if ty.is_fifo() {
        Some("a FIFO")
    } else if ty.is_char_device() {
        Some("a character device")
    } else if ty.is_block_device() {
        Some("a block device")
    } else if ty.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    };
    if let Some(kind) = kind {
        return Err(format!("{kind} (expected a regular file)"));
    }
    if meta.len() > MAX_ARTIFACT_BYTES {
        return Err(over_cap(meta.len(), ""));
    }
    Ok(())
}

fn over_cap(len: u64, note: &str) -> String {
    let note = if note.is_empty() {
        String::new()
    } else {
        format!(", {note}")
    };
    format!(
        "{len} bytes{note} (expected at most {MAX_ARTIFACT_BYTES} bytes: artefacts are small, and the cap bounds the memory parsing takes)"
    )
}
