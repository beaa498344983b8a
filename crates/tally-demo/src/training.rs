//! The iteration loop the SAC-family, APPO and on-policy demos share: each profile brings its
//! collector thread and learner phases ([`ProfileLoop`]); this loop adds the training
//! statistics, rewards and rates, and submits the iteration (per rank when `--gpus` > 1).

use crate::config::DemoConfig;
use crate::error::Error;
use crate::slow::Slowdown;
use crate::workload::{jitter_rank, rewards, training_metrics, Noise};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use tally::{Logger, MpsState, Profile, StepInput, SystemInfo, Tracer};

/// One timing profile's threads: its collector and the learner phases of one iteration.
pub(crate) trait ProfileLoop: Sized {
    /// The profile whose timelines the loop produces.
    const PROFILE: Profile;
    /// Environment steps each environment takes per iteration.
    const STEPS_PER_ENV: u32;
    /// The first iteration number (on-policy runners count from 0).
    const FIRST_ITERATION: u64 = 1;

    /// Spawn the collector thread; `slow` scales the simulated phases, and the learner and
    /// collector record spans on `tracer`.
    fn start(slow: &Slowdown, tracer: &Tracer) -> Result<Self, Error>;

    /// Work before the first iteration; `Ok(false)` when `stop` ended it.
    fn warm_up(
        &mut self,
        _c: &DemoConfig,
        _log: &Logger,
        _stop: &AtomicBool,
    ) -> Result<bool, Error> {
        Ok(true)
    }

    /// Run one iteration's learner phases, with the collector's report, into `input`.
    fn learner_phases(&mut self, input: StepInput, noise: &mut Noise) -> Result<StepInput, Error>;

    /// Stop the collector thread and wait for it.
    fn finish(self) -> Result<(), Error>;
}

/// The training loop of profile `L`; `Ok(false)` when `stop` ended it early.
pub(crate) fn train<L: ProfileLoop>(
    c: &DemoConfig,
    log: &mut Logger,
    stop: &AtomicBool,
) -> Result<bool, Error> {
    let mut noise = Noise(0x7a11_u64 ^ c.iterations);
    log.status(tally::Level::Info, "Warming up...");
    // This thread is the learner: the trace names it so.
    log.tracer().name_thread("learner");
    let mut profile = L::start(&c.slow, log.tracer())?;
    if !profile.warm_up(c, log, stop)? {
        return Ok(false);
    }
    let first = L::FIRST_ITERATION;
    let mut env_steps = vec![0u64; c.gpus as usize];
    let mut returns = 0.0;
    let mut completed = true;
    for i in first..first + c.iterations {
        if stop.load(Ordering::SeqCst) {
            completed = false;
            break;
        }
        if c.panic_at == Some(i) {
            panic!("tally demo: injected panic at iteration {i} (--panic-at-iteration)");
        }
        let t0 = Instant::now();
        let steps = c.num_envs * u64::from(L::STEPS_PER_ENV);
        let mut input = profile.learner_phases(StepInput::new(i), &mut noise)?;
        let p = (i - first) as f64 / c.iterations as f64;
        returns = 0.9 * returns
            + 0.1 * (50.0 / (1.0 + (-10.0 * (p - 0.4)).exp()) + 2.0 * noise.jitter(0.5));
        for (k, v) in training_metrics(&c.algo, L::PROFILE, i, c.iterations, &mut noise) {
            input = input.metric(k, v);
        }
        for (k, v) in rewards(p, &mut noise) {
            input = input.reward(k, v);
        }
        input = input
            .episode_return(returns)
            .episode_length(200.0 + 800.0 * p)
            .steps_this_iter(steps as f64);
        let mut system = SystemInfo {
            cuda_mps: Some(MpsState::Off),
            ..SystemInfo::default()
        };
        // An on-policy runner has no replay buffer: no replay rows, buffer or batch per rank
        // (docs/contract/panel.md "System column").
        if L::PROFILE != Profile::OnPolicy {
            let replay_size = ((i + 10) * c.num_envs).min(1_000_000);
            let _ = log.tracer().counter("replay_size", replay_size as f64);
            input = input.replay_rows_this_iter((steps * 4) as f64);
            system.buffer_size = Some(replay_size);
            system.batch_size_per_rank = Some(4096);
        }
        input = input.system(system);
        if i > first + 5 {
            input = input.timeout_rate(0.1 + 0.05 * noise.next());
        }
        input = input.iteration_time(t0.elapsed().as_secs_f64());
        if c.gpus == 1 {
            env_steps[0] += steps;
            input = input.env_steps(env_steps[0]);
            log.step(&input)?;
        } else {
            // The gradient-sync figures only where the registry gives them to the profile.
            let dp_sync = tally::schema::lookup::metric("Perf/dp_gradient_sync_ms_per_rank")
                .is_some_and(|m| m.profiles.contains(L::PROFILE));
            let ranks: Vec<StepInput> = (0..c.gpus as usize)
                .map(|r| {
                    env_steps[r] += steps;
                    let mut ri = jitter_rank(&input, r, &mut noise).env_steps(env_steps[r]);
                    if dp_sync {
                        ri.metrics.push((
                            "Perf/dp_gradient_sync_ms_per_rank".into(),
                            0.8 * noise.jitter(0.3),
                        ));
                        ri.metrics
                            .push(("Perf/dp_gradient_sync_calls_per_rank".into(), 3.0));
                    }
                    ri
                })
                .collect();
            log.step_ranks(&ranks)?;
        }
    }
    profile.finish()?;
    Ok(completed)
}
