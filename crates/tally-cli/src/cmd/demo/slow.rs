//! `tally demo --slow PHASE=FACTOR`: factors on the simulated phase durations, so a demo run
//! can be made learner-bound or collector-bound on purpose (the runs `tally diagnose` is tested
//! on; `docs/contract/consumers.md` "Reading a bottleneck").

use crate::error::CliError;
use std::time::Duration;
use tally::Profile;

/// The largest factor accepted: a demo iteration stays bounded.
const MAX_FACTOR: f64 = 1000.0;

/// The phases each profile's demo simulates, by their timeline key. `all` scales every phase
/// (a heavier task at the same balance); a parent (`inference`, `env_step`) scales all its
/// parts; a part scales itself alone.
pub fn slow_phases(profile: Profile) -> &'static [&'static str] {
    match profile {
        Profile::SacFamily => &[
            "all",
            "inference",
            "inference_h2d",
            "inference_forward",
            "inference_d2h",
            "replay_batch_wait",
            "replay_sample",
            "learning",
            "replay_ingress_h2d_submit",
            "env_step",
            "env_step_action_validate",
            "env_step_apply_action",
            "env_step_backend",
            "env_step_update_state",
            "env_step_reset_done",
            "transition_extract",
            "replay_write",
            "metrics_publish",
        ],
        Profile::Appo => &[
            "all",
            "replay_stage",
            "replay_sample",
            "learning",
            "weight_publish",
            "mlp_infer",
            "env_step",
        ],
        Profile::OnPolicy => &["all", "learning", "env_step"],
        Profile::Rft => &[],
    }
}

/// Validated `--slow` factors; a phase not named runs at factor 1.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slowdown(Vec<(&'static str, f64)>);

impl Slowdown {
    /// Parse `PHASE=FACTOR` specs for the demo of `algo` (profile `profile`): the phase must be
    /// one the profile simulates, the factor a number in (0, 1000], each phase named once.
    pub fn parse(specs: &[String], algo: &str, profile: Profile) -> Result<Self, CliError> {
        let valid = slow_phases(profile);
        let mut out: Vec<(&'static str, f64)> = Vec::new();
        for spec in specs {
            let refuse = |why: String| Err(CliError::Setting(format!("--slow {spec}: {why}")));
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
