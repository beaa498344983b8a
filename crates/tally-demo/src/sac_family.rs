//! The SAC-family demo loop: the collector steps environments under a per-tick barrier with
//! learner-owned inference, and the replay buffer fills before the first update.

use crate::config::DemoConfig;
use crate::error::Error;
use crate::slow::Slowdown;
use crate::training::ProfileLoop;
use crate::workload::{mean_phases, timed, Noise, Phases};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::Instant;
use tally::{Logger, Profile, StepInput, Tracer};

/// The collector: ask for an action, wait for it, step, write replay, report its phases.
fn collector(
    req: SyncSender<()>,
    act: Receiver<()>,
    report: Sender<Phases>,
    slow: Slowdown,
    tr: Tracer,
) {
    let mut noise = Noise(0x5ac);
    let c = "collector";
    loop {
        let t = Instant::now();
        if tr.in_span("inference_request", c, || req.send(())).is_err() {
            return;
        }
        let inference_request = t.elapsed().as_secs_f64();
        let t = Instant::now();
        if tr.in_span("learner_action_wait", c, || act.recv()).is_err() {
            return;
        }
        let learner_action_wait = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let step = tr.span("env_step", c);
        let env = |part: &str, micros: f64| {
            tr.in_span(part, c, || timed(slow.part_us("env_step", part, micros)))
        };
        let validate = env("env_step_action_validate", 20.0);
        let apply = env("env_step_apply_action", 40.0);
        // The default collector work is about 0.9 of the learner's update: a balanced
        // pipeline with margin both ways (each side's wait well under the bottleneck table's).
        let backend = env("env_step_backend", 3800.0 * noise.jitter(0.2));
        let update = env("env_step_update_state", 250.0);
        let reset_us = if noise.next() < 0.1 { 400.0 } else { 30.0 };
        let reset = env("env_step_reset_done", reset_us);
        drop(step);
        let env_step = t.elapsed().as_secs_f64();
        let phase = |name: &str, micros: f64| tr.in_span(name, c, || timed(slow.us(name, micros)));
        let extract = phase("transition_extract", 15.0);
        let write = phase("replay_write", 350.0);
        let publish = phase("metrics_publish", 40.0);
        let phases = vec![
            ("inference_request", inference_request),
            ("learner_action_wait", learner_action_wait),
            ("env_step", env_step),
            ("env_step_action_validate", validate),
            ("env_step_apply_action", apply),
            ("env_step_backend", backend),
            ("env_step_update_state", update),
            ("env_step_reset_done", reset),
            ("transition_extract", extract),
            ("replay_write", write),
            ("metrics_publish", publish),
        ];
        if report.send(phases).is_err() {
            return;
        }
    }
}

/// The learner's ends of the collector's channels.
pub(crate) struct SacFamily {
    requests: Receiver<()>,
    actions: SyncSender<()>,
    reports: Receiver<Phases>,
    collector: JoinHandle<()>,
    slow: Slowdown,
    tracer: Tracer,
}

impl ProfileLoop for SacFamily {
    const PROFILE: Profile = Profile::SacFamily;
    const STEPS_PER_ENV: u32 = 1;

    fn start(slow: &Slowdown, tracer: &Tracer) -> Result<Self, Error> {
        let (req_tx, requests) = sync_channel::<()>(1);
        let (actions, act_rx) = sync_channel::<()>(1);
        let (rep_tx, reports) = channel::<Phases>();
        let (collector_slow, tr) = (slow.clone(), tracer.clone());
        let collector = thread::Builder::new()
            .name("collector".into())
            .spawn(move || collector(req_tx, act_rx, rep_tx, collector_slow, tr))
            .map_err(|e| Error::Run(format!("spawn collector thread: {e}")))?;
        Ok(SacFamily {
            requests,
            actions,
            reports,
            collector,
            slow: slow.clone(),
            tracer: tracer.clone(),
        })
    }

    fn warm_up(&mut self, c: &DemoConfig, log: &Logger, stop: &AtomicBool) -> Result<bool, Error> {
        let target = 10 * c.num_envs;
        for k in 1..=10u64 {
            if stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            // Warm-up: the replay buffer fills before the first update.
            self.requests
                .recv()
                .map_err(|_| Error::Run("collector stopped during warm-up".into()))?;
            self.actions
                .send(())
                .map_err(|_| Error::Run("collector stopped during warm-up".into()))?;
            let n = k * c.num_envs;
            log.status(
                tally::Level::Info,
                format!(
                    "Buffer fill: {n}/{target} ({:.0}%)",
                    n as f64 / target as f64 * 100.0
                ),
            );
        }
        while self.reports.try_recv().is_ok() {}
        Ok(true)
    }

    fn learner_phases(&mut self, input: StepInput, noise: &mut Noise) -> Result<StepInput, Error> {
        let (tr, l) = (&self.tracer, "learner");
        let t = Instant::now();
        tr.in_span("collector_wait", l, || self.requests.recv())
            .map_err(|_| Error::Run("collector thread stopped".into()))?;
        let mut input = input.learner("collector_wait", t.elapsed().as_secs_f64());
        let t = Instant::now();
        let slow = &self.slow;
        let inference = tr.span("inference", l);
        let part = |name: &str, micros: f64| {
            tr.in_span(name, l, || timed(slow.part_us("inference", name, micros)))
        };
        let h2d = part("inference_h2d", 60.0);
        let fwd = part("inference_forward", 350.0);
        let d2h = part("inference_d2h", 40.0);
        drop(inference);
        input = input
            .learner("inference", t.elapsed().as_secs_f64())
            .learner("inference_h2d", h2d)
            .learner("inference_forward", fwd)
            .learner("inference_d2h", d2h);
        let t = Instant::now();
        tr.in_span("collector_release", l, || self.actions.send(()))
            .map_err(|_| Error::Run("collector thread stopped".into()))?;
        input = input.learner("collector_release", t.elapsed().as_secs_f64());
        input = input
            .learner(
                "replay_batch_wait",
                tr.in_span("replay_batch_wait", l, || {
                    timed(slow.us("replay_batch_wait", 40.0))
                }),
            )
            .learner(
                "replay_sample",
                tr.in_span("replay_sample", l, || {
                    timed(slow.us("replay_sample", 120.0))
                }),
            );
        let start = tr.now();
        let learning = tr.in_span("learning", l, || {
            timed(slow.us("learning", 5000.0 * noise.jitter(0.1)))
        });
        // Stands in for kernels a runner would time with CUDA events, when the run asks for
        // them (`trace_cuda_events`): the GPU track.
        let cuda_events = tr.cuda_events();
        if cuda_events {
            let _ = tr.add_span("learning_kernels", "gpu", start, 0.9 * learning, "gpu");
        }
        input = input.learner("learning", learning);
        // A background submit: reported, not spent on this thread; timed on the GPU track.
        let submit = 0.00008 * noise.jitter(0.2) * slow.factor("replay_ingress_h2d_submit");
        if cuda_events {
            let _ = tr.add_span("replay_ingress_h2d_submit", "gpu", tr.now(), submit, "gpu");
        }
        input = input.learner("replay_ingress_h2d_submit", submit);
        let reports: Vec<Phases> = self.reports.try_iter().collect();
        let _ = tr.counter("ingress_depth", reports.len() as f64);
        for (k, v) in mean_phases(&reports) {
            input = input.collector(k, v);
        }
        for (k, v) in [
            ("queue_depth", 0.0),
            ("in_flight", 1.0),
            ("max_in_flight", 1.0),
            ("publication_lag", 0.0),
            ("max_publication_lag", 1.0),
        ] {
            input = input.collector_inference(k, v);
        }
        Ok(input)
    }

    fn finish(self) -> Result<(), Error> {
        // Closing the channels makes the collector's next send or receive fail: it returns.
        drop(self.requests);
        drop(self.actions);
        drop(self.reports);
        self.collector
            .join()
            .map_err(|_| Error::Run("collector thread panicked".into()))
    }
}
