//! Starting a run: the run directory (new, or a resumed one under its lock), its artefacts,
//! the sinks and the writer thread, the trace and the terminal state a [`Logger`] steps into.

use super::Logger;
use crate::error::{Error, Result};
use crate::health::live::finding_text;
use crate::health::pace::PaceMeter;
use crate::health::stall_exit::{Ending, LastSummary, StallExit};
use crate::health::webhook::WebhookThread;
use crate::health::{LiveHealth, RuleSet};
use crate::input::{Backend, LoggerConfig};
use crate::remote::RemoteSinks;
use crate::resolve::{Axis, Resolver};
use crate::resume::Carried;
use crate::room::Room;
use crate::run::{
    initial_summary, iso_utc, run_identity, utc, write_run_config, write_run_summary,
    RUN_CONFIG_FILE, RUN_SUMMARY_FILE,
};
use crate::rundir::{create_run_dir, RunDirSpec, Unstarted};
use crate::runlock::RunLock;
use crate::sink::{Sink, TensorBoardSink};
use crate::summary::SummaryState;
use crate::terminal::{Level, RunFacts, TerminalState};
use crate::trace::Tracer;
use crate::user::UserMetrics;
use crate::writer::WriterThread;
use std::sync::{Arc, Mutex};
use tally_clock::{Clock, SystemClock};
use tally_schema::artifacts::{LoggerFacts, RunStatus};
use tally_tfevents::WriterOptions;

impl Logger {
    /// Create the run directory, `run_config.json`, the first `run_summary.json`, and the
    /// backend named by the config (TensorBoard by default).
    pub fn new(config: LoggerConfig) -> Result<Self> {
        Self::with_sinks(config, Vec::new(), Arc::new(SystemClock::default()))
    }

    /// As [`Logger::new`], with additional sinks (the Python W&B sink, a test's memory sink)
    /// and the run's clock (every time the logger, its writer, trace and panel read).
    pub fn with_sinks(
        config: LoggerConfig,
        mut extra: Vec<Box<dyn Sink>>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self> {
        config.check()?;
        if config.backend == Backend::None {
            if let Some(s) = extra.iter().find(|s| s.is_remote()) {
                return Err(Error::Config(format!(
                    "the {} sink is fed from the run's event file, and logger=none writes none: \
                     use logger=tensorboard (or wandb)",
                    s.name()
                )));
            }
        }
        if let Some(s) = extra
            .iter()
            .find(|s| s.is_remote() && config.upload.is_some())
        {
            // A remote sink follows the event file, which a run in a bucket writes as segments
            // leaving staging once put (docs/contract/object-storage.md "Writing").
            return Err(Error::Config(format!(
                "the {} sink follows the run's event file, which a log_dir in object storage \
                 writes as segments: not supported yet; log to a local directory",
                s.name()
            )));
        }
        if let Some(tracker) = config.backend.tracker() {
            if !extra.iter().any(|s| s.name() == tracker) {
                let package = if tracker == "wandb" {
                    "the W&B SDK"
                } else {
                    "its Python package"
                };
                return Err(Error::Config(format!(
                    "logger={tracker} needs {package}: use the Python package \
                     (tally.Logger(logger=\"{tracker}\")), or logger=tensorboard from Rust"
                )));
            }
        }
        let spec = RunDirSpec {
            algo: config.algo.clone(),
            task: config.task.clone(),
            sim_backend: config.sim_backend.clone(),
            log_root: config.log_root.clone(),
            log_dir: config.log_dir.clone(),
        };
        let start = utc(clock.wall());
        let prior_dir = match config.resume {
            true => crate::resume::find(&config, &spec)?,
            false => None,
        };
        // Taken before the run is read: a live logger's run is refused as in use.
        let prior_lock = prior_dir.as_deref().map(RunLock::acquire).transpose()?;
        let prior = prior_dir
            .map(|dir| crate::resume::load(&dir, &config))
            .transpose()?;
        if let (Some(from), None) = (config.resume_from, &prior) {
            // A checkpoint's iteration of a run that is not there: starting a new run at its
            // first iteration would not be what the job asked for.
            let which = match &spec.log_dir {
                Some(d) => format!("{} holds no run", d.display()),
                None => format!(
                    "no run of algo '{}' and task '{}' under {}",
                    config.algo,
                    config.task,
                    spec.log_root.display()
                ),
            };
            return Err(Error::Config(format!(
                "resume_from={from}: there is no run to rewind ({which}); drop resume_from to \
                 start a new run"
            )));
        }
        // The new event file opens with the purge marker when the resume rewinds the run.
        let writes_events = config.backend != Backend::None;
        let rewind = prior.as_ref().and_then(|p| p.rewind);
        let existed = spec.log_dir.as_ref().is_some_and(|d| d.exists());
        let run_dir = match &prior {
            Some(p) => p.dir.clone(),
            None => create_run_dir(&spec, &start.with_timezone(&chrono::Local))?,
        };
        // Until the logger exists, a failure takes back what this start wrote.
        let mut unstarted = Unstarted {
            dir: prior.is_none().then(|| run_dir.clone()),
            existed,
        };
        let lock = match prior_lock {
            Some(lock) => lock,
            None => RunLock::acquire(&run_dir)?,
        };
        if prior.is_some() {
            // Under the run's lock, an artefact's temporary file is a killed rewrite's.
            crate::atomic::remove_stale_temporaries(&run_dir, &[RUN_CONFIG_FILE, RUN_SUMMARY_FILE]);
        }
        let mut identity = match &prior {
            Some(p) => p.identity(config.wandb.clone()),
            None => run_identity(
                &config.algo,
                &config.task,
                &config.sim_backend,
                &run_dir,
                &start,
                config.wandb.clone(),
            ),
        };
        if config.name.is_some() {
            identity.name = config.name.clone();
        }
        if config.seed.is_some() {
            identity.seed = config.seed;
        }
        // The replicas of this segment, as the W&B settings are (a resumed run's new ones win).
        identity.mlflow = config.mlflow.clone();
        identity.trackio = config.trackio.clone();
        identity.logger = Some(LoggerFacts {
            profile: config.profile,
            backend: config.backend.as_str().to_owned(),
            max_iterations: config.max_iterations,
            num_envs: config.num_envs,
            num_gpus: config.num_gpus,
            log_interval: config.log_interval,
            trace_enabled: config.trace,
        });
        let (mut summary, carried, axis) = match &prior {
            Some(p) => p.continued_summary(&iso_utc(&start), writes_events),
            None => (
                initial_summary(&identity),
                Carried::default(),
                Axis::default(),
            ),
        };
        let earlier_metrics = prior
            .as_ref()
            .map(|p| p.config.user_metrics.clone())
            .unwrap_or_default();
        let tracer = match config.trace {
            true => {
                let dir = config.trace_output_dir.as_deref().unwrap_or(&run_dir);
                let path = dir.join(trace_file_name(summary.resumed.len()));
                let name = format!("tally {} {}", config.algo, config.task);
                let options = crate::trace::TraceOptions {
                    thread_time: config.trace_thread_time,
                    cuda_events: config.trace_cuda_events,
                };
                let t = Tracer::start(&path, &name, clock.clone(), options)?;
                // Recorded now, so a run that dies still points at its trace.
                summary.trace_path = Some(path.display().to_string());
                t
            }
            false => Tracer::disabled(),
        };
        // The webhook's URL is a secret known by value: wherever the user's config holds it,
        // run_config.json gets its redacted form (docs/contract/health.md "Webhook").
        let free = match &config.health_webhook {
            Some(w) => {
                crate::redact::replace_exact(&config.run_config, w.url.secret(), &w.url.redacted())
            }
            None => config.run_config.clone(),
        };
        let run_config = write_run_config(&run_dir, identity, &free, earlier_metrics)?;
        write_run_summary(&run_dir, &summary)?;
        // Extra sinks (W&B) open now: they need the run directory and run_config.json.
        for i in 0..extra.len() {
            let started = extra[i].start(&run_dir);
            if let Err(e) = started {
                // Sinks started before this one hold resources (a W&B run): close them.
                for earlier in &mut extra[..i] {
                    let _ = earlier.close();
                }
                let sink = &extra[i];
                let failure = Error::Sink {
                    sink: sink.name().to_owned(),
                    iteration: 0,
                    message: e.to_string(),
                };
                // A complete record of a failed start, kept.
                unstarted.dir = None;
                summary.status = RunStatus::Failed;
                summary.sink_errors.push(failure.to_string());
                write_run_summary(&run_dir, &summary)?;
                return Err(failure);
            }
            if summary.wandb_run_url.is_none() {
                summary.wandb_run_url = extra[i].run_url();
            }
        }
        if summary.wandb_run_url.is_some() {
            write_run_summary(&run_dir, &summary)?;
        }

        let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
        let mut event_file = None;
        // The event file is the run's truth: W&B follows it (docs/contract/remote-sinks.md).
        if writes_events {
            let mut options = WriterOptions::from_env();
            options.fsync = config.fsync;
            let wall = clock.wall().max(0.0);
            options.created_at = match &prior {
                Some(p) => {
                    let secs = p.event_file_secs(wall as u64);
                    std::time::UNIX_EPOCH
                        + std::time::Duration::from_secs_f64(wall.max(secs as f64))
                }
                None => std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(wall),
            };
            let created = options.created_at;
            let mut tb = match &config.upload {
                // A run in object storage: the event file goes up as segments.
                Some(up) => TensorBoardSink::segmented(&run_dir, options, up.clone())?,
                None => TensorBoardSink::create(&run_dir, options)?,
            };
            if let Some(r) = rewind {
                // Right after file_version: readers drop what the earlier files hold after the
                // checkpoint (docs/contract/run-artifacts.md "Resume" (Rewind)).
                let wall = created
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64());
                if let Err(e) = tb.write_session_start(r.purge_from(), wall) {
                    let path = tb.path().to_owned();
                    drop(tb);
                    let _ = std::fs::remove_file(&path);
                    return Err(e);
                }
            }
            event_file = Some(tb.path().to_owned());
            sinks.push(Box::new(tb));
        }
        let (remote, mut local): (Vec<_>, Vec<_>) = extra.into_iter().partition(|s| s.is_remote());
        sinks.append(&mut local);
        // A periodic summary is as durable as the event file it describes: fsynced only when the
        // event file is (docs/contract/threads-and-signals.md "The summary during a run").
        let sync_summary = config.fsync != tally_tfevents::FsyncPolicy::Never;
        let health = (config.health != RuleSet::empty()).then(|| {
            let h = LiveHealth::new(config.health.clone());
            // Without stop_on no step waits for a finding: the writer thread evaluates, off
            // the training loop's path (docs/contract/health.md "In the logger").
            Arc::new(match config.stop_on.is_empty() {
                true => h.evaluated_by_writer(),
                false => h,
            })
        });
        // Room on disk for the summary, so a disk that fills never leaves it behind the
        // event file (docs/contract/run-artifacts.md "Storage faults").
        let summary_bytes = serde_json::to_vec_pretty(&summary).map_or(0, |b| b.len());
        let room = Room::keep(&run_dir, summary_bytes)?;
        let mut writer = WriterThread::spawn(
            sinks,
            run_dir.clone(),
            config.queue_capacity,
            clock.clone(),
            (sync_summary, Some(room.clone())),
            health.clone(),
        )
        .map_err(Error::io("start writer thread", &run_dir))?;
        // Held to put back if the run directory is removed mid-run.
        writer.hold_config(run_config.clone());
        let facts = RunFacts {
            algo: config.algo.clone(),
            task: config.task.clone(),
            sim: run_config.run.sim_backend.clone(),
            name: run_config.run.name.clone(),
            num_gpus: config.num_gpus,
            num_envs: config.num_envs,
            max_iterations: config.max_iterations,
            profile: config.profile,
        };
        let started_at = clock.monotonic();
        let state = match &prior {
            // The continued summary: its counts are the rewind point's after a rewind.
            Some(_) => SummaryState::resumed_from(&summary),
            None => SummaryState::default(),
        };
        let mut term = TerminalState::new(facts);
        // Shown until the runner passes its own MPS state (docs/contract/panel.md "System column").
        let (mps, mps_warning) = crate::host::run_mps(&config.run_config);
        term.system.cuda_mps = Some(mps);
        if let Some(text) = mps_warning {
            term.message(started_at, Level::Warning, text);
        }
        let terminal = Arc::new(Mutex::new(term));
        if let Some(h) = &health {
            // Each new finding once, from whichever thread found it: a line above the panel
            // (and in the plain output), and the panel's Health line (docs/contract/health.md
            // "In the logger").
            let (term, clock) = (terminal.clone(), clock.clone());
            h.set_notify(Box::new(move |f| {
                let t = clock.monotonic();
                let mut s = term.lock().unwrap_or_else(|e| e.into_inner());
                s.message(t, Level::Warning, finding_text(f));
            }));
            terminal.lock().unwrap_or_else(|e| e.into_inner()).health = Some(h.clone());
        }
        let webhook = match (&config.health_webhook, &health) {
            (Some(hook), Some(h)) => {
                let label = run_config
                    .run
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("{} {}", config.algo, config.task));
                let (terminal, clock) = (terminal.clone(), clock.clone());
                // A finding given up on shows on the panel.
                let warn = Box::new(move |text: String| {
                    let t = clock.monotonic();
                    let mut s = terminal.lock().unwrap_or_else(|e| e.into_inner());
                    s.message(t, Level::Warning, text);
                });
                let thread = WebhookThread::start(h.clone(), hook.clone(), label, warn)
                    .map_err(Error::io("start the health webhook thread", &run_dir))?;
                Some(thread)
            }
            _ => None,
        };
        let stall_exit = match (config.stall_exit_after_secs, &health) {
            (Some(grace), Some(h)) => {
                let last: LastSummary = Arc::new(Mutex::new((summary.clone(), started_at)));
                let ending = Ending {
                    grace: std::time::Duration::from_secs_f64(grace),
                    last: last.clone(),
                    carried: summary.health.clone(),
                    run_dir: run_dir.clone(),
                    room: room.clone(),
                    clock: clock.clone(),
                    entry: super::summary::summary_entry,
                };
                let x = StallExit::start(h.clone(), ending)
                    .map_err(Error::io("start the stall exit thread", &run_dir))?;
                Some((x, last))
            }
            _ => None,
        };
        let remotes = {
            let (terminal, clock) = (terminal.clone(), clock.clone());
            // Outages and recoveries show on the panel.
            RemoteSinks::start(remote, &run_dir, move |text| {
                let t = clock.monotonic();
                let mut s = terminal.lock().unwrap_or_else(|e| e.into_inner());
                s.message(t, Level::Warning, text);
            })?
        };
        if let Some(h) = &health {
            // The writer's timer judges each follower's progress (docs/contract/health.md
            // "Sink").
            for (name, acks) in remotes.acks() {
                h.watch_sink(&name, acks);
            }
        }
        unstarted.dir = None;
        let before_first = prior.as_ref().and_then(|p| p.start_step()).unwrap_or(0);
        let rank_feed = config
            .system_metrics
            .then(|| writer.system_feed(before_first));
        let system = match config.system_metrics {
            true => Some(super::sampler::start(
                &config,
                &run_dir,
                writer.system_feed(before_first),
                terminal.clone(),
                clock.clone(),
            )?),
            false => None,
        };
        let pace = config.health.overhead.map(|_| PaceMeter::default());
        Ok(Logger {
            resolver: Resolver::new(config.profile, config.max_iterations)
                .with_outside_keys(config.outside_keys),
            config,
            run_dir,
            event_file,
            axis,
            clock,
            started_at,
            terminal,
            state,
            summary,
            last_summary_at: started_at,
            writer,
            waits_shown: false,
            reported_failures: 0,
            closed: false,
            tracer,
            view: None,
            awaiting_first_step: prior.is_some(),
            last_step: prior.as_ref().and_then(|p| p.start_step()),
            untouched: prior.map(|p| p.documents),
            run_config,
            user: UserMetrics::default(),
            carried,
            remotes,
            spare_values: Vec::new(),
            lock,
            health,
            health_seen: 0,
            rank_facts: Default::default(),
            pace,
            webhook,
            stall_exit,
            room,
            system,
            rank_feed,
        })
    }
}

/// The trace file of the run's `segment`-th resume (0: the first logger): a resumed run keeps
/// the earlier segments' traces.
fn trace_file_name(segment: usize) -> String {
    match segment {
        0 => crate::trace::TRACE_FILE.to_owned(),
        n => {
            let stem = crate::trace::TRACE_FILE.trim_end_matches(".json");
            format!("{stem}.resume{n}.json")
        }
    }
}
