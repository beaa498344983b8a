//! `tally runs PATH... [--tags GLOB...] [--json|--csv]`: the runs table of
//! [`tally_read::runs`], one row per run, as an aligned table, JSON or CSV.

use super::to_stdout;
use super::Output;
use crate::error::CliError;
use crate::error::Exit;
use crate::stderr;
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use tally_read::columns::ReadOptions;
use tally_read::runs::{runs_table, RunRow};

/// `tally runs`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Event files, or directories searched recursively for `events.out.tfevents.*`.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Summarize the tags matching these globs (`*` matches anything).
    #[arg(long, num_args = 1..)]
    pub tags: Vec<String>,
    /// Skip a run whose steps go back across its files (without a purge marker).
    #[arg(long)]
    pub strict: bool,
    /// The printing: `--json` or `--csv`, else aligned columns.
    #[command(flatten)]
    pub format: super::TableFlags,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args {
            paths,
            tags,
            strict,
            format,
        } = self;
        let output = format.output();
        to_stdout(|out| run(&paths, &tags, strict, output, out))
    }
}

/// Run `tally runs`: the table on `out`; damage and skipped runs said on stderr.
pub fn run(
    paths: &[PathBuf],
    tags: &[String],
    strict: bool,
    output: Output,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let opts = ReadOptions {
        strict,
        skip_unreadable: true,
        readable_part: false,
    };
    let t = runs_table(paths, tags, opts)?;
    stderr::warn(&t.damage);
    stderr::skipped(&t.skipped);
    let flat: Vec<Vec<(String, Value)>> = t.rows.iter().map(RunRow::flat).collect();
    match output {
        Output::Json => {
            let rows: Vec<serde_json::Map<String, Value>> =
                flat.into_iter().map(|r| r.into_iter().collect()).collect();
            serde_json::to_writer_pretty(&mut *out, &rows).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
        Output::Csv => write_csv(&flat, out)?,
        Output::Table => write_table(&t.rows, &flat, tags, out)?,
    }
    Ok(())
}

/// Every column any run has, in first-seen order.
fn columns(flat: &[Vec<(String, Value)>]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut cols = Vec::new();
    for (k, _) in flat.iter().flatten() {
        if seen.insert(k.as_str()) {
            cols.push(k.clone());
        }
    }
    cols
}

/// A cell's text: strings as they are, `null` empty, anything else as JSON.
fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

fn get<'a>(row: &'a [(String, Value)], key: &str) -> Option<&'a Value> {
    row.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn write_csv(flat: &[Vec<(String, Value)>], out: &mut dyn Write) -> Result<(), CliError> {
    let cols = columns(flat);
    let quote = |s: &str| {
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_owned()
        }
    };
    let line: Vec<String> = cols.iter().map(|c| quote(c)).collect();
    writeln!(out, "{}", line.join(","))?;
    for row in flat {
        let line: Vec<String> = cols.iter().map(|c| quote(&cell(get(row, c)))).collect();
        writeln!(out, "{}", line.join(","))?;
    }
    Ok(())
}

/// A number for the table: integers as they are, others to four significant digits.
fn short(v: Option<&Value>) -> String {
    match v {
        Some(Value::Number(n)) if n.is_f64() => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if x != 0.0 && (x.abs() >= 1e5 || x.abs() < 1e-3) {
                format!("{x:.3e}")
            } else {
                format!("{:.4}", x)
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_owned()
            }
        }
        v => cell(v),
    }
}

/// `1h02m`, `3m05s`, `42s`.
fn duration(secs: Option<f64>) -> String {
    let Some(s) = secs.filter(|s| s.is_finite() && *s >= 0.0) else {
        return String::new();
    };
    let s = s as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `run_config.json` keys that differ between any two runs by construction.
const RUN_IDENTITY: [&str; 3] = ["run.log_dir", "run.start_time_utc", "run.wandb.name"];

fn write_table(
    rows: &[RunRow],
    flat: &[Vec<(String, Value)>],
    tags: &[String],
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if rows.is_empty() {
        writeln!(out, "no runs")?;
        return Ok(());
    }
    // Configuration keys whose value differs between runs: what tells runs apart (the keys
    // that name a run's own directory and start differ always and tell nothing).
    let differing: Vec<String> = columns(flat)
        .into_iter()
        .filter(|c| c.starts_with("config.") && !RUN_IDENTITY.contains(&&c["config.".len()..]))
        .filter(|c| {
            let first = get(&flat[0], c);
            flat.iter().any(|r| get(r, c) != first)
        })
        .collect();
    let mut tag_cols: Vec<String> = Vec::new();
    for r in rows {
        for t in &r.tags {
            for fig in ["last", "max"] {
                let c = format!("{}:{fig}", t.tag);
                if !tag_cols.contains(&c) {
                    tag_cols.push(c);
                }
            }
        }
    }
    let mut header = vec!["run", "status", "last step", "points", "duration"]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    header.extend(differing.iter().map(|c| c["config.".len()..].to_owned()));
    header.extend(tag_cols.iter().cloned());
    header.push("health".to_owned());
    let mut lines = vec![header];
    for (r, f) in rows.iter().zip(flat) {
        let mut line = vec![
            r.name.clone(),
            r.status.clone().unwrap_or_else(|| "-".into()),
            r.last_step.map_or(String::new(), |s| s.to_string()),
            r.points.to_string(),
            duration(r.duration),
        ];
        line.extend(differing.iter().map(|c| short(get(f, c))));
        line.extend(tag_cols.iter().map(|c| short(get(f, c))));
        line.push(match get(f, "health") {
            Some(Value::String(found)) => found.clone(),
            _ => "ok".to_owned(),
        });
        lines.push(line);
    }
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for l in &lines {
        let cells: Vec<String> = l
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| match i {
                // Names and words left, numbers right; health last, as long as it needs.
                0 | 1 => format!("{c:<w$}"),
                _ if i + 1 == l.len() => c.clone(),
                _ => format!("{c:>w$}"),
            })
            .collect();
        writeln!(out, "{}", cells.join("  ").trim_end())?;
    }
    if tags.is_empty() {
        writeln!(out, "(--tags GLOB... adds each tag's last and max)")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(duration(Some(42.9)), "42s");
        assert_eq!(duration(Some(185.0)), "3m05s");
        assert_eq!(duration(Some(3720.0)), "1h02m");
        assert_eq!(duration(None), "");
    }

    #[test]
    fn numbers_are_short_and_csv_cells_are_quoted() {
        assert_eq!(short(Some(&Value::from(0.00123456))), "0.0012");
        assert_eq!(short(Some(&Value::from(1234567.0))), "1.235e6");
        assert_eq!(short(Some(&Value::from(3.5))), "3.5");
        let mut out = Vec::new();
        let flat = vec![vec![("config.note".to_owned(), Value::from("a,\"b\""))]];
        write_csv(&flat, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "config.note\n\"a,\"\"b\"\"\"\n"
        );
    }
}
