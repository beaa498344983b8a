//! The writer thread: the only place backend I/O happens.
//!
//! The hot path validates and enqueues; this thread writes. The queue is bounded and
//! lossless: when it is full, `step` waits (and the wait is counted), it never drops.

use crate::atomic::write_json_atomic;
use crate::sink::{BackendStep, Sink};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;
use tally_schema::artifacts::RunSummary;

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
    Flush(SyncSender<()>),
}

/// Handle to the writer thread.
pub struct WriterThread {
    tx: Option<SyncSender<Msg>>,
    handle: Option<JoinHandle<()>>,
    failures: Arc<Mutex<Vec<SinkFailure>>>,
    /// Steps that found the queue full.
    pub waits: u64,
    /// Seconds spent waiting on a full queue.
    pub wait_secs: f64,
}

fn record(failures: &Mutex<Vec<SinkFailure>>, f: SinkFailure) {
    failures.lock().unwrap_or_else(|e| e.into_inner()).push(f);
}

fn run(
    rx: Receiver<Msg>,
    mut sinks: Vec<Box<dyn Sink>>,
    summary_path: PathBuf,
    failures: Arc<Mutex<Vec<SinkFailure>>>,
) {
    let mut failed = vec![false; sinks.len()];
    for msg in rx {
        match msg {
            Msg::Step(step) => {
                for (sink, dead) in sinks.iter_mut().zip(failed.iter_mut()) {
                    if *dead {
                        continue;
                    }
                    if let Err(message) = sink.write(&step) {
                        *dead = true;
                        record(
                            &failures,
                            SinkFailure {
                                sink: sink.name().to_owned(),
                                iteration: step.iteration,
                                message,
                            },
                        );
                    }
                }
            }
            Msg::Summary(summary) => {
                if let Err(e) = write_json_atomic(&summary_path, &*summary) {
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
            Msg::Flush(done) => {
                for (sink, dead) in sinks.iter_mut().zip(failed.iter_mut()) {
                    if !*dead {
                        if let Err(message) = sink.flush() {
                            *dead = true;
                            record(
                                &failures,
                                SinkFailure {
                                    sink: sink.name().to_owned(),
                                    iteration: 0,
                                    message,
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
        if let Err(message) = sink.close() {
            record(
                &failures,
                SinkFailure {
                    sink: sink.name().to_owned(),
                    iteration: 0,
                    message,
                },
            );
        }
    }
}

impl WriterThread {
    /// Start the thread with `sinks`; summaries are written to `summary_path`.
    pub fn spawn(
        sinks: Vec<Box<dyn Sink>>,
        summary_path: PathBuf,
        capacity: usize,
    ) -> std::io::Result<Self> {
        let (tx, rx) = sync_channel(capacity.max(1));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let f = failures.clone();
        let handle = std::thread::Builder::new()
            .name("tally-writer".into())
            .spawn(move || run(rx, sinks, summary_path, f))?;
        Ok(WriterThread {
            tx: Some(tx),
            handle: Some(handle),
            failures,
            waits: 0,
            wait_secs: 0.0,
        })
    }

    fn send(&mut self, msg: Msg) {
        let Some(tx) = &self.tx else { return };
        match tx.try_send(msg) {
            Ok(()) => {}
            Err(TrySendError::Full(msg)) => {
                let t0 = Instant::now();
                // Blocking send: back-pressure, never a drop.
                let _ = tx.send(msg);
                self.waits += 1;
                self.wait_secs += t0.elapsed().as_secs_f64();
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

    /// Failures recorded so far (all of them; callers track what they already reported).
    pub fn failures(&self) -> Vec<SinkFailure> {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
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
