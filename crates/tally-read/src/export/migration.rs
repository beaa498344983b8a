//! `export --migrate-legacy`: which profile a pre-schema run's legacy tags are migrated with,
//! for a single-file export and a dataset alike.

use super::options::Options;
use crate::error::Error;
use crate::legacy::{legacy_profile, require_pre_schema, Asker};
use crate::meta::{read_json, RunConfigFacts};
use crate::observer::Observer;
use crate::scalars::RunScalars;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tally_schema::Profile;

/// `export --migrate-legacy`, for the legacy gate's messages.
const MIGRATE: Asker = Asker {
    flag: "--migrate-legacy",
    way_out: "export it without --migrate-legacy",
};

/// The profile a run's legacy tags are migrated with, once the run passed extract's legacy
/// gate (read through once for its tags); the profile comes from its `run_config.json` or
/// `--profile`, never assumed, and the observer is told which.
pub(super) fn migration_profile(
    dir: &Path,
    files: &[PathBuf],
    opts: &Options,
    observer: &mut dyn Observer,
) -> Result<Profile, Error> {
    let summary_path = dir.join("run_summary.json");
    let summary = read_json(&summary_path)?;
    let mut scalars = RunScalars::new(files.to_vec(), opts.policy).strict(opts.strict);
    let mut seen = Vec::new();
    let mut tags = BTreeSet::new();
    while scalars.advance()?.is_some() {
        let Some(s) = scalars.current() else {
            continue;
        };
        if let Some(id) = s.tag_id {
            if seen.len() <= id {
                seen.resize(id + 1, false);
            }
            if std::mem::replace(&mut seen[id], true) {
                continue;
            }
        }
        if !tags.contains(s.tag) {
            tags.insert(s.tag.to_owned());
        }
    }
    let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
    // Messages about the run as a whole name its newest file, as extract's do.
    let file = files.last().map_or(dir, PathBuf::as_path);
    require_pre_schema(MIGRATE, file, &summary_path, summary.as_ref(), &tags)?;
    let config_path = dir.join("run_config.json");
    let facts = RunConfigFacts::from_config(read_json(&config_path)?.as_ref());
    let (profile, source) = legacy_profile(dir, &config_path, &facts, opts.profile)?;
    observer.note(&format!(
        "{}: migrating legacy tags with profile {profile} ({})",
        dir.display(),
        source.describe()
    ));
    Ok(profile)
}
