//! Example terminal states (SAC, APPO, PPO and an rft run) for snapshot tests, benches and
//! examples, which include this file with `#[path]`; it is not part of the library.
//!
//! Every value is chosen so that each label of the profile's timeline tables shows
//! (`docs/contract/timelines.md`):
//! every quiet collector row is above 1 % of the cycle. The rft run carries the Trinity-RFT
//! keys of `docs/contract/rft.md` with eval and bench steps every few iterations.

use std::sync::Arc;
use tally::terminal::{Level, PanelSnapshot, RunFacts, TerminalState};
use tally::window::Sample;
use tally::{MpsState, Profile, SystemInfo, Tag};
use tally_schema::{lookup, TagRef};

/// The canonical [`Tag`] of `name` (a registry tag or a family member).
///
/// # Panics
/// If `name` is not canonical (fixtures only use canonical tags).
pub fn tag(name: &str) -> Tag {
    match lookup(name).unwrap_or_else(|e| panic!("{e}")) {
        TagRef::Metric(m) => Tag::Spec(m),
        TagRef::Family(f, _) => Tag::Family(f, Arc::from(name)),
        TagRef::User(_) => Tag::User(Arc::from(name)),
    }
}

/// A sample at `t` for `iteration` with `values` (canonical tags, persisted units).
pub fn sample(t: f64, iteration: u64, values: &[(&str, f64)]) -> Sample {
    Sample {
        t,
        iteration,
        values: values.iter().map(|(k, v)| (tag(k), *v)).collect(),
    }
}

/// One SAC iteration's values, scaled by `k` (≈ 1) so window means differ from any sample.
pub fn sac_values(k: f64) -> Vec<(&'static str, f64)> {
    vec![
        ("Loss/critic", 0.412 * k),
        ("Loss/actor", -12.5 * k),
        ("Loss/temperature", -0.021 * k),
        ("Loss/entropy", -1.234 * k),
        ("Policy/temperature", 0.0512 * k),
        ("Train/actor_gradient_norm", 1.25 * k),
        ("Train/critic_gradient_norm", 3.5 * k),
        ("Train/target_q_max", 42.0 * k),
        ("Train/target_q_min", -1.5 * k),
        ("Train/replay_ingress_depth", 8.0),
        ("Train/replay_ingress_occupancy", 2.0),
        ("Train/replay_ingress_high_water", 5.0),
        ("Train/replay_ingress_backpressure_wait_ms", 12.5 * k),
        ("Train/replay_ingress_dropped_batches", 0.0),
        ("Perf/collector_inference_queue_depth", 0.0),
        ("Perf/collector_inference_in_flight", 1.0),
        ("Episode_Termination/time_out", 12.0),
        ("Episode_Termination/base_contact", 3.0),
        ("Train/mean_reward", 23.456 * k),
        ("Train/mean_episode_length", 512.3 * k),
        ("Episode/timeout_rate", 0.125),
        ("reward/tracking_lin_vel", 0.8123 * k),
        ("reward/tracking_ang_vel", 0.4012 * k),
        ("reward/action_rate", -0.0512 * k),
        ("reward/orientation", 0.0),
        // Learner main thread (ms; Learning and Iter Wall in seconds).
        ("Perf/learner_collector_wait_ms", 0.4 * k),
        ("Perf/learner_inference_ms", 0.5 * k),
        ("Perf/learner_collector_release_ms", 0.05 * k),
        ("Perf/learner_replay_batch_wait_ms", 0.1 * k),
        ("Perf/learner_replay_sample_ms", 0.2 * k),
        ("Perf/learning_time", 0.0050 * k),
        ("Perf/iteration_time", 0.0065 * k),
        // Nested diagnostics: never rows, never added to accounted.
        ("Perf/learner_inference_h2d_ms", 0.1 * k),
        ("Perf/learner_inference_forward_ms", 0.35 * k),
        ("Perf/learner_inference_d2h_ms", 0.04 * k),
        ("Perf/replay_ingress_h2d_submit_ms", 0.08 * k),
        // Collector cycle (ms) and Env Step details.
        ("Perf/collector_inference_request_ms", 0.12 * k),
        ("Perf/collector_learner_action_wait_ms", 5.0 * k),
        ("Perf/collector_env_step_ms", 1.9 * k),
        ("Perf/collector_env_step_action_validate_ms", 0.09 * k),
        ("Perf/collector_env_step_apply_action_ms", 0.1 * k),
        ("Perf/collector_env_step_action_backend_ms", 0.12 * k),
        ("Perf/collector_env_step_backend_ms", 1.1 * k),
        ("Perf/collector_env_step_update_state_ms", 0.25 * k),
        ("Perf/collector_env_step_reset_done_ms", 0.08 * k),
        ("Perf/collector_transition_extract_ms", 0.1 * k),
        ("Perf/collector_replay_write_ms", 0.35 * k),
        ("Perf/collector_metrics_publish_ms", 0.09 * k),
        ("Perf/total_fps", 12_345.0 * k),
        ("Terminal/rows_per_sec", 49_380.0 * k),
    ]
}

/// One APPO iteration's values, scaled by `k`.
pub fn appo_values(k: f64) -> Vec<(&'static str, f64)> {
    vec![
        ("Loss/surrogate", -0.0123 * k),
        ("Loss/value", 0.52 * k),
        ("Loss/entropy", 1.1 * k),
        ("Loss/learning_rate", 3e-4),
        ("Policy/mean_std", 0.65 * k),
        ("Train/approx_kl", 0.011 * k),
        ("Train/clip_fraction", 0.12 * k),
        ("Train/global_gradient_norm", 0.81 * k),
        ("Train/behavior_to_current_log_prob_delta", 0.002 * k),
        ("Train/vtrace_rho_clip_fraction", 0.05 * k),
        ("Train/vtrace_rho_p99", 1.4 * k),
        ("Train/ring_available_slots", 1.0),
        ("Train/rollouts_read", 1.0),
        ("Train/mean_reward", 8.75 * k),
        ("Train/mean_episode_length", 250.0 * k),
        ("Episode/timeout_rate", 0.05),
        ("reward/tracking_lin_vel", 0.61 * k),
        ("reward/feet_air_time", 0.05 * k),
        ("Perf/learner_collector_wait_ms", 1.5 * k),
        ("Perf/learner_replay_stage_ms", 2.0 * k),
        ("Perf/learner_replay_sample_ms", 1.0 * k),
        ("Perf/learning_time", 0.012 * k),
        ("Perf/learner_weight_publish_ms", 2.0 * k),
        ("Perf/iteration_time", 0.0195 * k),
        ("Perf/collector_mlp_infer_ms", 0.06 * k),
        ("Perf/collector_env_step_ms", 0.18 * k),
        ("Perf/collection_time", 0.0042 * k),
        ("Perf/total_fps", 98_304.0 * k),
        ("Terminal/rows_per_sec", 98_304.0 * k),
    ]
}

/// One PPO (`onpolicy`) iteration's values, scaled by `k`, as a live logger's terminal holds
/// them: collect and train, and also what a runner may pass that means nothing on-policy (the
/// unpersisted Iter Wall it measured, Rows/s from replay rows).
pub fn onpolicy_values(k: f64) -> Vec<(&'static str, f64)> {
    vec![
        ("Loss/surrogate", -0.0087 * k),
        ("Loss/value", 0.231 * k),
        ("Loss/entropy", 0.95 * k),
        ("Loss/learning_rate", 1e-3),
        ("Policy/mean_std", 0.82 * k),
        ("Train/mean_reward", 14.5 * k),
        ("Train/mean_episode_length", 480.0 * k),
        ("Train/mean_reward/time", 14.5 * k),
        ("Episode/timeout_rate", 0.2),
        ("reward/tracking_lin_vel", 0.72 * k),
        ("reward/action_rate", -0.031 * k),
        ("Perf/collection_time", 0.072 * k),
        ("Perf/learning_time", 0.024 * k),
        ("Perf/iteration_time", 3.2 * k),
        ("Perf/total_fps", 1_024_000.0 * k),
        ("Terminal/rows_per_sec", 4_096_000.0 * k),
    ]
}

fn state(
    facts: RunFacts,
    values: fn(f64) -> Vec<(&'static str, f64)>,
    system: SystemInfo,
) -> TerminalState {
    let mut s = TerminalState::new(facts);
    s.message(100.0, Level::Info, "Warming up...".into());
    for i in 1..=30u64 {
        // The last 30 iterations of an hour of training (warm-up ended at t = 130).
        let t = 3730.0 + 0.25 * i as f64;
        let k = 1.0 + 0.01 * ((i % 5) as f64 - 2.0);
        let ret = 10.0 + 0.5 * i as f64;
        s.push(
            sample(t, 4000 + i, &values(k)),
            Some(ret),
            system,
            (4000 + i) * 4096,
        );
    }
    s.training_started_at = Some(130.0);
    s
}

/// A SAC run at iteration 4030 of 5000, 2 GPUs, 4096 envs per rank, MPS on.
pub fn sac_state() -> TerminalState {
    state(
        RunFacts {
            algo: "sac".into(),
            task: "go2_joystick_flat".into(),
            sim: "mujoco".into(),
            name: None,
            num_gpus: 2,
            num_envs: Some(4096),
            max_iterations: Some(5000),
            profile: Profile::SacFamily,
        },
        sac_values,
        SystemInfo {
            buffer_size: Some(1_000_000),
            batch_size_per_rank: Some(4096),
            cuda_mps: Some(MpsState::On),
        },
    )
}

/// An APPO run at iteration 4030 of 5000, 1 GPU, 2048 envs, MPS ambient.
pub fn appo_state() -> TerminalState {
    state(
        RunFacts {
            algo: "appo".into(),
            task: "g1_walk_flat".into(),
            sim: String::new(),
            name: None,
            num_gpus: 1,
            num_envs: Some(2048),
            max_iterations: Some(5000),
            profile: Profile::Appo,
        },
        appo_values,
        SystemInfo {
            buffer_size: Some(65_536),
            batch_size_per_rank: Some(8192),
            cuda_mps: Some(MpsState::Ambient),
        },
    )
}

/// A PPO run (`onpolicy`) at iteration 4030 of 5000, 1 GPU, 4096 envs; its runner also passed
/// the off-policy system facts (buffer, batch per rank), which mean nothing on-policy.
pub fn onpolicy_state() -> TerminalState {
    state(
        RunFacts {
            algo: "ppo".into(),
            task: "go2_joystick_flat".into(),
            sim: "mujoco".into(),
            name: None,
            num_gpus: 1,
            num_envs: Some(4096),
            max_iterations: Some(5000),
            profile: Profile::OnPolicy,
        },
        onpolicy_values,
        SystemInfo {
            buffer_size: Some(98_304),
            batch_size_per_rank: Some(4096),
            cuda_mps: Some(MpsState::Off),
        },
    )
}

/// A sample at `t` for `iteration` with Trinity-style keys (`docs/contract/rft.md`), as
/// [`Tag::Free`].
pub fn rft_sample(t: f64, iteration: u64, values: &[(&str, f64)]) -> Sample {
    Sample {
        t,
        iteration,
        values: values
            .iter()
            .map(|(k, v)| (Tag::Free(Arc::from(*k)), *v))
            .collect(),
    }
}

/// One GRPO training step's step-level keys (`docs/contract/rft.md`), scaled by `k` (≈ 1).
pub fn rft_values(k: f64) -> Vec<(&'static str, f64)> {
    vec![
        ("rollout/accuracy/mean", 0.4531 * k),
        ("rollout/accuracy/max", 1.0),
        ("rollout/accuracy/min", 0.0),
        ("rollout/format_score/mean", 0.9062 * k),
        ("rollout/format_score/max", 1.0),
        ("rollout/format_score/min", 0.5),
        ("rollout/response_length/mean", 352.4 * k),
        ("rollout/response_length/max", 498.0 * k),
        ("rollout/response_length/min", 203.0 * k),
        ("rollout/total_tokens/sum", 11_264.0),
        ("rollout/model_version/last", 4000.0),
        ("time/update_actor", 12.4 * k),
        ("time/wait_explore_step", 0.85 * k),
        ("time/explore_step", 18.2 * k),
        ("timing_per_token_ms/update_actor", 1.1 * k),
        ("actor/pg_loss", -0.0123 * k),
        ("actor/entropy", 0.82 * k),
        ("actor/kl_loss", 0.0021 * k),
        ("actor/grad_norm", 0.61 * k),
        ("critic/score/mean", 0.4531 * k),
        ("critic/score/max", 1.0),
        ("critic/score/min", 0.0),
        ("critic/advantages/mean", 0.0),
        ("critic/advantages/max", 1.73 * k),
        ("critic/advantages/min", -1.73 * k),
        ("perf/throughput", 2_345.6 * k),
        ("perf/mfu/actor", 0.382 * k),
        ("global_seqlen/mean", 15_040.0 * k),
        ("response_length/mean", 352.4 * k),
        ("response_length/clip_ratio", 0.012 * k),
        ("prompt_length/mean", 118.0),
        ("experience_pipeline/experience_count", 32.0),
        ("sample/model_version/mean", 3999.5),
        ("sample/task_count", 8.0),
    ]
}

/// An eval step's keys (`eval/<taskset>/<metric>/mean@N|std@N|best@k|worst@k`,
/// repeat_times 4) and a bench taskset with repeat_times 8, scaled by `k`
/// (`docs/contract/rft.md`).
pub fn rft_eval_values(k: f64) -> Vec<(&'static str, f64)> {
    vec![
        ("eval/gsm8k-eval/accuracy/mean@4", 0.5625 * k),
        ("eval/gsm8k-eval/accuracy/std@4", 0.2165 * k),
        ("eval/gsm8k-eval/accuracy/best@2", 0.6875 * k),
        ("eval/gsm8k-eval/accuracy/best@4", 0.8125 * k),
        ("eval/gsm8k-eval/accuracy/worst@2", 0.4375 * k),
        ("eval/gsm8k-eval/accuracy/worst@4", 0.3125 * k),
        ("eval/gsm8k-eval/format_score/mean@4", 0.9375 * k),
        ("eval/gsm8k-eval/format_score/std@4", 0.1083 * k),
        ("eval/gsm8k-eval/format_score/best@2", 0.9688 * k),
        ("eval/gsm8k-eval/format_score/best@4", 1.0),
        ("eval/gsm8k-eval/format_score/worst@2", 0.9062 * k),
        ("eval/gsm8k-eval/format_score/worst@4", 0.8750 * k),
        ("eval/gsm8k-eval/total_tokens/sum", 22_400.0),
        ("bench/aime24/accuracy/mean@8", 0.1333 * k),
        ("bench/aime24/accuracy/std@8", 0.0972 * k),
        ("bench/aime24/accuracy/best@2", 0.2000 * k),
        ("bench/aime24/accuracy/best@4", 0.2667 * k),
        ("bench/aime24/accuracy/best@8", 0.3333 * k),
        ("bench/aime24/accuracy/worst@2", 0.0667 * k),
        ("bench/aime24/accuracy/worst@4", 0.0333 * k),
        ("bench/aime24/accuracy/worst@8", 0.0),
    ]
}

/// A GRPO run with the `rft` profile at iteration 4030 of 5000, 8 GPUs: every step has the
/// training keys of [`rft_values`], every fifth step also the eval keys of
/// [`rft_eval_values`] (two eval steps are in the final window).
pub fn rft_state() -> TerminalState {
    let mut s = TerminalState::new(RunFacts {
        algo: "grpo".into(),
        task: "gsm8k".into(),
        sim: String::new(),
        name: None,
        num_gpus: 8,
        num_envs: None,
        max_iterations: Some(5000),
        profile: Profile::Rft,
    });
    s.message(100.0, Level::Info, "Warming up...".into());
    for i in 1..=30u64 {
        let t = 3730.0 + 0.25 * i as f64;
        let k = 1.0 + 0.01 * ((i % 5) as f64 - 2.0);
        let mut values = rft_values(k);
        if i % 5 == 0 {
            values.extend(rft_eval_values(1.0 + 0.02 * ((i % 10) as f64 - 5.0) / 5.0));
        }
        s.push(
            rft_sample(t, 4000 + i, &values),
            None,
            SystemInfo::default(),
            0,
        );
    }
    s.training_started_at = Some(130.0);
    s
}

/// The snapshot of `state` and the fixture's "now" (just after the last sample).
pub fn snapshot_at_end(state: &TerminalState) -> (PanelSnapshot, f64) {
    let snap = state.snapshot();
    let now = snap.updated_at.unwrap_or(0.0) + 0.1;
    (snap, now)
}
