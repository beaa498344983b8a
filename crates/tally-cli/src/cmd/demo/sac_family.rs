//! The SAC-family demo loop: the collector steps environments under a per-tick barrier with
//! learner-owned inference, and the replay buffer fills before the first update.

use super::config::DemoConfig;
use super::training::ProfileLoop;
use super::workload::{mean_phases, timed, us, Noise, Phases};
use crate::error::CliError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::Instant;
use tally::{Logger, Profile, StepInput, Tracer};

/// The collector: ask for an action, wait for it, step, write replay, report its phases.
fn collector(req: SyncSender<()>, act: Receiver<()>, report: Sender<Phases>, tr: Tracer) {
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
        let validate = tr.in_span("env_step_action_validate", c, || timed(us(20)));
        let apply = tr.in_span("env_step_apply_action", c, || timed(us(40)));
        let backend = tr.in_span("env_step_backend", c, || {
            timed(us((1200.0 * noise.jitter(0.2)) as u64))
        });
        let update = tr.in_span("env_step_update_state", c, || timed(us(250)));
        let reset_us = if noise.next() < 0.1 { 400 } else { 30 };
        let reset = tr.in_span("env_step_reset_done", c, || timed(us(reset_us)));
        drop(step);
        let env_step = t.elapsed().as_secs_f64();
        let extract = tr.in_span("transition_extract", c, || timed(us(15)));
        let write = tr.in_span("replay_write", c, || timed(us(350)));
        let publish = tr.in_span("metrics_publish", c, || timed(us(40)));
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
pub(super) struct SacFamily {
    requests: Receiver<()>,
    actions: SyncSender<()>,
    reports: Receiver<Phases>,
    collector: JoinHandle<()>,
    tracer: Tracer,
}

impl ProfileLoop for SacFamily {
    const PROFILE: Profile = Profile::SacFamily;
    const STEPS_PER_ENV: u32 = 1;

    fn start(tracer: &Tracer) -> Result<Self, CliError> {
        let (req_tx, requests) = sync_channel::<()>(1);
        let (actions, act_rx) = sync_channel::<()>(1);
        let (rep_tx, reports) = channel::<Phases>();
        let tr = tracer.clone();
        let collector = thread::Builder::new()
            .name("collector".into())
            .spawn(move || collector(req_tx, act_rx, rep_tx, tr))
            .map_err(|e| CliError::Run(format!("spawn collector thread: {e}")))?;
        Ok(SacFamily {
            requests,
            actions,
            reports,
            collector,
            tracer: tracer.clone(),
        })
    }

    fn warm_up(
        &mut self,
        c: &DemoConfig,
        log: &Logger,
        stop: &AtomicBool,
    ) -> Result<bool, CliError> {
        let target = 10 * c.num_envs;
        for k in 1..=10u64 {
            if stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            // Warm-up: the replay buffer fills before the first update.
            self.requests
                .recv()
                .map_err(|_| CliError::Run("collector stopped during warm-up".into()))?;
            self.actions
                .send(())
                .map_err(|_| CliError::Run("collector stopped during warm-up".into()))?;
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

    fn learner_phases(
        &mut self,
        input: StepInput,
        noise: &mut Noise,
    ) -> Result<StepInput, CliError> {
        let (tr, l) = (&self.tracer, "learner");
        let t = Instant::now();
        tr.in_span("collector_wait", l, || self.requests.recv())
            .map_err(|_| CliError::Run("collector thread stopped".into()))?;
        let mut input = input.learner("collector_wait", t.elapsed().as_secs_f64());
        let t = Instant::now();
        let inference = tr.span("inference", l);
        let h2d = tr.in_span("inference_h2d", l, || timed(us(60)));
        let fwd = tr.in_span("inference_forward", l, || timed(us(350)));
        let d2h = tr.in_span("inference_d2h", l, || timed(us(40)));
        drop(inference);
        input = input
            .learner("inference", t.elapsed().as_secs_f64())
            .learner("inference_h2d", h2d)
            .learner("inference_forward", fwd)
            .learner("inference_d2h", d2h);
        let t = Instant::now();
        tr.in_span("collector_release", l, || self.actions.send(()))
            .map_err(|_| CliError::Run("collector thread stopped".into()))?;
        input = input.learner("collector_release", t.elapsed().as_secs_f64());
        input = input
            .learner(
                "replay_batch_wait",
                tr.in_span("replay_batch_wait", l, || timed(us(40))),
            )
            .learner(
                "replay_sample",
                tr.in_span("replay_sample", l, || timed(us(120))),
            );
        let start = tr.now();
        let learning = tr.in_span("learning", l, || {
            timed(us((5000.0 * noise.jitter(0.1)) as u64))
        });
        // Stands in for kernels a runner would time with CUDA events: the GPU track.
        let _ = tr.add_span("learning_kernels", "gpu", start, 0.9 * learning, "gpu");
        input = input.learner("learning", learning);
        let submit = 0.00008 * noise.jitter(0.2);
        // Submitted to the GPU, timed there: also on the GPU track.
        let _ = tr.add_span("replay_ingress_h2d_submit", "gpu", tr.now(), submit, "gpu");
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

    fn finish(self) -> Result<(), CliError> {
        // Closing the channels makes the collector's next send or receive fail: it returns.
        drop(self.requests);
        drop(self.actions);
        drop(self.reports);
        self.collector
            .join()
            .map_err(|_| CliError::Run("collector thread panicked".into()))
    }
}
