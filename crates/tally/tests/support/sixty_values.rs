//! The 60-value SAC-family record shared by the step bench and the allocation test, so both
//! measure the same step.

use tally::StepInput;

/// The SAC family's learner metrics of the record, in the order logged.
pub const SAC_METRICS: [&str; 17] = [
    "Loss/critic",
    "Loss/actor",
    "Loss/temperature",
    "Loss/entropy",
    "Policy/temperature",
    "Train/actor_gradient_norm",
    "Train/critic_gradient_norm",
    "Train/target_q_max",
    "Train/target_q_min",
    "Train/reward_scale_std",
    "Train/replay_ingress_depth",
    "Train/replay_ingress_occupancy",
    "Train/replay_ingress_high_water",
    "Train/replay_ingress_backpressure_wait_ms",
    "Train/replay_ingress_dropped_batches",
    "Perf/dp_gradient_sync_ms_per_rank",
    "Perf/dp_gradient_sync_calls_per_rank",
];

/// The termination causes logged after them (family values).
pub const TERMINATIONS: [&str; 3] = [
    "Episode_Termination/time_out",
    "Episode_Termination/base_contact",
    "Episode_Termination/joint_limit",
];

/// The learner phases, in the order logged.
pub const LEARNER_PHASES: [&str; 10] = [
    "collector_wait",
    "inference",
    "collector_release",
    "replay_batch_wait",
    "replay_sample",
    "learning",
    "inference_h2d",
    "inference_forward",
    "inference_d2h",
    "replay_ingress_h2d_submit",
];

/// The collector phases, in the order logged.
pub const COLLECTOR_PHASES: [&str; 11] = [
    "inference_request",
    "learner_action_wait",
    "env_step",
    "env_step_action_validate",
    "env_step_apply_action",
    "env_step_backend",
    "env_step_update_state",
    "env_step_reset_done",
    "transition_extract",
    "replay_write",
    "metrics_publish",
];

/// A realistic 60-value SAC-family iteration: 20 metrics, 11 learner phases, 11 collector
/// phases, 5 flight gauges, 8 reward terms, and the dedicated fields.
pub fn record(i: u64) -> StepInput {
    let mut s = StepInput::new(i).env_steps(4096 * i);
    for &t in SAC_METRICS.iter().chain(&TERMINATIONS) {
        s = s.metric(t, 1.5);
    }
    for p in LEARNER_PHASES {
        s = s.learner(p, 0.001);
    }
    for p in COLLECTOR_PHASES {
        s = s.collector(p, 0.001);
    }
    for g in [
        "queue_depth",
        "in_flight",
        "max_in_flight",
        "publication_lag",
        "max_publication_lag",
    ] {
        s = s.collector_inference(g, 1.0);
    }
    for r in [
        "lin_vel",
        "ang_vel",
        "action_rate",
        "air_time",
        "orientation",
        "torques",
        "collision",
        "stand_still",
    ] {
        s = s.reward(r, 0.1);
    }
    s.iteration_time(0.02)
        .episode_return(3.0)
        .episode_length(200.0)
        .timeout_rate(0.1)
        .steps_this_iter(4096.0)
}
