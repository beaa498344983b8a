//! `tally health`: every finding of the health rules on every run under the paths, as a table
//! or JSON; exit 1 when any rule fires (`docs/contract/health.md` "tally health").

use crate::error::{CliError, Exit};
use std::io::Write;
use std::path::{Path, PathBuf};
use tally::health::{apply_rules_file, RuleSet};
use tally_read::health::{runs_json, RunHealth};

/// `tally health`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Event files, run directories, or folders of runs.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print JSON: {"healthy", "runs": [{"run", "dir", "live", "values", "findings":
    /// [{"rule", "tag", "first_step", "last_step", "count", "last_value", "message"}]}]}.
    #[arg(long)]
    pub json: bool,
    /// A JSON rules file: {"off": [rule names], "rules": [{"kind", "tag", parameters}]}.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Start from no rule (only the rules file's).
    #[arg(long)]
    pub no_defaults: bool,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let rules = rules(self.rules.as_deref(), self.no_defaults)?;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        let exit = run(&self.paths, &rules, self.json, &mut out);
        let flushed = out.flush().map_err(CliError::Output);
        match (exit, flushed) {
            (Err(e), _) if e.is_closed_pipe() => Ok(Exit::Success),
            (Err(e), _) | (Ok(_), Err(e)) => Err(e),
            (Ok(exit), Ok(())) => Ok(exit),
        }
    }
}

/// The rules `--rules FILE` and `--no-defaults` ask for; a bad file is a usage error (exit 2).
pub fn rules(file: Option<&Path>, no_defaults: bool) -> Result<RuleSet, CliError> {
    let mut rules = if no_defaults {
        RuleSet::empty()
    } else {
        RuleSet::defaults()
    };
    if let Some(file) = file {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file)
            .map_err(|e| CliError::Usage(format!("{name}: cannot read the rules file: {e}")))?;
        apply_rules_file(&name, &text, &mut rules).map_err(|e| CliError::Usage(e.to_string()))?;
    }
    Ok(rules)
}

/// Checks the runs under `paths` and prints what fired: exit 1 when anything did, 0 when
/// nothing did; a path or run that cannot be read is bad input (exit 2).
pub fn run(
    paths: &[PathBuf],
    rules: &RuleSet,
    json: bool,
    out: &mut dyn Write,
) -> Result<Exit, CliError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut skipped = crate::stderr::StderrObserver::new(None);
    let runs = tally_read::health::check_paths(paths, rules, now, &mut skipped)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    for r in &runs {
        crate::stderr::warn(&r.damage);
    }
    if json {
        let text =
            serde_json::to_string_pretty(&runs_json(&runs)).map_err(std::io::Error::other)?;
        writeln!(out, "{text}")?;
    } else {
        print_table(&runs, out)?;
    }
    let fired = runs.iter().any(|r| !r.findings.is_empty());
    Ok(if fired { Exit::Findings } else { Exit::Success })
}

fn print_table(runs: &[RunHealth], out: &mut dyn Write) -> std::io::Result<()> {
    let rows: Vec<[String; 6]> = runs
        .iter()
        .flat_map(|r| {
            r.findings.iter().map(|f| {
                [
                    r.run.clone(),
                    f.rule.as_str().to_owned(),
                    if f.tag.is_empty() {
                        "-".into()
                    } else {
                        f.tag.clone()
                    },
                    f.first_step.to_string(),
                    f.last_step.to_string(),
                    f.count.to_string(),
                ]
            })
        })
        .collect();
    let messages: Vec<&str> = runs
        .iter()
        .flat_map(|r| r.findings.iter().map(|f| f.message.as_str()))
        .collect();
    let healthy = runs.iter().filter(|r| r.findings.is_empty()).count();
    if rows.is_empty() {
        return writeln!(out, "healthy: no rule fired on {} run(s)", runs.len());
    }
    let head = ["run", "rule", "tag", "first", "last", "count"];
    let mut widths = head.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            // Steps and counts right-aligned.
            if i >= 3 {
                s.push_str(&format!("{c:>w$}  "));
            } else {
                s.push_str(&format!("{c:<w$}  "));
            }
        }
        s
    };
    writeln!(out, "{}message", line(&head))?;
    for (row, message) in rows.iter().zip(messages) {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        writeln!(out, "{}{message}", line(&cells))?;
    }
    writeln!(
        out,
        "{} finding(s) in {} of {} run(s)",
        rows.len(),
        runs.len() - healthy,
        runs.len()
    )
}
