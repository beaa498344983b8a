//! The writer thread: the only place backend I/O happens.
//!
//! The hot path validates and enqueues; this thread writes. The queue is bounded and
//! lossless: when it is full, `step` waits (and the wait is counted), it never drops. A failed
//! write of the event file keeps the step for a retry (`backlog.rs`); a failed rewrite of a JSON
//! artefact is retried on the next rewrite (`writer/artefact.rs`).

use crate::backlog::Slot;
use crate::health::live::{finding_text, LiveHealth};
use crate::health::pace::Pace;
use crate::room::Room;
use crate::run::{RUN_CONFIG_FILE, RUN_SUMMARY_FILE};
use crate::sink::{BackendStep, Sink};
use crate::summary_pace::{SummaryDone, SummaryPace};
use crate::tag::Tag;
use artefact::Artefact;
use counts::StorageCounts;
use failures::{record, texts, Failures};
use queue::{Popped, Pushed, Queue};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tally_clock::Clock;
use tally_schema::artifacts::{RunConfig, RunSummary};

mod artefact;
mod counts;
pub(crate) mod failures;
mod queue;
mod restore;

pub use counts::StorageTally;
pub use failures::SinkFailure;

enum Msg {
    /// A step to write, with the `overhead` rule's facts of the calls before it.
    Step(BackendStep, Option<Pace>),
    Summary(Box<RunSummary>),
    Config(Box<RunConfig>),
    /// The `run_config.json` the logger wrote: held, not written, to put back if the run
    /// directory is removed.
    HeldConfig(Box<RunConfig>),
    Flush(SyncSender<()>),
    /// A system sample, written at the step of the last step before it, or at the given step
    /// when none came yet (docs/contract/system-metrics.md "Step and wall time").
    System(crate::system::Sample, i64),
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

/// Sends system samples to the writer thread without ever waiting.
pub struct SystemFeed {
    queue: Arc<Queue<Msg>>,
    before_first: i64,
}

impl SystemFeed {
    /// Queue `sample` if there is room now; `false` when it was dropped (a full queue, a
    /// closed writer).
    pub fn send(&self, sample: crate::system::Sample) -> bool {
        self.queue.try_push(Msg::System(sample, self.before_first))
    }
}

/// A step's scalars.
type Payload = Vec<(Tag, f64)>;

/// What the writer thread hands back to the logger besides failures and counts.
struct Back {
    /// How long summary rewrites take (their pace).
    paced: SummaryDone,
    /// Written steps' payload buffers.
    spares: SyncSender<Payload>,
    /// The run's health rules: this thread checks `stall` by a timer and writes each new
    /// finding to the event file (docs/contract/health.md "In the logger").
    health: Option<Arc<LiveHealth>>,
    /// The run's clock (a finding's wall time, the stall timer's now).
    clock: Arc<dyn Clock>,
    /// Room kept on disk for `run_summary.json` (`room.rs`).
    room: Option<Room>,
}

/// The findings the event file has not had yet, each written once as text (tag
/// [`HEALTH_TEXT_TAG`]) at the step it first fired at.
fn write_findings(health: &LiveHealth, cursor: &mut usize, slots: &mut [Slot], wall: f64) {
    for f in health.since(cursor) {
        let text = finding_text(&f);
        for slot in slots.iter_mut() {
            slot.write_text(f.first_step, wall, HEALTH_TEXT_TAG, &text);
        }
    }
}

/// The text tag findings are written under (TensorBoard's Text tab shows
/// `tally/health/text_summary`).
pub const HEALTH_TEXT_TAG: &str = "tally/health";

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
    let Back {
        paced,
        spares,
        health,
        clock,
        room,
    } = back;
    let gone = Gone(queue);
    let tick = health.as_ref().and_then(|h| h.tick());
    let mut checked = std::time::Instant::now();
    let mut written = 0usize;
    let mut slots: Vec<Slot> = sinks.into_iter().map(Slot::new).collect();
    let mut summary = Artefact::<RunSummary>::new(RUN_SUMMARY_FILE, sync_summary, room);
    let mut config = Artefact::<RunConfig>::new(RUN_CONFIG_FILE, true, None);
    let mut vanished = restore::Restorer::new(run_dir.clone());
    let mut out = Vec::new();
    // The step of the last step written: where a system sample is placed.
    let mut placed: Option<i64> = None;
    loop {
        let wait = tick.map(|t| t.saturating_sub(checked.elapsed()));
        let popped = gone.0.pop_or_tick(wait);
        if let (Some(h), Some(t)) = (&health, tick) {
            // The stall timer, never on the step's path: a loop that stops sending steps is
            // still seen (docs/contract/health.md "Stall").
            // New findings are written here too, not after each step: this thread reads the
            // findings' state once a tick, so the step's thread keeps it in its own cache.
            if checked.elapsed() >= t {
                checked = std::time::Instant::now();
                // Every step in the event file but the last is a complete row for the
                // remote sinks (docs/contract/health.md "Sink").
                let complete = counts.tally().persisted.unwrap_or(0).saturating_sub(1);
                if h.check_stall(clock.wall())
                    | h.check_disk(&run_dir)
                    | h.check_sinks(clock.wall(), complete)
                {
                    h.announce();
                }
                write_findings(h, &mut written, &mut slots, clock.wall());
            }
        }
        let msg = match popped {
            Popped::Item(msg) => msg,
            Popped::Tick => continue,
            Popped::Closed => break,
        };
        match msg {
            Msg::Step(step, pace) => {
                placed = Some(step.step);
                for slot in &mut slots {
                    slot.write(&step, &mut out);
                }
                if let Some(h) = health.as_deref().filter(|h| h.on_writer()) {
                    // The health rules, off the step's path (docs/contract/health.md "In the
                    // logger"), on the values as the event file holds them.
                    let held = |v: f64| f64::from(v as f32).is_finite();
                    let all_finite = step.scalars.iter().all(|(_, v)| held(*v));
                    h.step_paced(step.step, step.wall_time, &step.scalars, all_finite, pace);
                    h.announce();
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
            Msg::System(sample, before_first) => {
                let step = placed.unwrap_or(before_first);
                for slot in &mut slots {
                    slot.write_system(step, sample.wall_time, &sample.values);
                }
                continue;
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
    // The channel closed: the findings not written yet, a last retry, then close every sink,
    // even the set-aside ones. A kept summary is not retried: the logger writes the final one
    // after this.
    if let Some(h) = &health {
        write_findings(h, &mut written, &mut slots, clock.wall());
    }
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
    /// final summary is always fsynced by the logger), over `room` when the disk is full.
    pub fn spawn(
        sinks: Vec<Box<dyn Sink>>,
        run_dir: PathBuf,
        capacity: usize,
        clock: Arc<dyn Clock>,
        (sync_summary, room): (bool, Option<Room>),
        health: Option<Arc<LiveHealth>>,
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
        let (f, c, q, k) = (
            failures.clone(),
            counts.clone(),
            queue.clone(),
            clock.clone(),
        );
        let pace = SummaryPace::default();
        let paced = pace.recorder();
        let handle = std::thread::Builder::new()
            .name("tally-writer".into())
            .spawn(move || {
                let back = Back {
                    paced,
                    spares: spare_tx,
                    health,
                    clock: k,
                    room,
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
        let urgent = !matches!(msg, Msg::Step(..));
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
    pub fn step(&mut self, step: BackendStep, pace: Option<Pace>) {
        self.send(Msg::Step(step, pace));
    }

    /// The payload buffer of a written step, still holding its values, if one came back (no
    /// wait).
    pub fn spare_payload(&self) -> Option<Vec<(Tag, f64)>> {
        self.spares.try_recv().ok()
    }

    /// A handle the system sampler sends its samples through, placed at `before_first` until
    /// a step is written (a resumed run's last step; docs/contract/system-metrics.md).
    pub fn system_feed(&self, before_first: i64) -> SystemFeed {
        SystemFeed {
            queue: self.queue.clone(),
            before_first,
        }
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

    /// The sink that lost steps and which iterations they were (exact once [`Self::finish`]
    /// ran).
    pub fn lost_steps(&self) -> (String, crate::lost::LostSteps) {
        self.counts.lost_steps()
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
