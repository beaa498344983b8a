//! The legacy map: pre-schema tags of old runs, their canonical replacements and unit scales,
//! and the names retired without a replacement.
//!
//! Historical event files are never rewritten: a consumer maps their tags through this table
//! (scaling the unit where it changed), and runs written under schema v1 use canonical tags
//! only. The first rows are the core migration table; the rest are older SAC/APPO names
//! (`docs/contract/schema.md`, the legacy map; reading old runs: `docs/contract/consumers.md`).

use crate::types::Profile;
use serde::Serialize;

/// One old tag and the canonical tag that replaced it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LegacyRow {
    /// The retired tag as it appears in old event files.
    pub old: &'static str,
    /// Its canonical replacement.
    pub new: &'static str,
    /// Multiply an old value by this to get the canonical unit (ms→s 0.001, s→ms 1000).
    pub scale: f64,
    /// The profile this mapping applies to, when the same old name meant different things.
    pub profile: Option<Profile>,
    /// Why the mapping is what it is.
    pub note: &'static str,
}

/// A retired name (or `*` pattern) with no canonical replacement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RetiredName {
    /// The retired tag, or a pattern where `*` matches any run of characters.
    pub pattern: &'static str,
    /// The family or tag that holds a related (not identical) meaning, if any.
    pub see: Option<&'static str>,
    /// Why it was retired.
    pub reason: &'static str,
}

const MS_TO_S: f64 = 0.001;
const S_TO_MS: f64 = 1000.0;

const fn row(old: &'static str, new: &'static str, scale: f64, note: &'static str) -> LegacyRow {
    LegacyRow {
        old,
        new,
        scale,
        profile: None,
        note,
    }
}

/// Every legacy tag with its replacement. `timing/learner_incremental_h2d_ms` appears twice,
/// once per profile, because it meant different things in SAC-family and APPO runs.
#[rustfmt::skip]
pub static LEGACY: &[LegacyRow] = &[
    // The core migration table.
    row("perf/steps_per_sec", "Perf/total_fps", 1.0, "aggregate collector env-step throughput (summed across DP ranks)"),
    row("reward/mean", "Train/mean_reward", 1.0, "mean return of the collector's recent 100 episodes"),
    row("reward/mean_ep100", "Train/mean_reward", 1.0, "mean return of the collector's recent 100 episodes"),
    row("episode/timeout_rate", "Episode/timeout_rate", 1.0, "not written before the first finished episode"),
    row("perf/iter_ms", "Perf/iteration_time", MS_TO_S, "ms to s; written only when a full iteration wall was measured"),
    row("timing/learner_train_ms", "Perf/learning_time", MS_TO_S, "ms to s"),
    row("timing/learner_collector_wait_ms", "Perf/learner_collector_wait_ms", 1.0, "same ms phase, canonical namespace"),
    row("timing/learner_inference_ms", "Perf/learner_inference_ms", 1.0, "same ms phase, canonical namespace"),
    row("timing/learner_collector_release_ms", "Perf/learner_collector_release_ms", 1.0, "same ms phase, canonical namespace"),
    row("timing/learner_replay_batch_wait_ms", "Perf/learner_replay_batch_wait_ms", 1.0, "same ms phase, canonical namespace"),
    row("timing/learner_replay_stage_ms", "Perf/learner_replay_stage_ms", 1.0, "same ms phase, canonical namespace"),
    row("timing/learner_replay_sample_ms", "Perf/learner_replay_sample_ms", 1.0, "same ms phase, canonical namespace"),
    row("timing/learner_weight_publish_ms", "Perf/learner_weight_publish_ms", 1.0, "same ms phase, canonical namespace"),
    row("timing/inference_total_ms", "Perf/learner_inference_ms", 1.0, "earlier name of the same field"),
    row("timing/inference_h2d_ms", "Perf/learner_inference_h2d_ms", 1.0, "earlier name of the same field"),
    row("timing/inference_forward_ms", "Perf/learner_inference_forward_ms", 1.0, "earlier name of the same field"),
    row("timing/inference_d2h_ms", "Perf/learner_inference_d2h_ms", 1.0, "earlier name of the same field"),
    LegacyRow { old: "timing/learner_incremental_h2d_ms", new: "Perf/replay_ingress_h2d_submit_ms", scale: 1.0,
        profile: Some(Profile::SacFamily), note: "SAC family: a submit diagnostic that may overlap, not a learner phase" },
    LegacyRow { old: "timing/learner_incremental_h2d_ms", new: "Perf/learner_replay_stage_ms", scale: 1.0,
        profile: Some(Profile::Appo), note: "APPO: the synchronous staging phase, counted in Iter Wall" },
    row("timing/replay_ingress_h2d_submit_ms", "Perf/replay_ingress_h2d_submit_ms", 1.0, "a submit diagnostic that may overlap, not a learner phase"),
    row("timing/collector_mlp_infer_ms", "Perf/collector_mlp_infer_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_inference_request_ms", "Perf/collector_inference_request_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_learner_action_wait_ms", "Perf/collector_learner_action_wait_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_env_step_ms", "Perf/collector_env_step_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_env_step_action_validate_ms", "Perf/collector_env_step_action_validate_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_env_step_apply_action_ms", "Perf/collector_env_step_apply_action_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_env_step_action_backend_ms", "Perf/collector_env_step_action_backend_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_env_step_backend_ms", "Perf/collector_env_step_backend_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_env_step_update_state_ms", "Perf/collector_env_step_update_state_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_env_step_reset_done_ms", "Perf/collector_env_step_reset_done_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_transition_extract_ms", "Perf/collector_transition_extract_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_replay_write_ms", "Perf/collector_replay_write_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_metrics_publish_ms", "Perf/collector_metrics_publish_ms", 1.0, "same ms collector phase, canonical namespace"),
    row("timing/collector_inference_wait_ms", "Perf/collector_learner_action_wait_ms", 1.0, "the wait also covers the rest of the learner update: not inference latency"),
    row("timing/collector_rollout_ms", "Perf/collection_time", MS_TO_S, "ms to s; APPO whole-rollout wall clock"),
    row("train/dp_sync_time", "Perf/dp_gradient_sync_ms_per_rank", S_TO_MS, "s to ms; explicitly a per-rank value"),
    row("train/dp_gradient_sync_calls", "Perf/dp_gradient_sync_calls_per_rank", 1.0, "explicitly a per-rank value"),
    // Older names from the SAC/APPO runners' own metric lists.
    row("iteration", "Train/iteration", 1.0, "iteration counter on the env-step axis"),
    row("episode/length", "Train/mean_episode_length", 1.0, "mean finished-episode length"),
    row("train/qf_loss", "Loss/critic", 1.0, "SAC critic loss"),
    row("train/critic_loss", "Loss/critic", 1.0, "SAC critic loss"),
    row("train/alpha_loss", "Loss/temperature", 1.0, "SAC temperature loss"),
    row("train/temperature_loss", "Loss/temperature", 1.0, "SAC temperature loss"),
    row("train/alpha", "Policy/temperature", 1.0, "SAC temperature after the update"),
    row("train/temperature", "Policy/temperature", 1.0, "SAC temperature after the update"),
    row("grad/global_norm", "Train/global_gradient_norm", 1.0, "APPO global gradient norm"),
    row("train/actor_grad_norm", "Train/actor_gradient_norm", 1.0, "SAC actor gradient norm"),
    row("train/critic_grad_norm", "Train/critic_gradient_norm", 1.0, "SAC critic gradient norm"),
    row("train/kl", "Train/approx_kl", 1.0, "approximate KL"),
    row("ppo/approx_kl", "Train/approx_kl", 1.0, "approximate KL"),
    row("policy_kl/behavior_to_current_kl", "Train/behavior_to_current_log_prob_delta", 1.0, "a mean log-prob delta, not a KL"),
    row("vtrace/rho_raw_p99", "Train/vtrace_rho_p99", 1.0, "V-trace ratio p99"),
    row("train/available_on_arrive", "Train/ring_available_slots", 1.0, "free ring slots when the learner arrived"),
    row("perf/collect_time_ms", "Perf/collection_time", MS_TO_S, "ms to s"),
    row("perf/train_time_ms", "Perf/learning_time", MS_TO_S, "ms to s"),
];

/// Names retired with no replacement, each with the reason.
#[rustfmt::skip]
pub static RETIRED: &[RetiredName] = &[
    RetiredName { pattern: "Episode_Reward/*", see: Some("reward/<term>"),
        reason: "per-term normalised cumulative value; a duplicate tree with different semantics from reward/<term>, removed on purpose" },
    RetiredName { pattern: "perf/effective_samples_per_sec", see: Some("Perf/iteration_time"),
        reason: "replay rows are derivable from the run config and Perf/iteration_time" },
    RetiredName { pattern: "perf/learner_samples_per_sec", see: Some("Perf/iteration_time"),
        reason: "replay rows are derivable from the run config and Perf/iteration_time" },
    RetiredName { pattern: "perf/collector_active_steps_per_sec", see: None,
        reason: "derivable from the canonical collector timings and the run config" },
    RetiredName { pattern: "perf/collector_cycle_ms", see: Some("Terminal/collector_cycle_ms"),
        reason: "the collector cycle total is a terminal-only derived value" },
    RetiredName { pattern: "perf/learner_*_pct", see: None,
        reason: "phase percentages are terminal-only derived values" },
    RetiredName { pattern: "timing/learner_other_ms", see: Some("Terminal/learner_other_ms"),
        reason: "Other is a terminal-only derived value" },
    RetiredName { pattern: "perf/learner_pipeline_ms", see: None,
        reason: "derivable from the canonical learner phases" },
    RetiredName { pattern: "train/action_std", see: Some("Policy/mean_std"),
        reason: "superseded by the policy state metric" },
    RetiredName { pattern: "staging_pool_*", see: None,
        reason: "staging-pool internals; not a stable training signal" },
    RetiredName { pattern: "appo/updates_executed", see: None,
        reason: "derivable from the run config" },
    RetiredName { pattern: "axis/iteration", see: Some("Train/iteration"),
        reason: "the step axis is the event step; iteration is a metric only on the env-step axis" },
    RetiredName { pattern: "axis/env_steps_total", see: None,
        reason: "the event step is the env-step axis" },
    RetiredName { pattern: "episode/terminated_rate", see: Some("Episode_Termination/<term>"),
        reason: "termination is reported per term" },
    RetiredName { pattern: "distributed/*", see: None,
        reason: "rank bookkeeping; cross-rank values are reduced into the canonical tags" },
];

/// The legacy rows whose old name is `old`. Two rows come back only for the profile-split name.
pub fn legacy_rows(old: &str) -> impl Iterator<Item = &'static LegacyRow> + '_ {
    LEGACY.iter().filter(move |r| r.old == old)
}

/// The canonical mapping of `old` for a run of `profile` (needed only for profile-split names).
pub fn legacy_mapping(old: &str, profile: Option<Profile>) -> Option<&'static LegacyRow> {
    let mut rows = legacy_rows(old);
    let first = rows.next()?;
    if first.profile.is_none() {
        return Some(first);
    }
    std::iter::once(first)
        .chain(rows)
        .find(|r| r.profile == profile)
}

/// The retired-name entry whose pattern matches `tag`.
pub fn retired_match(tag: &str) -> Option<&'static RetiredName> {
    RETIRED.iter().find(|r| glob_match(r.pattern, tag))
}

/// Match `text` against a pattern where `*` stands for any run of characters (possibly empty).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}
