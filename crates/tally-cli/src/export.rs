//! `tally export`: stream every scalar of event files as JSON lines or CSV, in constant memory.

use clap::ValueEnum;
use std::io::Write;
use std::path::{Path, PathBuf};
use tally_tfevents::{is_event_file_name, open_event_file, OnCorruption, ScalarEvent};

/// Output format of `tally export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON object per line: run, tag, step, wall_time, value (non-finite values as the
    /// Python-compatible tokens NaN, Infinity, -Infinity).
    Jsonl,
    /// CSV with a header row: run,tag,step,wall_time,value.
    Csv,
}

/// Every event file under `path` (itself, if it is a file), sorted for a stable order.
pub fn event_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_file() {
        return Ok(vec![path.to_owned()]);
    }
    let mut found = Vec::new();
    let mut stack = vec![path.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            let p = entry.path();
            let ty = entry
                .file_type()
                .map_err(|e| format!("{}: {e}", p.display()))?;
            if ty.is_dir() {
                stack.push(p);
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_event_file_name)
            {
                found.push(p);
            }
        }
    }
    found.sort();
    if found.is_empty() {
        return Err(format!(
            "{}: no events.out.tfevents.* file found",
            path.display()
        ));
    }
    Ok(found)
}

fn json_number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        // serde_json prints the shortest representation that round-trips.
        serde_json::Number::from_f64(v)
            .map(|n| n.to_string())
            .unwrap_or_else(|| "null".into())
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn write_row(
    out: &mut dyn Write,
    format: Format,
    run: &str,
    s: &ScalarEvent,
) -> std::io::Result<()> {
    match format {
        Format::Jsonl => writeln!(
            out,
            "{{\"run\":{},\"tag\":{},\"step\":{},\"wall_time\":{},\"value\":{}}}",
            serde_json::Value::from(run),
            serde_json::Value::from(s.tag.as_str()),
            s.step,
            json_number(s.wall_time),
            json_number(s.value)
        ),
        Format::Csv => writeln!(
            out,
            "{},{},{},{},{}",
            csv_field(run),
            csv_field(&s.tag),
            s.step,
            s.wall_time,
            s.value
        ),
    }
}

/// Export every scalar of `paths` to `out`. Rows already written stay written when a later
/// file fails; the error names the file and byte offset.
pub fn run(
    paths: &[PathBuf],
    format: Format,
    policy: OnCorruption,
    out: &mut dyn Write,
) -> Result<(), String> {
    let mut files = Vec::new();
    for p in paths {
        files.extend(event_files(p)?);
    }
    if format == Format::Csv {
        writeln!(out, "run,tag,step,wall_time,value").map_err(|e| e.to_string())?;
    }
    let mut skipped = 0;
    for file in &files {
        let run = file
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let mut scalars = open_event_file(file)
            .map_err(|e| e.to_string())?
            .with_on_corruption(policy)
            .into_scalars();
        while let Some(s) = scalars.read_scalar().map_err(|e| e.to_string())? {
            write_row(out, format, &run, &s).map_err(|e| e.to_string())?;
        }
        skipped += scalars.skipped_records();
    }
    if skipped > 0 {
        eprintln!("tally: skipped {skipped} corrupt record(s)");
    }
    Ok(())
}
