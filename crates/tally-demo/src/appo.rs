//! The APPO demo loop: the collector fills a ring of rollouts on its own clock; the learner
//! consumes ready slots and publishes weights.

use crate::error::Error;
use crate::slow::Slowdown;
use crate::training::ProfileLoop;
use crate::workload::{timed, Noise, Phases};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::Instant;
use tally::{Profile, StepInput, Tracer};

/// The collector: roll out `steps_per_env` steps, report EMA phase times and the rollout.
fn collector(ring: SyncSender<Phases>, steps_per_env: u32, slow: Slowdown, tr: Tracer) {
    let (mut mlp_ema, mut env_ema) = (None::<f64>, None::<f64>);
    let ema = |e: &mut Option<f64>, v: f64| *e = Some(e.map_or(v, |x| 0.9 * x + 0.1 * v));
    let c = "collector";
    loop {
        let t = Instant::now();
        let span = tr.span("rollout", c);
        for _ in 0..steps_per_env {
            ema(
                &mut mlp_ema,
                tr.in_span("mlp_infer", c, || timed(slow.us("mlp_infer", 60.0))),
            );
            ema(
                &mut env_ema,
                tr.in_span("env_step", c, || timed(slow.us("env_step", 180.0))),
            );
        }
        drop(span);
        let rollout = t.elapsed().as_secs_f64();
        let phases = vec![
            ("mlp_infer", mlp_ema.unwrap_or(0.0)),
            ("env_step", env_ema.unwrap_or(0.0)),
            ("rollout", rollout),
        ];
        if ring.send(phases).is_err() {
            return;
        }
    }
}

/// The learner's end of the rollout ring.
pub(crate) struct Appo {
    ring: Receiver<Phases>,
    collector: JoinHandle<()>,
    slow: Slowdown,
    tracer: Tracer,
}

impl ProfileLoop for Appo {
    const PROFILE: Profile = Profile::Appo;
    const STEPS_PER_ENV: u32 = 16;

    fn start(slow: &Slowdown, tracer: &Tracer) -> Result<Self, Error> {
        let (ring_tx, ring) = sync_channel::<Phases>(2);
        let (collector_slow, tr) = (slow.clone(), tracer.clone());
        let collector = thread::Builder::new()
            .name("collector".into())
            .spawn(move || collector(ring_tx, Self::STEPS_PER_ENV, collector_slow, tr))
            .map_err(|e| Error::Run(format!("spawn collector thread: {e}")))?;
        Ok(Appo {
            ring,
            collector,
            slow: slow.clone(),
            tracer: tracer.clone(),
        })
    }

    fn learner_phases(&mut self, input: StepInput, noise: &mut Noise) -> Result<StepInput, Error> {
        let (tr, l) = (&self.tracer, "learner");
        let t = Instant::now();
        let rollout = tr
            .in_span("collector_wait", l, || self.ring.recv())
            .map_err(|_| Error::Run("collector thread stopped".into()))?;
        let mut input = input.learner("collector_wait", t.elapsed().as_secs_f64());
        let slow = &self.slow;
        input = input
            .learner(
                "replay_stage",
                tr.in_span("replay_stage", l, || timed(slow.us("replay_stage", 250.0))),
            )
            .learner(
                "replay_sample",
                tr.in_span("replay_sample", l, || timed(slow.us("replay_sample", 80.0))),
            );
        let learning = tr.in_span("learning", l, || {
            timed(slow.us("learning", 3000.0 * noise.jitter(0.1)))
        });
        input = input.learner("learning", learning);
        input = input.learner(
            "weight_publish",
            tr.in_span("weight_publish", l, || {
                timed(slow.us("weight_publish", 150.0))
            }),
        );
        for (k, v) in rollout {
            input = input.collector(k, v);
        }
        Ok(input)
    }

    fn finish(self) -> Result<(), Error> {
        // Closing the ring makes the collector's next send fail: it returns.
        drop(self.ring);
        self.collector
            .join()
            .map_err(|_| Error::Run("collector thread panicked".into()))
    }
}
