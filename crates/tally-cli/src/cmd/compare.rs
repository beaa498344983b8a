//! `tally compare PATH... --metric TAG [--by KEY...] [--at final|auc|STEP] [--json]`: the seed
//! statistics of [`tally_read::compare`], one line per group, best mean first.

use super::to_stdout;
use crate::error::CliError;
use crate::error::Exit;
use crate::stderr;
use std::io::Write;
use std::path::PathBuf;
use tally_read::compare::{absent_message, compare, Settings};

/// `tally compare`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Event files, or directories searched recursively for `events.out.tfevents.*`.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The tag each run is scored on.
    #[arg(long)]
    pub metric: String,
    /// Group by these configuration keys (`config.lr`, `run.algo`; `tally runs --json`
    /// lists a run's keys); none: all runs are one group.
    #[arg(long, num_args = 1..)]
    pub by: Vec<String>,
    /// The score: final (mean of the last 10 % of steps), auc (mean height) or a step.
    #[arg(long, default_value = "final", value_parser = |s: &str| s.parse::<tally_read::compare::At>())]
    pub at: tally_read::compare::At,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = 50_000)]
    pub reps: usize,
    /// The bootstrap's seed (numpy RandomState's stream).
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// Print the groups as JSON (with their runs, scores and aligned curves).
    #[arg(long)]
    pub json: bool,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args {
            paths,
            metric,
            by,
            at,
            reps,
            seed,
            json,
        } = self;
        let s = tally_read::compare::Settings {
            by,
            at,
            reps,
            seed,
            ..tally_read::compare::Settings::new(metric)
        };
        to_stdout(|out| run(&paths, &s, json, out))
    }
}

/// Run `tally compare`: the groups on `out`; damage, runs left out and `--by` keys no run has
/// said on stderr, as `tally runs` says them.
pub fn run(
    paths: &[PathBuf],
    s: &Settings,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let c = compare(paths, s)?;
    stderr::warn(&c.damage);
    stderr::skipped(&c.skipped);
    for (run, why) in &c.unscored {
        stderr::line(format_args!("tally: warning: {run}: not scored: {why}"));
    }
    for key in &c.absent {
        stderr::line(format_args!("tally: warning: {}", absent_message(key)));
    }
    if json {
        let groups: Vec<serde_json::Value> = c.groups.iter().map(|g| g.to_json(&s.by)).collect();
        serde_json::to_writer_pretty(&mut *out, &groups).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(());
    }
    if c.groups.is_empty() {
        writeln!(out, "no run has a score of {}", s.metric)?;
        return Ok(());
    }
    let label = |g: &tally_read::compare::Group| -> String {
        let parts: Vec<String> =
            s.by.iter()
                .zip(&g.key)
                .filter(|(k, _)| !c.absent.contains(k))
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
        if parts.is_empty() {
            return "all runs".into();
        }
        parts.join(" ")
    };
    let w = c
        .groups
        .iter()
        .map(|g| label(g).len())
        .max()
        .unwrap_or(5)
        .max(5);
    writeln!(
        out,
        "{} at {}: 95 % percentile bootstrap over runs, {} resamples, seed {}",
        s.metric, s.at, s.reps, s.seed
    )?;
    writeln!(
        out,
        "{:<w$}  {:>3}  {:>10}  {:>23}  {:>10}  {:>10}  {:>23}",
        "group", "n", "mean", "95% CI", "std", "IQM", "95% CI"
    )?;
    for g in &c.groups {
        let ci = |e: &tally_read::compare::Estimate| match g.scores.len() {
            1 => "none (1 run)".to_owned(),
            _ => format!("[{:.4}, {:.4}]", e.low, e.high),
        };
        writeln!(
            out,
            "{:<w$}  {:>3}  {:>10.4}  {:>23}  {:>10}  {:>10.4}  {:>23}",
            label(g),
            g.scores.len(),
            g.mean.value,
            ci(&g.mean),
            g.std.map_or("-".into(), |v| format!("{v:.4}")),
            g.iqm.value,
            ci(&g.iqm)
        )?;
    }
    Ok(())
}
