//! `tally demo --slow PHASE=FACTOR`: factors on the simulated phase durations, so a demo run
//! can be made learner-bound or collector-bound on purpose (the runs `tally diagnose` is tested
//! on; `docs/contract/consumers.md` "Reading a bottleneck").

use crate::error::Error;
use std::sync::OnceLock;
use std::time::Duration;
use tally::schema::{Input, MetricSpec, Role, METRICS};
use tally::timeline::{collector_specs, learner_phases};
use tally::Profile;

/// The largest factor accepted: a demo iteration stays bounded.
const MAX_FACTOR: f64 = 1000.0;

/// Timeline phases no demo simulates: waits, hand-overs and totals that come out of the
/// simulated phases, and an alternative split of Env Step.
const NOT_SIMULATED: [&str; 6] = [
    "collector_wait",
    "collector_release",
    "inference_request",
    "learner_action_wait",
    "env_step_action_backend",
    "rollout",
];

/// The phases each profile's demo simulates, by their timeline key, in timeline order:
/// `all`, the learner phases (each followed by its nested parts), the other nested learner
/// diagnostics, then the collector rows; a phase added to a profile's timeline is taken unless
/// [`NOT_SIMULATED`] names it. `all` scales every phase (a heavier task at the same balance); a
/// parent (`inference`, `env_step`) scales all its parts; a part scales itself alone.
pub fn slow_phases(profile: Profile) -> &'static [&'static str] {
    static CACHE: OnceLock<Vec<Vec<&'static str>>> = OnceLock::new();
    let all = CACHE.get_or_init(|| Profile::ALL.iter().map(|p| simulated(*p)).collect());
    let slot = Profile::ALL.iter().position(|p| *p == profile);
    slot.map_or(&[], |i| &all[i])
}

fn simulated(profile: Profile) -> Vec<&'static str> {
    // The RFT demo reports no phase timings.
    if profile == Profile::Rft {
        return Vec::new();
    }
    let learner_key = |m: &MetricSpec| match m.input {
        Input::Learner(k) => Some(k),
        _ => None,
    };
    let learner: Vec<&str> = learner_phases(profile)
        .iter()
        .filter_map(|m| learner_key(m))
        .collect();
    let nested: Vec<&str> = METRICS
        .iter()
        .filter(|m| m.role == Role::NestedDiagnostic && m.profiles.contains(profile))
        .filter_map(learner_key)
        .collect();
    let part_of = |part: &str, parent: &str| {
        part.strip_prefix(parent)
            .is_some_and(|rest| rest.starts_with('_'))
    };
    let mut out = vec!["all"];
    for phase in &learner {
        out.push(phase);
        out.extend(nested.iter().filter(|n| part_of(n, phase)));
    }
    out.extend(
        nested
            .iter()
            .filter(|n| !learner.iter().any(|p| part_of(n, p))),
    );
    out.extend(collector_specs(profile).iter().map(|(k, _)| *k));
    // The on-policy demo times env.step() inside its rollout, which is its collector row.
    if profile == Profile::OnPolicy {
        out.push("env_step");
    }
    out.retain(|k| !NOT_SIMULATED.contains(k));
    out
}

/// Validated `--slow` factors; a phase not named runs at factor 1.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slowdown(Vec<(&'static str, f64)>);

impl Slowdown {
    /// Parse `PHASE=FACTOR` specs for the demo of `algo` (profile `profile`): the phase must be
    /// one the profile simulates, the factor a number in (0, 1000], each phase named once.
    pub fn parse(specs: &[String], algo: &str, profile: Profile) -> Result<Self, Error> {
        let valid = slow_phases(profile);
        let mut out: Vec<(&'static str, f64)> = Vec::new();
        for spec in specs {
            let refuse = |why: String| Err(Error::Setting(format!("--slow {spec}: {why}")));
            let Some((name, factor)) = spec.split_once('=') else {
                return refuse("expected PHASE=FACTOR (for example learning=6)".into());
            };
            let Some(phase) = valid.iter().copied().find(|p| *p == name) else {
                let why = if valid.is_empty() {
                    format!("the {algo} demo simulates no phase timings")
                } else {
                    format!(
                        "unknown phase '{name}' for the {algo} demo: expected one of {}",
                        valid.join(", ")
                    )
                };
                return refuse(why);
            };
            let factor = match factor.parse::<f64>() {
                Ok(f) if f > 0.0 && f <= MAX_FACTOR => f,
                _ => {
                    return refuse(format!(
                        "factor '{factor}' must be a number in (0, {MAX_FACTOR}]"
                    ))
                }
            };
            if out.iter().any(|(p, _)| *p == phase) {
                return refuse(format!("phase '{phase}' given twice"));
            }
            out.push((phase, factor));
        }
        Ok(Slowdown(out))
    }

    /// The factor given for `name` alone (1 when not given).
    fn given(&self, name: &str) -> f64 {
        self.0
            .iter()
            .find(|(p, _)| *p == name)
            .map_or(1.0, |(_, f)| *f)
    }

    /// The factor of `phase`, `all` included (1 when not slowed).
    pub fn factor(&self, phase: &str) -> f64 {
        self.given(phase) * self.given("all")
    }

    /// `micros` of a part of `parent`, scaled by both their factors and `all`.
    pub fn part_us(&self, parent: &str, part: &str, micros: f64) -> Duration {
        let f = self.given(parent) * self.given(part) * self.given("all");
        Duration::from_secs_f64(micros * 1e-6 * f)
    }

    /// `micros` of `phase`, scaled by its factor.
    pub fn us(&self, phase: &str, micros: f64) -> Duration {
        Duration::from_secs_f64(micros * 1e-6 * self.factor(phase))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally::timeline::{COLLECTOR_ORDER, LEARNER_ORDER};

    #[test]
    fn every_phase_left_out_is_still_a_timeline_phase() {
        // A renamed or removed phase must not leave a stale exclusion behind.
        for k in NOT_SIMULATED {
            assert!(
                LEARNER_ORDER.contains(&k) || COLLECTOR_ORDER.contains(&k),
                "{k} is in no timeline order"
            );
        }
    }

    #[test]
    fn an_unknown_phase_is_refused_listing_the_profiles_phases() {
        let err = Slowdown::parse(&["bogus=2".into()], "ppo", Profile::OnPolicy).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--slow bogus=2: unknown phase 'bogus' for the ppo demo: expected one of all, \
             learning, env_step"
        );
    }
}
