//! `tally trace-stats FILE [--json]`: prints what [`tally_read::trace_stats`] reports on a
//! trace, as aligned tables or JSON.

use super::to_stdout;
use crate::error::CliError;
use crate::error::Exit;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use tally_read::trace_stats::{report, Report, Stats, ITERATION_SPAN};

/// `tally trace-stats`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The trace file (perfetto_offpolicy_timeline.json).
    pub file: PathBuf,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args { file, json } = self;
        to_stdout(|out| run(&file, json, out))
    }
}

/// Print `r` as aligned text or JSON.
pub fn print(r: &Report, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    if json {
        serde_json::to_writer_pretty(&mut *out, r).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "{}: {} events over {:.1} ms{}",
        r.file,
        r.events,
        r.window_ms,
        if r.truncated { " (truncated)" } else { "" }
    )?;
    let w = r
        .spans
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    writeln!(
        out,
        "\n{:<w$} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}   (ms)",
        "span", "n", "mean", "median", "p90", "p95", "p99"
    )?;
    let row = |out: &mut dyn Write, name: &str, s: &Stats| {
        writeln!(
            out,
            "{name:<w$} {:>8} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
            s.n, s.mean_ms, s.median_ms, s.p90_ms, s.p95_ms, s.p99_ms
        )
    };
    for s in &r.spans {
        row(out, &s.name, &s.stats)?;
    }
    writeln!(out)?;
    match &r.iteration_gaps {
        Some(g) => row(out, "iteration gap", g)?,
        None => writeln!(
            out,
            "iteration gap: fewer than two {ITERATION_SPAN} spans in the trace"
        )?,
    }
    writeln!(
        out,
        "\n{:<24} {:>12} {:>8} {:>12} {:>7}",
        "thread", "tid", "spans", "busy ms", "busy"
    )?;
    for t in &r.threads {
        writeln!(
            out,
            "{:<24} {:>12} {:>8} {:>12.1} {:>6.1}%",
            t.name.as_deref().unwrap_or("(unnamed)"),
            t.tid,
            t.spans,
            t.busy_ms,
            t.busy_share * 100.0
        )?;
    }
    Ok(())
}

/// Run `tally trace-stats`: the report on `out`, a truncated file said on stderr.
pub fn run(path: &Path, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let r = report(path)?;
    if r.truncated {
        crate::stderr::line(format_args!(
            "tally: warning: {} ends before its closing ']' (the run did not finish its trace): \
             read the {} complete events",
            path.display(),
            r.events
        ));
    }
    print(&r, json, out)
}
