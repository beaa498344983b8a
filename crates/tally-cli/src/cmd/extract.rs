//! `tally extract`: prints what [`tally_read::extract`] found, as aligned text or JSON.

use super::to_stdout;
use crate::error::CliError;
use crate::error::Exit;
use crate::stderr;
use crate::stderr::StderrObserver;
use serde_json::{Map, Value};
use std::io::Write;
use std::path::PathBuf;
use tally_read::damage::damage_json;
use tally_read::extract::Extraction;

/// `tally extract`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run directory (its event files and run_summary.json).
    pub dir: PathBuf,
    /// How many trailing values each figure averages.
    #[arg(long, default_value_t = 20)]
    pub last: usize,
    /// Print JSON instead of aligned text.
    #[arg(long)]
    pub json: bool,
    /// Read a pre-schema run through the legacy map (never a fallback for modern runs).
    #[arg(long)]
    pub legacy_unversioned: bool,
    /// The profile (sac_family, appo, onpolicy, rft) of a pre-schema run whose
    /// run_config.json names none; it decides what timing/learner_incremental_h2d_ms means.
    #[arg(long, value_name = "NAME", requires = "legacy_unversioned",
          value_parser = |s: &str| s.parse::<tally::Profile>())]
    pub profile: Option<tally::Profile>,
    /// Extract a run whose summary says completed although its event files end early
    /// (the damage is still reported).
    #[arg(long)]
    pub allow_truncated: bool,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        let Args {
            dir,
            last,
            json,
            legacy_unversioned,
            profile,
            allow_truncated,
        } = self;
        let mode = if legacy_unversioned {
            tally_read::extract::Mode::LegacyUnversioned(profile)
        } else {
            tally_read::extract::Mode::Versioned
        };
        let mut notes = StderrObserver::new(None);
        let extraction =
            tally_read::extract::extract(&dir, last, mode, allow_truncated, &mut notes)?;
        stderr::warn(&extraction.damage);
        to_stdout(|out| Ok(print(&extraction, json, out)?))
    }
}

/// Print figures as aligned text or JSON (with a `damage` list: file, offset, kind, detail).
pub fn print(extraction: &Extraction, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let figures = &extraction.figures;
    if json {
        let mut map: Map<String, Value> = figures
            .iter()
            .map(|(k, v)| {
                (
                    (*k).to_owned(),
                    v.and_then(serde_json::Number::from_f64)
                        .map_or(Value::Null, Value::Number),
                )
            })
            .collect();
        map.insert("damage".into(), damage_json(&extraction.damage));
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default()
        )
    } else {
        for (label, v) in figures {
            match v {
                Some(v) => writeln!(out, "{label:40} {v:10.3}")?,
                None => writeln!(out, "{label:40} {:>10}", "missing")?,
            }
        }
        Ok(())
    }
}
