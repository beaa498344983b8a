//! The canonical metric registry, schema v1: every tag tally persists or shows, with its contract.
//!
//! The tags, their meanings, units, owners and reductions are the contract's
//! (`docs/contract/schema.md`; the learner and collector timeline rows:
//! `docs/contract/timelines.md`). The registry is closed: a tag that is not here, and is not a
//! term of an open family, is rejected (see [`crate::lookup()`]).

use crate::types::{Input, Owner, Profiles, Reduction, Role, Unit};
use serde::Serialize;

/// One canonical tag and its contract.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MetricSpec {
    /// The TensorBoard / W&B tag (or, for terminal-only values, the in-memory name).
    pub tag: &'static str,
    /// Unit of the persisted value.
    pub unit: Unit,
    /// Component that measures or computes it.
    pub owner: Owner,
    /// Meaning on its timeline.
    pub role: Role,
    /// Cross-rank reduction on rank 0.
    pub reduction: Reduction,
    /// Timing profiles that emit it.
    pub profiles: Profiles,
    /// Long terminal label (≥ 120 columns).
    pub label: &'static str,
    /// Short terminal label (narrow tiers).
    pub short_label: &'static str,
    /// Whether the backend ever receives it. Terminal-derived values never are.
    pub persisted: bool,
    /// Which step-submission field feeds it.
    pub input: Input,
    /// One sentence on what it measures.
    pub description: &'static str,
}

/// An open family of tags: `<prefix><term>`, one tag per term.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FamilySpec {
    /// The family prefix including the trailing slash.
    pub prefix: &'static str,
    /// Unit of every member.
    pub unit: Unit,
    /// Component that produces the terms.
    pub owner: Owner,
    /// Meaning of every member.
    pub role: Role,
    /// Cross-rank reduction.
    pub reduction: Reduction,
    /// Timing profiles that may emit it.
    pub profiles: Profiles,
    /// Terminal group label.
    pub label: &'static str,
    /// Whether members are persisted.
    pub persisted: bool,
    /// Which step-submission field feeds it.
    pub input: Input,
    /// Terms that are reserved and rejected, each with the tag to use instead, if any.
    pub reserved_terms: &'static [ReservedTerm],
    /// What a member means.
    pub description: &'static str,
}

/// A term that is not a valid member of its family.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReservedTerm {
    /// The reserved term (may be empty: the bare prefix).
    pub term: &'static str,
    /// The canonical tag that holds this meaning, if one exists.
    pub replacement: Option<&'static str>,
}

#[allow(clippy::too_many_arguments)]
const fn m(
    tag: &'static str,
    unit: Unit,
    owner: Owner,
    role: Role,
    reduction: Reduction,
    profiles: Profiles,
    label: &'static str,
    short_label: &'static str,
    input: Input,
    description: &'static str,
) -> MetricSpec {
    MetricSpec {
        tag,
        unit,
        owner,
        role,
        reduction,
        profiles,
        label,
        short_label,
        persisted: !matches!(role, Role::TerminalDerived),
        input,
        description,
    }
}

use Input::{Collector as C, CollectorInference as CI, Derived, Field, Learner as L, Metrics};
use Owner::{Collector as OC, Learner as OL, Logger as OG, Runner as OR};
use Profiles as P;
use Reduction::{Mean, Sum};
use Role::*;
use Unit::*;

/// How many entries the registry holds (the compiler checks it against the table), so
/// per-step arrays indexed by spec can live on the stack.
pub const METRIC_COUNT: usize = 94;

/// Every canonical tag of schema v1, grouped Train, Loss, Policy, Episode, Perf, then the
/// terminal-only derived values.
pub static METRICS: &[MetricSpec] = &REGISTRY;

#[rustfmt::skip]
static REGISTRY: [MetricSpec; METRIC_COUNT] = [
    // ---- Train/* --------------------------------------------------------------------------
    m("Train/iteration", Iterations, OG, Counter, Mean, P::OFFPOLICY, "Iteration", "Iter", Field("iteration"),
      "Learner iteration; written only when env steps are the step axis."),
    m("Train/mean_reward", Reward, OC, TrainingMetric, Mean, P::ALL, "Mean Reward", "Reward", Field("episode_return"),
      "Mean return of the collector's most recent 100 finished episodes."),
    m("Train/mean_episode_length", EnvSteps, OC, TrainingMetric, Mean, P::ALL, "Episode Length", "Ep Len", Field("episode_length"),
      "Mean length of recently finished episodes; written when > 0."),
    m("Train/mean_reward/time", Reward, OC, TrainingMetric, Mean, P::ONPOLICY, "Mean Reward (time)", "Reward/t", Metrics,
      "RSL-RL native: mean reward against wall-clock time."),
    m("Train/mean_episode_length/time", EnvSteps, OC, TrainingMetric, Mean, P::ONPOLICY, "Episode Length (time)", "Ep Len/t", Metrics,
      "RSL-RL native: mean episode length against wall-clock time."),
    m("Train/global_gradient_norm", Norm, OL, TrainingMetric, Mean, P::APPO, "Grad Norm", "Grad Norm", Metrics,
      "Global gradient norm of the APPO update."),
    m("Train/actor_gradient_norm", Norm, OL, TrainingMetric, Mean, P::SAC, "Actor Grad Norm", "Actor Grad", Metrics,
      "Actor gradient norm (SAC family)."),
    m("Train/critic_gradient_norm", Norm, OL, TrainingMetric, Mean, P::SAC, "Critic Grad Norm", "Critic Grad", Metrics,
      "Critic gradient norm (SAC family)."),
    m("Train/target_q_max", ReturnUnits, OL, TrainingMetric, Mean, P::SAC, "Target Q Max", "Q Max", Metrics,
      "Largest target Q value of the critic update."),
    m("Train/target_q_min", ReturnUnits, OL, TrainingMetric, Mean, P::SAC, "Target Q Min", "Q Min", Metrics,
      "Smallest target Q value of the critic update."),
    m("Train/reward_scale_std", ReturnUnits, OL, TrainingMetric, Mean, P::SAC, "Reward Scale Std", "Rew Scale", Metrics,
      "FlashSAC reward-normalisation scale, when normalisation is on."),
    m("Train/approx_kl", Nats, OL, TrainingMetric, Mean, P::APPO, "Approx KL", "KL", Metrics,
      "Approximate KL divergence between behaviour and updated policy."),
    m("Train/clip_fraction", Ratio, OL, TrainingMetric, Mean, P::APPO, "Clip Fraction", "Clip Frac", Metrics,
      "Fraction of samples whose ratio was clipped."),
    m("Train/behavior_to_current_log_prob_delta", Nats, OL, TrainingMetric, Mean, P::APPO, "Behavior LogP Delta", "dLogP", Metrics,
      "Mean log-probability change from the behaviour policy to the current one."),
    m("Train/vtrace_rho_clip_fraction", Ratio, OL, TrainingMetric, Mean, P::APPO, "V-trace Rho Clip", "Rho Clip", Metrics,
      "Fraction of V-trace importance ratios that were clipped."),
    m("Train/vtrace_rho_p99", Ratio, OL, TrainingMetric, Mean, P::APPO, "V-trace Rho p99", "Rho p99", Metrics,
      "99th percentile of raw V-trace importance ratios."),
    m("Train/ring_available_slots", Slots, OR, Gauge, Sum, P::APPO, "Ring Free Slots", "Ring Free", Metrics,
      "Ring-buffer slots available when the learner arrived."),
    m("Train/rollouts_read", Count, OR, Counter, Sum, P::APPO, "Rollouts Read", "Rollouts", Metrics,
      "Rollouts the learner consumed this iteration."),
    m("Train/replay_ingress_depth", Slots, OL, Gauge, Sum, P::SAC, "Ingress Depth", "Ingr Depth", Metrics,
      "Configured depth of the bounded replay ingress."),
    m("Train/replay_ingress_occupancy", Slots, OL, Gauge, Sum, P::SAC, "Ingress Occupancy", "Ingr Occup", Metrics,
      "Ingress slots currently published and not yet released."),
    m("Train/replay_ingress_high_water", Slots, OL, Gauge, Sum, P::SAC, "Ingress High Water", "Ingr HiWat", Metrics,
      "Highest ingress occupancy of the run so far."),
    m("Train/replay_ingress_backpressure_wait_ms", Ms, OL, Counter, Sum, P::SAC, "Ingress Backpressure", "Ingr BP", Metrics,
      "Cumulative time writers waited on a full ingress."),
    m("Train/replay_ingress_dropped_batches", Count, OL, Counter, Sum, P::SAC, "Ingress Dropped", "Ingr Drop", Metrics,
      "Cumulative batches the ingress dropped."),
    // ---- Loss/* ---------------------------------------------------------------------------
    m("Loss/surrogate", Unitless, OL, TrainingMetric, Mean, P::APPO_ONPOLICY, "Surrogate Loss", "Surrogate", Metrics,
      "Clipped policy-gradient surrogate loss."),
    m("Loss/value", Unitless, OL, TrainingMetric, Mean, P::APPO_ONPOLICY, "Value Loss", "Value", Metrics,
      "Value-function loss."),
    m("Loss/entropy", Nats, OL, TrainingMetric, Mean, P::ALL, "Entropy", "Entropy", Metrics,
      "Policy entropy (APPO, PPO) or the SAC actor's entropy term."),
    m("Loss/actor", Unitless, OL, TrainingMetric, Mean, P::SAC, "Actor Loss", "Actor", Metrics,
      "SAC actor loss."),
    m("Loss/critic", Unitless, OL, TrainingMetric, Mean, P::SAC, "Critic Loss", "Critic", Metrics,
      "SAC critic (Q) loss."),
    m("Loss/temperature", Unitless, OL, TrainingMetric, Mean, P::SAC, "Temperature Loss", "Temp Loss", Metrics,
      "SAC entropy-temperature loss."),
    m("Loss/learning_rate", LearningRate, OL, TrainingMetric, Mean, P::APPO_ONPOLICY, "Learning Rate", "LR", Metrics,
      "Current optimiser learning rate."),
    // ---- Policy/* -------------------------------------------------------------------------
    m("Policy/mean_std", ActionUnits, OL, TrainingMetric, Mean, P::APPO_ONPOLICY, "Action Std", "Act Std", Metrics,
      "Mean standard deviation of the Gaussian policy."),
    m("Policy/temperature", Unitless, OL, TrainingMetric, Mean, P::SAC, "Temperature", "Alpha", Metrics,
      "SAC entropy temperature alpha after the update."),
    // ---- Episode/* ------------------------------------------------------------------------
    m("Episode/timeout_rate", Ratio, OC, TrainingMetric, Mean, P::ALL, "Timeout Rate", "Timeout", Field("timeout_rate"),
      "Share of finished episodes that ended by time limit; not written before the first one finishes."),
    // ---- Perf/* totals --------------------------------------------------------------------
    m("Perf/total_fps", EnvStepsPerS, OG, Throughput, Sum, P::ALL, "Steps/s", "Steps/s", Derived,
      "Whole-job collector env-step throughput: per-rank steps / Iter Wall, summed over ranks."),
    m("Perf/iteration_time", S, OR, LearnerTotal, Mean, P::OFFPOLICY, "Iter Wall", "Iter Wall", Field("iteration_time"),
      "Learner wall clock from loop start to update end; written only when fully measured."),
    m("Perf/learning_time", S, OL, LearnerPhase, Mean, P::ALL, "Learning", "Learning", L("learning"),
      "Wall clock of the learner update phase."),
    m("Perf/collection_time", S, OC, RolloutTotal, Mean, P::APPO_ONPOLICY, "Rollout Wall", "Rollout", C("rollout"),
      "Wall clock of one whole rollout (APPO: steps_per_env steps)."),
    m("Perf/dp_gradient_sync_ms_per_rank", Ms, OR, NestedDiagnostic, Mean, P::OFFPOLICY, "DP Grad Sync", "DP Sync", Metrics,
      "Per-rank time spent in data-parallel gradient all-reduce."),
    m("Perf/dp_gradient_sync_calls_per_rank", Count, OR, Counter, Mean, P::OFFPOLICY, "DP Sync Calls", "DP Calls", Metrics,
      "Per-rank number of gradient all-reduce calls."),
    // ---- Perf/learner_* exclusive phases ---------------------------------------------------
    m("Perf/learner_collector_wait_ms", Ms, OL, LearnerPhase, Mean, P::OFFPOLICY, "Collector Wait", "Coll Wait", L("collector_wait"),
      "Learner waits for the update boundary: requests, replay ready, env_steps_per_sync ticks (APPO: a ready rollout)."),
    m("Perf/learner_inference_ms", Ms, OL, LearnerPhase, Mean, P::SAC, "Inference", "Inference", L("inference"),
      "Learner-owned inference: observation H2D, actor forward, action D2H."),
    m("Perf/learner_collector_release_ms", Ms, OL, LearnerPhase, Mean, P::SAC, "Collector Release", "Coll Release", L("collector_release"),
      "Hand the action response token back to the collector."),
    m("Perf/learner_replay_batch_wait_ms", Ms, OL, LearnerPhase, Mean, P::SAC, "Replay Batch Wait", "Batch Wait", L("replay_batch_wait"),
      "Wait for the prefetched device batch to finish ingress commit and gather."),
    m("Perf/learner_replay_stage_ms", Ms, OL, LearnerPhase, Mean, P::APPO, "Replay Stage", "Stage", L("replay_stage"),
      "Materialise newly arrived ring rollouts into the learner staging pool."),
    m("Perf/learner_replay_sample_ms", Ms, OL, LearnerPhase, Mean, P::OFFPOLICY, "Replay Sample", "Sample", L("replay_sample"),
      "Obtain the ready batch (hot/cold swap and view; MPS may wait on a slot event)."),
    m("Perf/learner_weight_publish_ms", Ms, OL, LearnerPhase, Mean, P::APPO, "Weight Publish", "Wt Publish", L("weight_publish"),
      "Write new actor/critic weights to shared memory."),
    // ---- Perf/learner nested and background diagnostics ------------------------------------
    m("Perf/learner_inference_h2d_ms", Ms, OL, NestedDiagnostic, Mean, P::SAC, "Inference H2D", "Inf H2D", L("inference_h2d"),
      "Inference child: copy observations from the shared CPU slot to the learner device."),
    m("Perf/learner_inference_forward_ms", Ms, OL, NestedDiagnostic, Mean, P::SAC, "Inference Forward", "Inf Fwd", L("inference_forward"),
      "Inference child: learner.actor forward, including device synchronise."),
    m("Perf/learner_inference_d2h_ms", Ms, OL, NestedDiagnostic, Mean, P::SAC, "Inference D2H", "Inf D2H", L("inference_d2h"),
      "Inference child: write actions back to the shared CPU slot."),
    m("Perf/replay_ingress_h2d_submit_ms", Ms, OL, NestedDiagnostic, Mean, P::SAC, "Replay H2D Submit", "H2D Submit", L("replay_ingress_h2d_submit"),
      "CPU-side cost of the latest transition-span submit to the device ring; overlaps learner phases."),
    // ---- Perf/collector_* ------------------------------------------------------------------
    m("Perf/collector_mlp_infer_ms", Ms, OC, CollectorPerStep, Mean, P::APPO, "MLP Infer", "MLP Infer", C("mlp_infer"),
      "APPO collector: per-step policy inference EMA."),
    m("Perf/collector_inference_request_ms", Ms, OC, CollectorCyclePhase, Mean, P::SAC, "Inference Request", "Inf Request", C("inference_request"),
      "Publish observation/dones to the shared slot and notify the learner."),
    m("Perf/collector_learner_action_wait_ms", Ms, OC, CollectorCyclePhase, Mean, P::SAC, "Learner Action Wait", "Action Wait", C("learner_action_wait"),
      "Barrier wall clock from request until the learner publishes this tick's action."),
    m("Perf/collector_env_step_ms", Ms, OC, CollectorCyclePhase, Mean, P::OFFPOLICY, "Env Step", "Env Step", C("env_step"),
      "env.step() wall clock (APPO: per-step EMA)."),
    m("Perf/collector_env_step_action_validate_ms", Ms, OC, CollectorDetail, Mean, P::SAC, "Action Validate", "Validate", C("env_step_action_validate"),
      "Env Step detail: validate the action."),
    m("Perf/collector_env_step_apply_action_ms", Ms, OC, CollectorDetail, Mean, P::SAC, "Apply Action", "Apply", C("env_step_apply_action"),
      "Env Step detail: apply the action to the backend."),
    m("Perf/collector_env_step_action_backend_ms", Ms, OC, CollectorDetail, Mean, P::SAC, "Action+Backend", "Act+Backend", C("env_step_action_backend"),
      "Env Step detail: action application and backend step together."),
    m("Perf/collector_env_step_backend_ms", Ms, OC, CollectorDetail, Mean, P::SAC, "Backend Step", "Backend", C("env_step_backend"),
      "Env Step detail: physics backend step, including the device wait of event backends."),
    m("Perf/collector_env_step_update_state_ms", Ms, OC, CollectorDetail, Mean, P::SAC, "Update State", "Update", C("env_step_update_state"),
      "Env Step detail: observation, reward and termination update."),
    m("Perf/collector_env_step_reset_done_ms", Ms, OC, CollectorDetail, Mean, P::SAC, "Reset Done", "Reset", C("env_step_reset_done"),
      "Env Step detail: reset finished environments."),
    m("Perf/collector_transition_extract_ms", Ms, OC, CollectorCyclePhase, Mean, P::SAC, "Transition Extract", "Extract", C("transition_extract"),
      "Extract the transition from the step output."),
    m("Perf/collector_replay_write_ms", Ms, OC, CollectorCyclePhase, Mean, P::SAC, "Replay Write", "Replay Wr", C("replay_write"),
      "Post-process, pack and write the transition into the bounded ingress."),
    m("Perf/collector_metrics_publish_ms", Ms, OC, CollectorCyclePhase, Mean, P::SAC, "Metrics Publish", "Publish", C("metrics_publish"),
      "Publish collector metrics to the learner."),
    // ---- Perf/collector_inference_* flight gauges ------------------------------------------
    m("Perf/collector_inference_queue_depth", Requests, OC, Gauge, Mean, P::SAC, "Inference Queue Depth", "Inf Queue", CI("queue_depth"),
      "Inference requests queued at the last collector report."),
    m("Perf/collector_inference_action_backlog", Requests, OC, Gauge, Mean, P::SAC, "Action Backlog", "Backlog", CI("action_backlog"),
      "Published actions not yet consumed by the collector."),
    m("Perf/collector_inference_max_action_backlog", Requests, OC, Gauge, Mean, P::SAC, "Max Action Backlog", "Max Backlog", CI("max_action_backlog"),
      "Largest action backlog since the previous collector report."),
    m("Perf/collector_inference_in_flight", Requests, OC, Gauge, Mean, P::SAC, "In Flight", "In Flight", CI("in_flight"),
      "Inference requests in flight at the last report."),
    m("Perf/collector_inference_max_in_flight", Requests, OC, Gauge, Mean, P::SAC, "Max In Flight", "Max InFlt", CI("max_in_flight"),
      "Largest number in flight since the previous collector report."),
    m("Perf/collector_inference_publication_lag", Ticks, OC, Gauge, Mean, P::SAC, "Publication Lag", "Pub Lag", CI("publication_lag"),
      "Ticks between request and action publication at the last report."),
    m("Perf/collector_inference_max_publication_lag", Ticks, OC, Gauge, Mean, P::SAC, "Max Publication Lag", "Max PubLag", CI("max_publication_lag"),
      "Largest publication lag since the previous collector report."),
    // ---- terminal-only derived values (never persisted) ------------------------------------
    m("Terminal/learner_other_ms", Ms, OG, TerminalDerived, Mean, P::OFFPOLICY, "Other", "Other", Derived,
      "Other = max(Iter Wall - accounted exclusive phases, 0): metrics drain, reward stats, loop bookkeeping."),
    m("Terminal/learner_collector_wait_pct", Percent, OG, TerminalDerived, Mean, P::OFFPOLICY, "Collector Wait %", "Coll Wait %", Derived,
      "Collector Wait as a share of Iter Wall."),
    m("Terminal/learner_inference_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Inference %", "Inference %", Derived,
      "Inference as a share of Iter Wall."),
    m("Terminal/learner_collector_release_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Collector Release %", "Release %", Derived,
      "Collector Release as a share of Iter Wall."),
    m("Terminal/learner_replay_batch_wait_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Replay Batch Wait %", "Batch Wait %", Derived,
      "Replay Batch Wait as a share of Iter Wall."),
    m("Terminal/learner_replay_stage_pct", Percent, OG, TerminalDerived, Mean, P::APPO, "Replay Stage %", "Stage %", Derived,
      "Replay Stage as a share of Iter Wall."),
    m("Terminal/learner_replay_sample_pct", Percent, OG, TerminalDerived, Mean, P::OFFPOLICY, "Replay Sample %", "Sample %", Derived,
      "Replay Sample as a share of Iter Wall."),
    m("Terminal/learner_learning_pct", Percent, OG, TerminalDerived, Mean, P::OFFPOLICY, "Learning %", "Learning %", Derived,
      "Learning as a share of Iter Wall."),
    m("Terminal/learner_weight_publish_pct", Percent, OG, TerminalDerived, Mean, P::APPO, "Weight Publish %", "Publish %", Derived,
      "Weight Publish as a share of Iter Wall."),
    m("Terminal/learner_other_pct", Percent, OG, TerminalDerived, Mean, P::OFFPOLICY, "Other %", "Other %", Derived,
      "Other as a share of Iter Wall."),
    m("Terminal/collector_cycle_ms", Ms, OG, TerminalDerived, Mean, P::SAC, "Collector Cycle", "Cycle", Derived,
      "Sum of the collector cycle phases; the denominator of collector percentages, only when every phase is present."),
    m("Terminal/collector_inference_request_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Inference Request %", "Request %", Derived,
      "Inference Request as a share of the collector cycle."),
    m("Terminal/collector_learner_action_wait_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Learner Action Wait %", "Act Wait %", Derived,
      "Learner Action Wait as a share of the collector cycle."),
    m("Terminal/collector_env_step_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Env Step %", "Env Step %", Derived,
      "Env Step as a share of the collector cycle."),
    m("Terminal/collector_env_step_action_validate_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Action Validate %", "Validate %", Derived,
      "Action Validate (an Env Step detail) as a share of the collector cycle."),
    m("Terminal/collector_env_step_apply_action_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Apply Action %", "Apply %", Derived,
      "Apply Action (an Env Step detail) as a share of the collector cycle."),
    m("Terminal/collector_env_step_action_backend_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Action+Backend %", "Act+Bknd %", Derived,
      "Action+Backend (an Env Step detail) as a share of the collector cycle."),
    m("Terminal/collector_env_step_backend_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Backend Step %", "Backend %", Derived,
      "Backend Step (an Env Step detail) as a share of the collector cycle."),
    m("Terminal/collector_env_step_update_state_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Update State %", "Update %", Derived,
      "Update State (an Env Step detail) as a share of the collector cycle."),
    m("Terminal/collector_env_step_reset_done_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Reset Done %", "Reset %", Derived,
      "Reset Done (an Env Step detail) as a share of the collector cycle."),
    m("Terminal/collector_transition_extract_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Transition Extract %", "Extract %", Derived,
      "Transition Extract as a share of the collector cycle."),
    m("Terminal/collector_replay_write_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Replay Write %", "Replay Wr %", Derived,
      "Replay Write as a share of the collector cycle."),
    m("Terminal/collector_metrics_publish_pct", Percent, OG, TerminalDerived, Mean, P::SAC, "Metrics Publish %", "Publish %", Derived,
      "Metrics Publish as a share of the collector cycle."),
    m("Terminal/rows_per_sec", RowsPerS, OG, TerminalDerived, Sum, P::OFFPOLICY, "Rows/s", "Rows/s", Derived,
      "Whole-job learner replay rows per second, summed over ranks; terminal only."),
];

/// The open families: `reward/<term>` and `Episode_Termination/<term>`.
pub static FAMILIES: &[FamilySpec] = &[
    FamilySpec {
        prefix: "reward/",
        unit: Unit::Reward,
        owner: Owner::Env,
        role: Role::TrainingMetric,
        reduction: Reduction::Mean,
        profiles: Profiles::ALL,
        label: "Rewards",
        persisted: true,
        input: Input::Field("rewards"),
        reserved_terms: &[
            ReservedTerm { term: "", replacement: None },
            ReservedTerm { term: "mean", replacement: Some("Train/mean_reward") },
            ReservedTerm { term: "mean_ep100", replacement: Some("Train/mean_reward") },
        ],
        description: "RewardManager term diagnostic: mean over envs of raw_value * weight, not dt-scaled.",
    },
    FamilySpec {
        prefix: "Episode_Termination/",
        unit: Unit::Count,
        owner: Owner::Env,
        role: Role::Counter,
        reduction: Reduction::Sum,
        profiles: Profiles::ALL,
        label: "Terminations",
        persisted: true,
        input: Input::Metrics,
        reserved_terms: &[ReservedTerm { term: "", replacement: None }],
        description: "TerminationManager: number of envs reset this step whose termination term fired; not a reward.",
    },
];
