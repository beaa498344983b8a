//! The demo's synthetic workload: phases that take measurable time, a reproducible noise
//! source, and the training-like metric curves every profile logs.

use std::thread;
use std::time::{Duration, Instant};
use tally::{Profile, StepInput};

/// Busy-wait short phases (sleep overshoots sub-millisecond durations), sleep long ones.
pub(crate) fn work(d: Duration) {
    if d > Duration::from_micros(300) {
        thread::sleep(d);
    } else {
        let t = Instant::now();
        while t.elapsed() < d {
            std::hint::spin_loop();
        }
    }
}

/// Work for `d` and return the seconds it really took.
pub(crate) fn timed(d: Duration) -> f64 {
    let t = Instant::now();
    work(d);
    t.elapsed().as_secs_f64()
}

/// A tiny deterministic noise source (xorshift), so runs are reproducible.
pub(crate) struct Noise(pub(crate) u64);

impl Noise {
    /// A uniform draw in [0, 1).
    pub(crate) fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// 1 ± `amp` multiplicative jitter.
    pub(crate) fn jitter(&mut self, amp: f64) -> f64 {
        1.0 + amp * (2.0 * self.next() - 1.0)
    }
}

/// Collector timings of one report, seconds.
pub(crate) type Phases = Vec<(&'static str, f64)>;

/// The per-phase mean of several collector reports.
pub(crate) fn mean_phases(reports: &[Phases]) -> Phases {
    let mut out: Phases = Vec::new();
    for r in reports {
        for (k, v) in r {
            match out.iter_mut().find(|(p, _)| p == k) {
                Some(e) => e.1 += v,
                None => out.push((k, *v)),
            }
        }
    }
    let n = reports.len().max(1) as f64;
    out.iter_mut().for_each(|e| e.1 /= n);
    out
}

/// Training-like statistics for iteration `i` of `n`: decaying losses, rising reward.
pub(crate) fn training_metrics(
    algo: &str,
    profile: Profile,
    i: u64,
    n: u64,
    noise: &mut Noise,
) -> Vec<(&'static str, f64)> {
    let p = i as f64 / n as f64;
    let decay = (-3.0 * p).exp();
    let mut m: Vec<(&'static str, f64)> = match profile {
        Profile::SacFamily => vec![
            ("Loss/critic", 2.0 * decay * noise.jitter(0.1) + 0.05),
            ("Loss/actor", -5.0 - 20.0 * p + noise.jitter(0.05)),
            ("Loss/temperature", -0.3 * decay * noise.jitter(0.1)),
            ("Loss/entropy", -1.5 + 0.3 * decay),
            ("Policy/temperature", 0.2 * decay + 0.005),
            ("Train/actor_gradient_norm", 1.2 * noise.jitter(0.2)),
            (
                "Train/critic_gradient_norm",
                4.0 * decay * noise.jitter(0.2) + 0.5,
            ),
            ("Train/target_q_max", 20.0 + 40.0 * p),
            ("Train/target_q_min", -2.0 + 5.0 * p),
            ("Train/replay_ingress_depth", 8.0),
            (
                "Train/replay_ingress_occupancy",
                (noise.next() * 3.0).floor(),
            ),
            ("Train/replay_ingress_high_water", 5.0),
            ("Train/replay_ingress_backpressure_wait_ms", 0.5 * i as f64),
            ("Train/replay_ingress_dropped_batches", 0.0),
        ],
        Profile::Appo => vec![
            ("Loss/surrogate", -0.01 * noise.jitter(0.5)),
            ("Loss/value", 0.5 * decay * noise.jitter(0.1) + 0.02),
            ("Loss/entropy", 1.2 - 0.4 * p),
            ("Loss/learning_rate", 3e-4),
            ("Policy/mean_std", 1.0 - 0.6 * p),
            ("Train/approx_kl", 0.01 * noise.jitter(0.3)),
            ("Train/clip_fraction", 0.1 * noise.jitter(0.3)),
            ("Train/global_gradient_norm", 0.8 * noise.jitter(0.2)),
            (
                "Train/behavior_to_current_log_prob_delta",
                0.002 * noise.jitter(0.5),
            ),
            ("Train/vtrace_rho_clip_fraction", 0.05 * noise.jitter(0.3)),
            ("Train/vtrace_rho_p99", 1.4 * noise.jitter(0.1)),
            ("Train/ring_available_slots", 1.0),
            ("Train/rollouts_read", 1.0),
        ],
        Profile::OnPolicy | Profile::Rft => vec![
            ("Loss/surrogate", -0.01 * noise.jitter(0.5)),
            ("Loss/value", 0.5 * decay * noise.jitter(0.1) + 0.02),
            ("Loss/entropy", 1.2 - 0.4 * p),
            ("Loss/learning_rate", 1e-3),
            ("Policy/mean_std", 1.0 - 0.6 * p),
        ],
    };
    if algo == "flashsac" {
        m.push(("Train/reward_scale_std", 1.0 + 0.5 * p));
    }
    m.push((
        "Episode_Termination/time_out",
        (noise.next() * 20.0).floor(),
    ));
    m.push((
        "Episode_Termination/base_contact",
        (noise.next() * 5.0).floor(),
    ));
    m
}

/// Reward terms at training progress `p` (0..1): tracking terms rise, penalties shrink.
pub(crate) fn rewards(p: f64, noise: &mut Noise) -> Vec<(&'static str, f64)> {
    vec![
        ("tracking_lin_vel", 0.8 * p * noise.jitter(0.05)),
        ("tracking_ang_vel", 0.4 * p * noise.jitter(0.05)),
        ("action_rate", -0.05 * (1.0 - 0.5 * p) * noise.jitter(0.1)),
        ("feet_air_time", 0.1 * p * noise.jitter(0.2)),
        ("orientation", -0.02 * noise.jitter(0.3)),
    ]
}

/// A simulated rank's view of the measured iteration: small per-rank differences in what is
/// measured, none in what is configured or counted.
pub(crate) fn jitter_rank(base: &StepInput, rank: usize, noise: &mut Noise) -> StepInput {
    let mut r = base.clone();
    let f = |noise: &mut Noise| noise.jitter(0.05);
    // Sizes and counts (the schema's summed tags) are exact on every rank.
    let measured = |k: &str| {
        tally::schema::metric(k).is_some_and(|m| m.reduction != tally::schema::Reduction::Sum)
    };
    r.metrics
        .iter_mut()
        .filter(|(k, _)| measured(k))
        .for_each(|e| e.1 *= f(noise));
    // Each rank runs a little slower than the one before; its phases vary on their own, and
    // its Iter Wall keeps the base's unnamed rest, so the phases never exceed it
    // (docs/contract/timelines.md "The contract warning").
    let speed = 1.0 + 0.01 * rank as f64;
    let base_accounted = accounted(&r);
    r.learner.iter_mut().for_each(|e| e.1 *= speed * f(noise));
    let rank_accounted = accounted(&r);
    if let Some(t) = r.iteration_time.as_mut() {
        *t = (*t - base_accounted).max(0.0) * speed + rank_accounted;
    }
    r.collector.iter_mut().for_each(|e| e.1 *= speed * f(noise));
    r.rewards.iter_mut().for_each(|e| e.1 *= f(noise));
    r
}

/// The sum of the exclusive learner phases of a step (nested diagnostics excluded).
fn accounted(input: &StepInput) -> f64 {
    input
        .learner
        .iter()
        .filter(|(k, _)| tally::timeline::LEARNER_ORDER.contains(&k.as_ref()))
        .map(|(_, v)| v)
        .sum()
}
