//! Which tags the default health rules watch, by what they mean: one list of globs per kind of
//! tag, canonical tags and other tools' common names together (`docs/contract/health.md`
//! "Which tags the defaults watch"). The rules themselves are `tally::health`'s.

use crate::legacy::glob_match;
use serde::Serialize;

/// What a tag means to the health rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthClass {
    /// A training loss: watched for divergence.
    Loss,
    /// A policy's entropy or action std: watched for collapse toward 0 from its early level.
    Collapsing,
    /// A mean episode return: watched for staying exactly flat.
    Reward,
    /// The run's throughput: its pace (steps per wall second) watched for dropping below its
    /// running median.
    Throughput,
    /// A statistic NaN by design on some batches (an explained variance when the returns do
    /// not vary): not watched for non-finite values by default.
    NanByDesign,
}

impl HealthClass {
    /// The snake_case name used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            HealthClass::Loss => "loss",
            HealthClass::Collapsing => "collapsing",
            HealthClass::Reward => "reward",
            HealthClass::Throughput => "throughput",
            HealthClass::NanByDesign => "nan_by_design",
        }
    }
}

/// One kind of tag and the globs (`*` any run of characters) naming it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HealthTags {
    /// What the tags mean.
    pub class: HealthClass,
    /// Canonical schema-v1 tags, then rsl_rl's, stable-baselines3's, CleanRL's and Trinity's
    /// names.
    pub globs: &'static [&'static str],
}

/// Every tag the default rules watch by meaning. `Loss/learning_rate` is not a loss and
/// `Loss/entropy` is an entropy: the canonical tags are named one by one.
pub static HEALTH_TAGS: &[HealthTags] = &[
    HealthTags {
        class: HealthClass::Loss,
        globs: &[
            // tally
            "Loss/surrogate",
            "Loss/value",
            "Loss/actor",
            "Loss/critic",
            "Loss/temperature",
            // rsl_rl
            "Loss/value_function",
            // stable-baselines3
            "train/loss",
            "train/value_loss",
            "train/policy_gradient_loss",
            "train/policy_loss",
            "train/actor_loss",
            "train/critic_loss",
            "train/ent_coef_loss",
            // CleanRL
            "losses/value_loss",
            "losses/policy_loss",
            "losses/actor_loss",
            "losses/qf_loss",
            "losses/qf1_loss",
            "losses/qf2_loss",
            "losses/td_loss",
            "losses/alpha_loss",
            // Trinity / verl
            "actor/pg_loss",
        ],
    },
    HealthTags {
        class: HealthClass::Collapsing,
        globs: &[
            // A KL or clip fraction at 0 is no collapse: 0 by design at CleanRL's defaults, and
            // at the end of a learning-rate anneal (docs/contract/health.md "Collapse").
            // tally
            "Loss/entropy",
            "Policy/mean_std",
            // rsl_rl
            "Policy/mean_noise_std",
            // stable-baselines3 (its entropy loss is minus the entropy)
            "train/entropy_loss",
            "train/std",
            // CleanRL
            "losses/entropy",
            // Trinity / verl
            "actor/entropy",
        ],
    },
    HealthTags {
        class: HealthClass::Reward,
        globs: &[
            "Train/mean_reward",
            "rollout/ep_rew_mean",
            "charts/episodic_return",
        ],
    },
    HealthTags {
        class: HealthClass::Throughput,
        globs: &[
            "Perf/total_fps",
            "time/fps",
            "charts/SPS",
            "perf/throughput",
        ],
    },
    HealthTags {
        class: HealthClass::NanByDesign,
        // stable-baselines3 and CleanRL both log NaN when the batch's returns have no variance.
        globs: &["train/explained_variance", "losses/explained_variance"],
    },
];

/// What `tag` means to the default health rules, if anything (the first class whose globs
/// match).
pub fn health_class(tag: &str) -> Option<HealthClass> {
    HEALTH_TAGS
        .iter()
        .find(|h| h.globs.iter().any(|g| glob_match(g, tag)))
        .map(|h| h.class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_and_foreign_names_have_their_class() {
        assert_eq!(health_class("Loss/critic"), Some(HealthClass::Loss));
        assert_eq!(health_class("Loss/entropy"), Some(HealthClass::Collapsing));
        assert_eq!(health_class("Loss/learning_rate"), None);
        assert_eq!(
            health_class("train/entropy_loss"),
            Some(HealthClass::Collapsing)
        );
        assert_eq!(health_class("charts/SPS"), Some(HealthClass::Throughput));
        assert_eq!(
            health_class("rollout/ep_rew_mean"),
            Some(HealthClass::Reward)
        );
    }

    #[test]
    fn every_canonical_glob_names_a_registry_tag() {
        // A canonical name here that the registry lost would watch nothing. rsl_rl's own names
        // share the canonical prefixes.
        let rsl_rl = ["Loss/value_function", "Policy/mean_noise_std"];
        for h in HEALTH_TAGS {
            for g in h.globs.iter().filter(|g| !rsl_rl.contains(g)) {
                let canonical = ["Loss/", "Policy/", "Train/", "Perf/"]
                    .iter()
                    .any(|p| g.starts_with(p));
                if canonical {
                    assert!(
                        crate::lookup::metric(g).is_some(),
                        "{g} not in the registry"
                    );
                }
            }
        }
    }
}
