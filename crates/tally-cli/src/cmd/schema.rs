//! `tally schema [RUN_DIR]`: print the canonical metric schema v1 as a table, JSON, or the
//! generated `docs/metrics.md` markdown; with a run directory, also that run's user metrics
//! (from its `run_config.json`, docs/contract/schema.md "User metrics").

use super::to_stdout;
use crate::error::CliError;
use crate::error::Exit;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use tally_read::meta::read_json;
use tally_schema::artifacts::UserMetric;

/// `tally schema`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A run directory: also print the user metrics its run_config.json lists.
    pub run_dir: Option<PathBuf>,
    /// Print the registry as JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the generated docs/metrics.md.
    #[arg(long)]
    pub markdown: bool,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args {
            run_dir,
            json,
            markdown,
        } = self;
        let rendering = if json {
            Rendering::Json
        } else if markdown {
            Rendering::Markdown
        } else {
            Rendering::Table
        };
        to_stdout(|out| run(rendering, run_dir.as_deref(), out))
    }
}

/// Which rendering of the schema to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendering {
    /// The aligned table (the default).
    Table,
    /// The registry as JSON.
    Json,
    /// The generated `docs/metrics.md`.
    Markdown,
}

/// The user metrics `run_config.json` of `dir` lists (none for a run without any).
fn user_metrics(dir: &Path) -> Result<Vec<UserMetric>, CliError> {
    if !dir.is_dir() {
        return Err(CliError::Refused(format!(
            "{} is not a run directory",
            dir.display()
        )));
    }
    let path = dir.join("run_config.json");
    let Some(config) = read_json(&path)? else {
        return Err(CliError::Refused(format!(
            "{}: missing: the run directory has no run_config.json",
            path.display()
        )));
    };
    let listed = config
        .get("user_metrics")
        .cloned()
        .unwrap_or(serde_json::Value::Array(Vec::new()));
    serde_json::from_value(listed).map_err(|source| tally_read::Error::Json { path, source }.into())
}

fn user_table(dir: &Path, metrics: &[UserMetric]) -> String {
    let mut s = format!("\nUser metrics of {}:\n", dir.display());
    if metrics.is_empty() {
        s.push_str("  (none)\n");
        return s;
    }
    let width = metrics.iter().map(|m| m.tag.len()).max().unwrap_or(0);
    for m in metrics {
        s.push_str(&format!(
            "  {:<width$}  unit {:<8} reduction {:<4} summary {:<4}{}\n",
            m.tag,
            m.unit,
            m.reduction.as_str(),
            m.summary.as_str(),
            m.label
                .as_deref()
                .map(|l| format!("  label {l}"))
                .unwrap_or_default(),
        ));
    }
    s
}

/// Print the schema in `rendering` to `out`; with `run_dir`, also that run's user metrics.
pub fn run(
    rendering: Rendering,
    run_dir: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let text = match (rendering, run_dir) {
        (Rendering::Table, None) => tally_schema::render::to_table(),
        (Rendering::Json, None) => tally_schema::render::to_json(),
        (Rendering::Markdown, None) => tally_schema::render::to_markdown(),
        (Rendering::Table, Some(dir)) => {
            let user = user_metrics(dir)?;
            tally_schema::render::to_table() + &user_table(dir, &user)
        }
        (Rendering::Json, Some(dir)) => {
            let canonical: serde_json::Value =
                serde_json::from_str(&tally_schema::render::to_json())
                    .expect("the schema document is JSON");
            let doc =
                serde_json::json!({"canonical": canonical, "user_metrics": user_metrics(dir)?});
            serde_json::to_string_pretty(&doc).expect("serialisable") + "\n"
        }
        (Rendering::Markdown, Some(_)) => {
            return Err(CliError::Usage(
                "--markdown prints the generated docs/metrics.md; it takes no RUN_DIR".into(),
            ))
        }
    };
    out.write_all(text.as_bytes())?;
    Ok(())
}
