//! A remote sink's own thread ([`Follower`]) and the one-shot send of `tally sync`
//! ([`send_run`]): rows after the sink's cursor, sent in batches, the cursor saved after each
//! acknowledged batch; after a failure the rows are sent again from the cursor, after a wait
//! that doubles up to [`BACKOFF_MAX`].

use super::cursor::Cursor;
use super::pending::scan_pending;
use super::streams::{Queued, Streams};
use crate::error::{Error, Result};
use crate::health::SinkAcks;
use crate::sink::{Sink, SinkError};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tally_schema::artifacts::RemoteSinkProgress;
use tally_tfevents::Damage;

/// Most rows sent between two cursor saves.
const BATCH_ROWS: usize = 256;
/// How often a caught-up follower looks for new rows.
const POLL: Duration = Duration::from_millis(50);
/// First and longest wait before sending again to a sink that failed.
const BACKOFF_MIN: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// Failed attempts in a row after which `tally sync` gives up on a run (its cursor is saved).
const SYNC_ATTEMPTS: u32 = 6;

/// Reports a remote sink's outage and recovery (the logger shows it on the panel).
pub type Notify = Box<dyn Fn(String) + Send>;

/// Rows read from the files but not yet acknowledged, and the cursor after the acknowledged.
struct Pump {
    sink: Box<dyn Sink>,
    run_dir: PathBuf,
    /// The run's own files and its sub-runs' (docs/contract/remote-sinks.md "Sub-runs").
    streams: Streams,
    queue: VecDeque<Queued>,
    cursor: Cursor,
    /// The rows of the live file (the last of the run's own, the logger's) acknowledged, for
    /// the `sink` health rule (docs/contract/health.md "Sink").
    acks: Arc<SinkAcks>,
    live: Option<usize>,
}

impl Pump {
    fn new(mut sink: Box<dyn Sink>, run_dir: &Path, files: Vec<PathBuf>) -> Result<Self> {
        let mut cursor = Cursor::load(run_dir, sink.name())?.unwrap_or_default();
        let remote_run = sink.remote_run();
        if remote_run.is_some() && cursor.remote_run.is_some() && cursor.remote_run != remote_run {
            // Another destination has none of the rows: it gets the run from its start.
            cursor = Cursor::default();
        }
        cursor.remote_run = cursor.remote_run.or(remote_run);
        let live = files.len().checked_sub(1);
        let streams = Streams::new(run_dir, files, &cursor)?;
        sink.resume_at(cursor.rows)
            .map_err(|e| sink_error(&*sink, e))?;
        Ok(Pump {
            sink,
            run_dir: run_dir.to_owned(),
            streams,
            queue: VecDeque::new(),
            cursor,
            acks: Arc::default(),
            live,
        })
    }

    fn name(&self) -> &str {
        self.sink.name()
    }

    /// Read rows until a batch is queued or none is complete yet.
    fn fill(&mut self, finished: bool) -> Result<()> {
        self.streams
            .fill(&mut self.queue, BATCH_ROWS, finished, &self.cursor)
    }

    /// Send the queued rows until `stop()`; the cursor is saved after those the sink took. A
    /// sink may hold the rows it is given until `flush` (MLflow sends a batch per request), so
    /// rows count as taken only once `flush` returns: a failed flush leaves the cursor where it
    /// was and the rows are sent again from it (docs/contract/remote-sinks.md "The cursor").
    fn send(&mut self, stop: &dyn Fn() -> bool) -> std::result::Result<usize, SinkError> {
        let inflight = self.streams.inflight(&self.queue);
        if inflight.is_some() && self.cursor.inflight != inflight {
            // Recorded before any row of it is sent (module docs of `streams.rs`).
            self.cursor.inflight = inflight;
            self.cursor
                .save(&self.run_dir, self.sink.name())
                .map_err(|e| format!("cannot save the cursor: {e}"))?;
        }
        let mut written = 0;
        let mut failed = None;
        for (row, _, _) in &self.queue {
            if stop() {
                break;
            }
            if let Err(e) = self.sink.write(row) {
                failed = Some(e);
                break;
            }
            written += 1;
        }
        if written > 0 {
            self.sink.flush()?;
            let mut live = 0;
            for (row, k, pos) in self.queue.drain(..written) {
                let stream = &self.streams.list[k];
                self.cursor.rows += 1;
                self.cursor.step = Some(row.step);
                self.cursor
                    .advance(&stream.name, &stream.files[pos.file], pos.offset);
                // Stream 0 is the run's own files.
                live += u64::from(k == 0 && Some(pos.file) == self.live);
            }
            self.acks.acknowledged(live);
            // What is left of the batch stays recorded in flight.
            self.cursor.inflight = self.streams.inflight(&self.queue);
            self.cursor
                .save(&self.run_dir, self.sink.name())
                .map_err(|e| format!("cannot save the cursor: {e}"))?;
        }
        failed.map_or(Ok(written), Err)
    }

    /// Make the sink continue from the cursor (after a failure, rows may be sent again).
    fn rewind(&mut self) -> std::result::Result<(), SinkError> {
        self.sink.resume_at(self.cursor.rows)
    }

    fn step_ahead(&self) -> Option<i64> {
        self.queue.front().map(|(r, _, _)| r.step)
    }
}

fn sink_error(sink: &dyn Sink, e: SinkError) -> Error {
    Error::Sink {
        sink: sink.name().to_owned(),
        iteration: 0,
        message: e.to_string(),
    }
}

#[derive(Default)]
struct State {
    /// The run's files are complete: send to their end, then stop.
    finishing: bool,
    /// Stop at the next row boundary (the close deadline passed).
    stop: bool,
    done: bool,
    cursor: Cursor,
    last_error: Option<String>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait up to `d` unless stopped (or, when `finishing_wakes`, asked to finish).
    fn sleep(&self, d: Duration, finishing_wakes: bool) {
        let guard = self.lock();
        let _ = self
            .wake
            .wait_timeout_while(guard, d, |s| !(s.stop || (finishing_wakes && s.finishing)))
            .map(drop);
    }
}

/// The rows complete in the run's files, counted on from where the last count stopped, so a
/// summary during the run reads only what was written since the one before.
struct Counter {
    rows: Streams,
    /// The sink's cursor when the count began: a sub-run found later is counted from its
    /// place there (its start), as `total` counts.
    from: Cursor,
    /// Rows of the run up to `rows`' position (the sink's cursor counts the same way).
    total: u64,
}

/// A remote sink on its own thread, following the run's event files from its cursor.
pub struct Follower {
    name: String,
    run_dir: PathBuf,
    files: Vec<PathBuf>,
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
    counter: Mutex<Counter>,
    /// What the sink acknowledged of the logger's event file, for the `sink` health rule.
    acks: Arc<SinkAcks>,
}

impl Follower {
    /// Start following `files` (the run's event files in run order; the last one may still
    /// grow) for `sink`, from its saved cursor.
    pub fn spawn(
        sink: Box<dyn Sink>,
        run_dir: &Path,
        files: Vec<PathBuf>,
        notify: Notify,
    ) -> Result<Self> {
        let name = sink.name().to_owned();
        let pump = Pump::new(sink, run_dir, files.clone())?;
        let counter = Counter {
            rows: Streams::new(run_dir, files.clone(), &pump.cursor)?,
            from: pump.cursor.clone(),
            total: pump.cursor.rows,
        };
        let acks = pump.acks.clone();
        let shared = Arc::new(Shared::default());
        shared.lock().cursor = pump.cursor.clone();
        let s = shared.clone();
        let handle = std::thread::Builder::new()
            .name(format!("tally-{name}"))
            .spawn(move || follow(pump, &s, &*notify))
            .map_err(Error::io("start the remote-sink thread for", run_dir))?;
        Ok(Follower {
            name,
            run_dir: run_dir.to_owned(),
            files,
            shared,
            handle: Some(handle),
            counter: Mutex::new(counter),
            acks,
        })
    }

    /// The rows of the logger's event file (the last of the run's files when it started) the
    /// sink acknowledged, as the `sink` health rule reads them (docs/contract/health.md
    /// "Sink").
    pub fn acks(&self) -> Arc<SinkAcks> {
        self.acks.clone()
    }

    /// Where the sink stands during the run, for the summaries rewritten meanwhile: `pending`
    /// is the rows complete in the files (a live file's last step is not, yet) that the sink
    /// has not acknowledged.
    pub fn progress(&self) -> RemoteSinkProgress {
        let (cursor, last_error) = {
            let s = self.shared.lock();
            (s.cursor.clone(), s.last_error.clone())
        };
        let mut c = self.counter.lock().unwrap_or_else(|e| e.into_inner());
        let Counter { rows, from, total } = &mut *c;
        let read_error = rows
            .each_row(false, from, |_| *total += 1)
            .err()
            .map(|e| format!("{}: {e}", self.run_dir.display()));
        RemoteSinkProgress {
            name: self.name.clone(),
            sent_through_step: cursor.step,
            pending: c.total.saturating_sub(cursor.rows),
            last_error: last_error.or(read_error),
        }
    }

    /// The sink's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The run's files are complete: send the rest, waiting at most `timeout`; past it the
    /// follower stops at its next row boundary (a hung call is left behind, never waited on)
    /// and the rest is `tally sync`'s. Returns where the sink stands.
    pub fn finish(&mut self, timeout: Duration) -> RemoteSinkProgress {
        let deadline = Instant::now() + timeout;
        self.shared.lock().finishing = true;
        self.shared.wake.notify_all();
        let mut state = self.shared.lock();
        while !state.done {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .shared
                .wake
                .wait_timeout(state, left)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        let done = state.done;
        if !done {
            state.stop = true;
        }
        let (cursor, last_error) = (state.cursor.clone(), state.last_error.clone());
        drop(state);
        self.shared.wake.notify_all();
        if done {
            if let Some(h) = self.handle.take() {
                let _ = h.join();
            }
        }
        // Files that cannot be read back count nothing pending, and say why.
        let (pending, read_error) = match scan_pending(&self.files, &cursor) {
            Ok(p) => (p.rows, None),
            Err(e) => (0, Some(format!("{}: {e}", self.run_dir.display()))),
        };
        RemoteSinkProgress {
            name: self.name.clone(),
            sent_through_step: cursor.step,
            pending,
            last_error: last_error.or(read_error),
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        if self.handle.is_some() {
            self.shared.lock().stop = true;
            self.shared.wake.notify_all();
        }
    }
}

/// The follower thread's loop.
fn follow(mut pump: Pump, shared: &Shared, notify: &dyn Fn(String)) {
    let mut backoff = BACKOFF_MIN;
    let mut failing = false;
    let mut completed = false;
    loop {
        let (finishing, stop) = {
            let s = shared.lock();
            (s.finishing, s.stop)
        };
        if stop {
            break;
        }
        if let Err(e) = pump.fill(finishing) {
            notify(format!(
                "{} sink: {e}; it stops following the run there",
                pump.name()
            ));
            shared.lock().last_error = Some(e.to_string());
            break;
        }
        if pump.queue.is_empty() {
            if finishing {
                completed = true;
                break;
            }
            shared.sleep(POLL, true);
            continue;
        }
        let step = pump.step_ahead();
        let result = pump.send(&|| shared.lock().stop);
        let mut s = shared.lock();
        s.cursor = pump.cursor.clone();
        match result {
            Ok(_) => {
                if failing {
                    failing = false;
                    backoff = BACKOFF_MIN;
                    s.last_error = None;
                    drop(s);
                    notify(format!(
                        "{} sink caught up from the event file",
                        pump.name()
                    ));
                }
            }
            Err(e) => {
                s.last_error = Some(e.to_string());
                drop(s);
                if !failing {
                    failing = true;
                    notify(format!(
                        "{} sink failed at step {}: {e}; the training loop does not wait: the \
                         rows stay in the event file and are sent again",
                        pump.name(),
                        step.map_or_else(|| "?".into(), |s| s.to_string())
                    ));
                }
                shared.sleep(backoff, false);
                backoff = (backoff * 2).min(BACKOFF_MAX);
                if let Err(e) = pump.rewind() {
                    shared.lock().last_error = Some(e.to_string());
                }
            }
        }
    }
    if completed {
        let closed = pump.sink.flush().and_then(|()| pump.sink.close());
        if let Err(e) = closed {
            shared.lock().last_error = Some(e.to_string());
        }
    }
    shared.lock().done = true;
    shared.wake.notify_all();
}

/// What `tally sync` did for one run.
#[derive(Debug)]
pub struct SyncReport {
    /// Rows sent now.
    pub sent: u64,
    /// Rows sent by earlier followers or syncs.
    pub sent_before: u64,
    /// Where the sink stands now.
    pub progress: RemoteSinkProgress,
    /// The hosted run's URL, when the sink has one.
    pub url: Option<String>,
    /// Truncated tails read past.
    pub damage: Vec<Damage>,
}

/// Send every row of `files` after `sink`'s cursor to it, in order (the `tally sync` path):
/// start the sink, send, close it. `progress(sent, total, step)` is called after each batch.
/// A sink that keeps failing ends the send with its error; the cursor keeps what it took.
pub fn send_run(
    mut sink: Box<dyn Sink>,
    run_dir: &Path,
    files: Vec<PathBuf>,
    mut progress: impl FnMut(u64, u64, i64),
) -> Result<SyncReport> {
    let cursor = Cursor::load(run_dir, sink.name())?.unwrap_or_default();
    let total = scan_pending(&files, &cursor)?.rows;
    sink.start(run_dir).map_err(|e| sink_error(&*sink, e))?;
    let url = sink.run_url();
    let mut pump = Pump::new(sink, run_dir, files)?;
    let sent_before = pump.cursor.rows;
    let mut sent = 0u64;
    let mut failures = 0;
    let mut backoff = BACKOFF_MIN;
    loop {
        pump.fill(true)?;
        if pump.queue.is_empty() {
            break;
        }
        match pump.send(&|| false) {
            Ok(n) => {
                sent += n as u64;
                failures = 0;
                backoff = BACKOFF_MIN;
                progress(sent, total, pump.cursor.step.unwrap_or(0));
            }
            Err(e) => {
                failures += 1;
                if failures >= SYNC_ATTEMPTS {
                    return Err(Error::Sink {
                        sink: pump.name().to_owned(),
                        iteration: 0,
                        message: format!(
                            "{e} ({failures} attempts; {sent} rows sent now, the cursor in {} \
                             keeps them: run tally sync again to continue)",
                            Cursor::path(run_dir, pump.name()).display()
                        ),
                    });
                }
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(BACKOFF_MAX);
                pump.rewind().map_err(|e| sink_error(&*pump.sink, e))?;
            }
        }
    }
    let progress = RemoteSinkProgress {
        name: pump.name().to_owned(),
        sent_through_step: pump.cursor.step,
        pending: 0,
        last_error: None,
    };
    // Before the sink closes: W&B copies the summary into its own when it finishes.
    super::progress::record_in_summary(run_dir, &progress)?;
    let closed = pump.sink.flush().and_then(|()| pump.sink.close());
    closed.map_err(|e| sink_error(&*pump.sink, e))?;
    Ok(SyncReport {
        sent,
        sent_before,
        progress,
        url,
        damage: pump.streams.take_damage(),
    })
}
