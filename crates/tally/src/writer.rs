//! The writer thread: the only place backend I/O happens.
//!
//! The hot path validates and enqueues; this thread writes. The queue is bounded and
//! lossless: when it is full, `step` waits (and the wait is counted), it never drops.

use crate::atomic::write_json_atomic;
use crate::run::{RUN_CONFIG_FILE, RUN_SUMMARY_FILE};
use crate::sink::{BackendStep, Sink};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use tally_clock::Clock;
use tally_schema::artifacts::{RunConfig, RunSummary};

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
    Flush(SyncSender<()>),
}

/// Handle to the writer thread.
pub struct WriterThread {
    tx: Option<SyncSender<Msg>>,
    handle: Option<JoinHandle<()>>,
    failures: Arc<Failures>,
    /// Times the back-pressure waits.
    clock: Arc<dyn Clock>,
    /// Steps that found the queue full.
    pub waits: u64,
    /// Seconds spent waiting on a full queue.
    pub wait_secs: f64,
}

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

fn run(
    rx: Receiver<Msg>,
    mut sinks: Vec<Box<dyn Sink>>,
    run_dir: PathBuf,
    failures: Arc<Failures>,
) {
    let mut failed = vec![false; sinks.len()];
    for msg in rx {
        match msg {
            Msg::Step(step) => {
                for (sink, dead) in sinks.iter_mut().zip(failed.iter_mut()) {
                    if *dead {
                        continue;
                    }
                    if let Err(e) = sink.write(&step) {
                        *dead = true;
                        record(
                            &failures,
                            SinkFailure {
                                sink: sink.name().to_owned(),
                                iteration: step.iteration,
                                message: e.to_string(),
                            },
                        );
                    }
                }
            }
            Msg::Summary(summary) => {
                if let Err(e) = write_json_atomic(&run_dir.join(RUN_SUMMARY_FILE), &*summary) {
                    record(
                        &failures,
                        SinkFailure {
                            sink: "run_summary".into(),
                            iteration: summary.completed_iterations,
                            message: e.to_string(),
                        },
                    );
                }
            }
            Msg::Config(config) => {
                if let Err(e) = write_json_atomic(&run_dir.join(RUN_CONFIG_FILE), &*config) {
                    record(
                        &failures,
                        SinkFailure {
                            sink: "run_config".into(),
                            iteration: 0,
                            message: e.to_string(),
                        },
                    );
                }
            }
            Msg::Flush(done) => {
                for (sink, dead) in sinks.iter_mut().zip(failed.iter_mut()) {
                    if !*dead {
                        if let Err(e) = sink.flush() {
                            *dead = true;
                            record(
                                &failures,
                                SinkFailure {
                                    sink: sink.name().to_owned(),
                                    iteration: 0,
                                    message: e.to_string(),
                                },
                            );
                        }
                    }
                }
                let _ = done.send(());
            }
        }
    }
    // The channel closed: close every sink, even the failed ones (they may hold files).
    for sink in &mut sinks {
        if let Err(e) = sink.close() {
            record(
                &failures,
                SinkFailure {
                    sink: sink.name().to_owned(),
                    iteration: 0,
                    message: e.to_string(),
                },
            );
        }
    }
}

impl WriterThread {
    /// Start the thread with `sinks`; the run's JSON artefacts are rewritten in `run_dir`.
    pub fn spawn(
        sinks: Vec<Box<dyn Sink>>,
        run_dir: PathBuf,
        capacity: usize,
        clock: Arc<dyn Clock>,
    ) -> std::io::Result<Self> {
        let (tx, rx) = sync_channel(capacity.max(1));
        let failures = Arc::new(Failures::default());
        let f = failures.clone();
        let handle = std::thread::Builder::new()
            .name("tally-writer".into())
            .spawn(move || run(rx, sinks, run_dir, f))?;
        Ok(WriterThread {
            tx: Some(tx),
            handle: Some(handle),
            failures,
            clock,
            waits: 0,
            wait_secs: 0.0,
        })
    }

    fn send(&mut self, msg: Msg) {
        let Some(tx) = &self.tx else { return };
        match tx.try_send(msg) {
            Ok(()) => {}
            Err(TrySendError::Full(msg)) => {
                let t0 = self.clock.monotonic();
                // Blocking send: back-pressure, never a drop.
                let _ = tx.send(msg);
                self.waits += 1;
                self.wait_secs += self.clock.monotonic() - t0;
            }
            Err(TrySendError::Disconnected(_)) => {
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

    /// Enqueue a `run_config.json` rewrite.
    pub fn config(&mut self, config: RunConfig) {
        self.send(Msg::Config(Box::new(config)));
    }

    /// Enqueue a summary rewrite.
    pub fn summary(&mut self, summary: RunSummary) {
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
        let list = self.failures.list.lock().unwrap_or_else(|e| e.into_inner());
        list.iter().map(ToString::to_string).collect()
    }

    /// Close the queue, let the thread write everything and close the sinks, and join it.
    pub fn finish(&mut self) {
        self.tx = None;
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
