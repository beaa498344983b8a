//! The writer thread: the only place backend I/O happens.
//!
//! The hot path validates and enqueues; this thread writes. The queue is bounded and
//! lossless: when it is full, `step` waits (and the wait is counted), it never drops. A failed
//! write of the event file keeps the step for a retry (`backlog.rs`); a failed rewrite of a JSON
//! artefact is retried on the next rewrite.

use crate::atomic::write_json_replace;
use crate::backlog::Slot;
use crate::run::{RUN_CONFIG_FILE, RUN_SUMMARY_FILE};
use crate::sink::{BackendStep, Sink};
use crate::summary_pace::{SummaryDone, SummaryPace};
use crate::tag::Tag;
use queue::{Pushed, Queue};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use tally_clock::Clock;
use tally_schema::artifacts::{RunConfig, RunSummary};

mod queue;
mod restore;

/// A sink failure, reported once through the next `step`/`close` and kept for the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkFailure {
    /// Sink name.
    pub sink: String,
    /// Iteration whose write failed (0 for close/flush).
    pub iteration: u64,
    /// The error text.
    pub message: String,
}

impl std::fmt::Display for SinkFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} sink failed at iteration {}: {}",
            self.sink, self.iteration, self.message
        )
    }
}

enum Msg {
    Step(BackendStep),
    Summary(Box<RunSummary>),
    Config(Box<RunConfig>),
    /// The `run_config.json` the logger wrote: held, not written, to put back if the run
    /// directory is removed.
    HeldConfig(Box<RunConfig>),
    Flush(SyncSender<()>),
}

/// Handle to the writer thread.
pub struct WriterThread {
    queue: Arc<Queue<Msg>>,
    /// Whether the queue was closed (`finish`): later messages go nowhere.
    closed: bool,
    handle: Option<JoinHandle<()>>,
    failures: Arc<Failures>,
    counts: Arc<StorageCounts>,
    /// Times the back-pressure waits.
    clock: Arc<dyn Clock>,
    /// Steps that found the queue full.
    pub waits: u64,
    /// Seconds spent waiting on a full queue.
    pub wait_secs: f64,
    /// Whether a periodic summary rewrite is cheap now.
    pace: SummaryPace,
    /// Written steps' emptied payload buffers, handed back for the next steps to fill.
    spares: Receiver<Payload>,
}

/// A step's scalars.
type Payload = Vec<(Tag, f64)>;

/// Failures shared between the writer thread and the logger. The count is read on every step
/// without taking the lock; the list is locked only when something new is to be reported.
#[derive(Debug, Default)]
struct Failures {
    count: AtomicUsize,
    list: Mutex<Vec<SinkFailure>>,
}

fn record(failures: &Failures, f: SinkFailure) {
    let mut list = failures.list.lock().unwrap_or_else(|e| e.into_inner());
    list.push(f);
    failures.count.store(list.len(), Ordering::Release);
}

fn texts(failures: &Failures) -> Vec<String> {
    let list = failures.list.lock().unwrap_or_else(|e| e.into_inner());
    list.iter().map(ToString::to_string).collect()
}

/// The run's local-storage counts, as the writer thread last left them.
#[derive(Debug, Default)]
struct StorageCounts {
    /// Whether the run has a local-storage sink at all.
    any: bool,
    persisted: AtomicU64,
    lost: AtomicU64,
    pending: AtomicU64,
}

/// Where the run's steps stand in its local storage (docs/contract/run-artifacts.md
/// "Storage faults").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StorageTally {
    /// Steps in the file; `None` when the run has no local storage.
    pub persisted: Option<u64>,
    /// Steps that will never reach it.
    pub lost: u64,
    /// Steps kept for a retry.
    pub pending: u64,
}

impl StorageTally {
    /// Fill the summary's storage fields.
    pub fn fill(&self, s: &mut RunSummary) {
        s.persisted_iterations = self.persisted;
        s.lost_iterations = self.lost;
        s.pending_iterations = self.pending;
    }
}

impl StorageCounts {
    /// With several local sinks a step counts as persisted only if all hold it (the fewest
    /// persisted), and as lost or pending if any lost it or keeps it.
    fn update(&self, slots: &[Slot]) {
        let local = || slots.iter().filter(|s| s.is_storage());
        let persisted = local().map(Slot::persisted).min().unwrap_or(0);
        self.persisted.store(persisted, Ordering::Release);
        let lost = local().map(|s| s.lost).max().unwrap_or(0);
        self.lost.store(lost, Ordering::Release);
        let pending = local().map(Slot::pending).max().unwrap_or(0);
        self.pending.store(pending, Ordering::Release);
    }

    fn tally(&self) -> StorageTally {
        StorageTally {
            persisted: self.any.then(|| self.persisted.load(Ordering::Acquire)),
            lost: self.lost.load(Ordering::Acquire),
            pending: self.pending.load(Ordering::Acquire),
        }
    }
}

/// A JSON artefact rewrite that failed, kept until a later rewrite (or a flush) succeeds.
struct Artefact<T> {
    file: &'static str,
    pending: Option<Box<T>>,
    /// The last document written, to put back if the run directory is removed.
    last: Option<Box<T>>,
    /// Its failure was reported; reported again only after a success.
    failing: bool,
    /// Whether each rewrite is fsynced.
    sync: bool,
}

impl<T: serde::Serialize> Artefact<T> {
    fn new(file: &'static str, sync: bool) -> Self {
        Artefact {
            file,
            pending: None,
            last: None,
            failing: false,
            sync,
        }
    }

    /// Write `doc` (or retry the kept one when `doc` is `None`); a failure keeps it.
    fn write(&mut self, doc: Option<Box<T>>, iteration: u64, run_dir: &Path, failures: &Failures) {
        let Some(doc) = doc.or_else(|| self.pending.take()) else {
            return;
        };
        // Redacted like the artefacts written at start and close: a summary holds the runtime
        // manifest and free text (docs/contract/run-artifacts.md "Secrets").
        let clean = serde_json::to_value(&*doc).map(|v| crate::redact::redact_value(&v));
        let path = run_dir.join(self.file);
        let written = clean
            .map_err(|source| crate::Error::Json {
                path: path.clone(),
                source,
            })
            .and_then(|v| write_json_replace(&path, &v, self.sync));
        match written {
            Ok(()) => {
                // A newer document replaces a kept one: the kept one is never written after it.
                self.pending = None;
                self.last = Some(doc);
                self.failing = false;
            }
            Err(e) => {
                if !self.failing {
                    self.failing = true;
                    record(
                        failures,
                        SinkFailure {
                            sink: self.file.trim_end_matches(".json").into(),
                            iteration,
                            message: format!("{e}; retried on the next rewrite"),
                        },
                    );
                }
                self.pending = Some(doc);
            }
        }
    }
}

/// What the writer thread hands back to the logger besides failures and counts.
struct Back {
    /// How long summary rewrites take (their pace).
    paced: SummaryDone,
    /// Written steps' payload buffers.
    spares: SyncSender<Payload>,
}

/// Tells a sender the writer thread ended, however it ended (a sink's panic included).
struct Gone(Arc<Queue<Msg>>);

impl Drop for Gone {
    fn drop(&mut self) {
        self.0.gone();
    }
}

fn run(
    queue: Arc<Queue<Msg>>,
    sinks: Vec<Box<dyn Sink>>,
    run_dir: PathBuf,
    failures: Arc<Failures>,
    counts: Arc<StorageCounts>,
    back: Back,
    sync_summary: bool,
) {
    let Back { paced, spares } = back;
    let gone = Gone(queue);
    let mut slots: Vec<Slot> = sinks.into_iter().map(Slot::new).collect();
    let mut summary = Artefact::<RunSummary>::new(RUN_SUMMARY_FILE, sync_summary);
    let mut config = Artefact::<RunConfig>::new(RUN_CONFIG_FILE, true);
    let mut vanished = restore::Restorer::new(run_dir.clone());
    let mut out = Vec::new();
    while let Some(msg) = gone.0.pop() {
        match msg {
            Msg::Step(step) => {
                for slot in &mut slots {
                    slot.write(&step, &mut out);
                }
                // Handed back with its tags: the caller's next step overwrites them in place,
                // so an interned tag's reference count is not raised on the caller's thread and
                // dropped on this one every step (its cache line would cross the cores twice).
                let _ = spares.try_send(step.scalars);
            }
            Msg::Summary(mut s) => {
                let it = s.completed_iterations;
                vanished.check(
                    &mut slots,
                    it,
                    &failures,
                    &counts,
                    &mut summary,
                    &mut config,
                );
                // The counts as of this point in the queue: never ahead of the file.
                counts.tally().fill(&mut s);
                s.sink_errors = texts(&failures);
                let t0 = std::time::Instant::now();
                summary.write(Some(s), it, &run_dir, &failures);
                // A failed rewrite paces nothing: the next one is due as soon as it is sent.
                let failed = summary.pending.is_some();
                paced.done(if failed { Duration::ZERO } else { t0.elapsed() });
            }
            Msg::Config(c) => config.write(Some(c), 0, &run_dir, &failures),
            Msg::HeldConfig(c) => config.last = Some(c),
            Msg::Flush(done) => {
                vanished.check(&mut slots, 0, &failures, &counts, &mut summary, &mut config);
                for slot in &mut slots {
                    slot.flush(&mut out);
                }
                counts.update(&slots);
                out.drain(..).for_each(|f| record(&failures, f));
                config.write(None, 0, &run_dir, &failures);
                if let Some(s) = summary.pending.as_deref_mut() {
                    // A kept summary goes out with today's counts, not those of its failure.
                    counts.tally().fill(s);
                    s.sink_errors = texts(&failures);
                }
                summary.write(None, 0, &run_dir, &failures);
                let _ = done.send(());
                continue;
            }
        }
        counts.update(&slots);
        out.drain(..).for_each(|f| record(&failures, f));
    }
    // The channel closed: a last retry, then close every sink, even the set-aside ones. A
    // kept summary is not retried: the logger writes the final one after this.
    vanished.check(&mut slots, 0, &failures, &counts, &mut summary, &mut config);
    for slot in &mut slots {
        slot.close(&mut out);
    }
    config.write(None, 0, &run_dir, &failures);
    counts.update(&slots);
    out.drain(..).for_each(|f| record(&failures, f));
}

impl WriterThread {
    /// Start the thread with `sinks`; the run's JSON artefacts are rewritten in `run_dir`, the
    /// periodic summaries fsynced only when `sync_summary` (as durable as the event file: the
    /// final summary is always fsynced by the logger).
    pub fn spawn(
        sinks: Vec<Box<dyn Sink>>,
        run_dir: PathBuf,
        capacity: usize,
        clock: Arc<dyn Clock>,
        sync_summary: bool,
    ) -> std::io::Result<Self> {
        let queue = Arc::new(Queue::new(capacity));
        // The logger makes a payload buffer only when none is back, so at most the queue's
        // capacity, one being written and one being filled exist: all fit, none is dropped, and
        // a run allocates at most that many payloads (docs/contract/step.md "The hot path").
        let (spare_tx, spares) = sync_channel(capacity.max(1) + 2);
        let failures = Arc::new(Failures::default());
        let counts = Arc::new(StorageCounts {
            any: sinks.iter().any(|s| s.is_local_storage()),
            ..Default::default()
        });
        let (f, c, q) = (failures.clone(), counts.clone(), queue.clone());
        let pace = SummaryPace::default();
        let paced = pace.recorder();
        let handle = std::thread::Builder::new()
            .name("tally-writer".into())
            .spawn(move || {
                let back = Back {
                    paced,
                    spares: spare_tx,
                };
                run(q, sinks, run_dir, f, c, back, sync_summary)
            })?;
        Ok(WriterThread {
            queue,
            closed: false,
            handle: Some(handle),
            failures,
            counts,
            clock,
            waits: 0,
            wait_secs: 0.0,
            pace,
            spares,
        })
    }

    /// Queue `msg`; a full queue waits (back-pressure, never a drop). Only a step may wait in
    /// the queue for the writer's next round; anything else wakes it.
    fn send(&mut self, msg: Msg) {
        if self.closed {
            return;
        }
        let urgent = !matches!(msg, Msg::Step(_));
        match self.queue.push(msg, urgent, &*self.clock) {
            Pushed::Queued => {}
            Pushed::Waited(secs) => {
                self.waits += 1;
                self.wait_secs += secs;
            }
            Pushed::Gone(_) => {
                record(
                    &self.failures,
                    SinkFailure {
                        sink: "writer".into(),
                        iteration: 0,
                        message: "writer thread stopped".into(),
                    },
                );
            }
        }
    }

    /// Enqueue one step's payload (waits when the queue is full).
    pub fn step(&mut self, step: BackendStep) {
        self.send(Msg::Step(step));
    }

    /// The payload buffer of a written step, still holding its values, if one came back (no
    /// wait).
    pub fn spare_payload(&self) -> Option<Vec<(Tag, f64)>> {
        self.spares.try_recv().ok()
    }

    /// Enqueue a `run_config.json` rewrite.
    pub fn config(&mut self, config: RunConfig) {
        self.send(Msg::Config(Box::new(config)));
    }

    /// Hand over the `run_config.json` the logger wrote at start, to put back if the run
    /// directory is removed (nothing is written now).
    pub fn hold_config(&mut self, config: RunConfig) {
        self.send(Msg::HeldConfig(Box::new(config)));
    }

    /// Whether a periodic summary rewrite is cheap now (`summary_pace.rs`).
    pub fn summary_due(&self) -> bool {
        self.pace.due()
    }

    /// Enqueue a summary rewrite.
    pub fn summary(&mut self, summary: RunSummary) {
        self.pace.sent();
        self.send(Msg::Summary(Box::new(summary)));
    }

    /// Wait until everything enqueued so far is written and flushed.
    pub fn flush(&mut self) {
        let (done_tx, done_rx) = sync_channel(1);
        self.send(Msg::Flush(done_tx));
        let _ = done_rx.recv();
    }

    /// How many failures were recorded so far (no lock).
    pub fn failure_count(&self) -> usize {
        self.failures.count.load(Ordering::Acquire)
    }

    /// Failure number `i` (0-based), if recorded.
    pub fn failure(&self, i: usize) -> Option<SinkFailure> {
        let list = self.failures.list.lock().unwrap_or_else(|e| e.into_inner());
        list.get(i).cloned()
    }

    /// Every failure recorded so far, as text (for `run_summary.json`).
    pub fn failure_texts(&self) -> Vec<String> {
        texts(&self.failures)
    }

    /// Where the run's steps stand in its local storage (exact once [`Self::finish`] ran).
    pub fn storage(&self) -> StorageTally {
        self.counts.tally()
    }

    /// Close the queue, let the thread write everything and close the sinks, and join it.
    pub fn finish(&mut self) {
        if !self.closed {
            self.closed = true;
            self.queue.close();
        }
        if let Some(h) = self.handle.take() {
            if h.join().is_err() {
                record(
                    &self.failures,
                    SinkFailure {
                        sink: "writer".into(),
                        iteration: 0,
                        message: "writer thread panicked".into(),
                    },
                );
            }
        }
    }
}

impl Drop for WriterThread {
    fn drop(&mut self) {
        self.finish();
    }
}
