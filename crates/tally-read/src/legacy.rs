//! The one gate of a pre-schema run read through the legacy map, shared by
//! `extract --legacy-unversioned` and `export --migrate-legacy`: what the run must be (no schema
//! stamp, no canonical tag, at least one recognised legacy tag), and where the profile that
//! decides the profile-split name comes from (`docs/contract/consumers.md` "Legacy runs").

use crate::error::Error;
use crate::meta::RunConfigFacts;
use crate::tails::{is_canonical, is_legacy};
use serde_json::Value;
use std::path::Path;
use tally_schema::Profile;

/// The command asking, for its messages: the flag that reads a run through the legacy map and
/// what to do instead when the run is not a pre-schema run.
#[derive(Debug, Clone, Copy)]
pub struct Asker {
    /// The flag, as the command line spells it (`--legacy-unversioned`).
    pub flag: &'static str,
    /// The way out for a run that is not pre-schema (`drop the flag`).
    pub way_out: &'static str,
}

/// Refuses a run that is not a pre-schema run: stamped with `metric_schema_version`, holding a
/// canonical tag (a canonical/legacy mix, or an unversioned modern run), or holding no
/// recognised legacy tag. `file` is the run's newest event file, `tags` every scalar tag it has.
pub fn require_pre_schema(
    asker: Asker,
    file: &Path,
    summary_path: &Path,
    summary: Option<&Value>,
    tags: &[&str],
) -> Result<(), Error> {
    let Asker { flag, way_out } = asker;
    if let Some(v) = summary.and_then(|s| s.get("metric_schema_version")) {
        return Err(Error::Refused(format!(
            "{}: the run is stamped metric_schema_version {v}: {flag} is only for pre-schema runs; {way_out}",
            summary_path.display()
        )));
    }
    let legacy = tags.iter().find(|t| is_legacy(t));
    if let Some(t) = tags.iter().find(|t| is_canonical(t)) {
        let mix = legacy.map_or(String::new(), |old| {
            format!(" beside legacy tag '{old}' (a canonical/legacy mix fails closed)")
        });
        return Err(Error::Refused(format!(
            "{}: canonical tag '{t}' found{mix}: {flag} is never a fallback for an unversioned \
             modern run; {way_out}",
            file.display()
        )));
    }
    if legacy.is_none() {
        return Err(Error::Refused(format!(
            "{}: no recognised legacy tag: not a pre-schema run; {way_out}",
            file.display()
        )));
    }
    Ok(())
}

/// Where a legacy read's profile came from, for the note saying which one was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileSource {
    /// The run's `run_config.json` (`run.logger.profile`, else `run.algo`).
    RunConfig,
    /// The user, by `--profile`.
    Named,
}

impl ProfileSource {
    /// How the note says it.
    pub fn describe(self) -> &'static str {
        match self {
            ProfileSource::RunConfig => "from run_config.json",
            ProfileSource::Named => "named by --profile",
        }
    }
}

/// The profile of a legacy read: the run's (`facts`, from `config_path`), else the one the user
/// `named`; `None` when neither says. A named profile contradicting the run's is refused.
pub fn known_profile(
    config_path: &Path,
    facts: &RunConfigFacts,
    named: Option<Profile>,
) -> Result<Option<(Profile, ProfileSource)>, Error> {
    match (facts.profile(), named) {
        (Some(own), Some(named)) if own != named => Err(Error::Refused(format!(
            "{}: the run's profile is {own}, but --profile names {named}: drop --profile, or \
             export this run on its own",
            config_path.display()
        ))),
        (Some(own), _) => Ok(Some((own, ProfileSource::RunConfig))),
        (None, Some(named)) => Ok(Some((named, ProfileSource::Named))),
        (None, None) => Ok(None),
    }
}

/// The profile a legacy read uses, for `extract --legacy-unversioned` and `export
/// --migrate-legacy` alike: the run's own (`run_config.json`), else the one `--profile` names;
/// never guessed (`timing/learner_incremental_h2d_ms` means different things for SAC and APPO),
/// so without either the run `dir` is refused, asking for `--profile` and listing the profiles.
pub fn legacy_profile(
    dir: &Path,
    config_path: &Path,
    facts: &RunConfigFacts,
    named: Option<Profile>,
) -> Result<(Profile, ProfileSource), Error> {
    if let Some(known) = known_profile(config_path, facts, named)? {
        return Ok(known);
    }
    let config = if config_path.exists() {
        format!(
            "{} names no logger profile or known algorithm",
            config_path.display()
        )
    } else {
        format!("no {}", config_path.display())
    };
    Err(Error::Refused(format!(
        "{}: the run's profile is unknown ({config}), and it decides what \
         timing/learner_incremental_h2d_ms means: name it with --profile NAME ({})",
        dir.display(),
        profile_names()
    )))
}

/// Every profile's name, for messages: `sac_family, appo, onpolicy, rft`.
pub fn profile_names() -> String {
    Profile::ALL.map(Profile::as_str).join(", ")
}
