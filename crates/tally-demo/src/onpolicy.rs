//! The on-policy (PPO) demo loop: the learner asks for a rollout, waits for it, then updates.

use crate::error::Error;
use crate::slow::Slowdown;
use crate::training::ProfileLoop;
use crate::workload::{timed, work, Noise, Phases};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::Instant;
use tally::{Profile, StepInput, Tracer};

/// The collector: on each request, roll out `steps_per_env` steps and report the rollout time.
fn collector(
    go: Receiver<()>,
    done: SyncSender<Phases>,
    steps_per_env: u32,
    slow: Slowdown,
    tr: Tracer,
) {
    while go.recv().is_ok() {
        let t = Instant::now();
        let span = tr.span("rollout", "collector");
        for _ in 0..steps_per_env {
            work(slow.us("env_step", 120.0));
        }
        drop(span);
        if done
            .send(vec![("rollout", t.elapsed().as_secs_f64())])
            .is_err()
        {
            return;
        }
    }
}

/// The learner's ends of the request and rollout channels.
pub(crate) struct OnPolicy {
    go: SyncSender<()>,
    rollouts: Receiver<Phases>,
    collector: JoinHandle<()>,
    slow: Slowdown,
    tracer: Tracer,
}

impl ProfileLoop for OnPolicy {
    const PROFILE: Profile = Profile::OnPolicy;
    const STEPS_PER_ENV: u32 = 24;
    const FIRST_ITERATION: u64 = 0;

    fn start(slow: &Slowdown, tracer: &Tracer) -> Result<Self, Error> {
        let (go, go_rx) = sync_channel::<()>(1);
        let (done_tx, rollouts) = sync_channel::<Phases>(2);
        let (collector_slow, tr) = (slow.clone(), tracer.clone());
        let collector = thread::Builder::new()
            .name("collector".into())
            .spawn(move || collector(go_rx, done_tx, Self::STEPS_PER_ENV, collector_slow, tr))
            .map_err(|e| Error::Run(format!("spawn collector thread: {e}")))?;
        Ok(OnPolicy {
            go,
            rollouts,
            collector,
            slow: slow.clone(),
            tracer: tracer.clone(),
        })
    }

    fn learner_phases(&mut self, input: StepInput, noise: &mut Noise) -> Result<StepInput, Error> {
        self.go
            .send(())
            .map_err(|_| Error::Run("collector thread stopped".into()))?;
        let rollout = self
            .rollouts
            .recv()
            .map_err(|_| Error::Run("collector thread stopped".into()))?;
        let learning = self.tracer.in_span("learning", "learner", || {
            timed(self.slow.us("learning", 2000.0 * noise.jitter(0.1)))
        });
        let mut input = input.learner("learning", learning);
        for (k, v) in rollout {
            input = input.collector(k, v);
        }
        Ok(input)
    }

    fn finish(self) -> Result<(), Error> {
        // Closing the request channel ends the collector's loop.
        drop(self.go);
        drop(self.rollouts);
        self.collector
            .join()
            .map_err(|_| Error::Run("collector thread panicked".into()))
    }
}
