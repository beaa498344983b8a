//! One sink as the writer thread drives it (docs/contract/run-artifacts.md "Storage faults").
//!
//! A local-storage sink (the event file) that fails keeps the steps it could not write in a
//! bounded backlog and writes them again, oldest first, before any newer step: on the next
//! steps, at flush and at close. Steps past the cap, and steps still kept at close, are counted
//! lost. Any other sink (a remote one) is set aside at its first failure so it cannot hold the
//! others back.

use crate::lost::LostSteps;
use crate::sink::{BackendStep, Relinked, Sink, SinkError, StorageFault};
use crate::writer::failures::SinkFailure;
use std::collections::VecDeque;
use std::sync::Arc;

/// Most steps a failing local sink keeps for a retry.
pub const BACKLOG_MAX_STEPS: usize = 10_000;
/// Most bytes (estimated in memory) a failing local sink keeps for a retry.
pub const BACKLOG_MAX_BYTES: usize = 64 << 20;

/// A sink with its failure state and, for local storage, its backlog and counts.
pub(crate) struct Slot {
    sink: Box<dyn Sink>,
    storage: bool,
    /// A remote sink that failed: no more writes go to it.
    set_aside: bool,
    backlog: VecDeque<BackendStep>,
    backlog_bytes: usize,
    /// An outage is under way and was reported: later failures of it are not reported again.
    failing: bool,
    /// The backlog overflowed during this outage and that was reported.
    overflowing: bool,
    /// Steps written to the sink.
    persisted: u64,
    /// Steps that will never reach the sink.
    pub lost: u64,
    /// Which iterations they were.
    pub lost_steps: LostSteps,
    /// The first and last iteration written to the sink (what an unlinked file held).
    written_span: Option<(u64, u64)>,
    /// The sink's file was unlinked and is not back at its path yet (why): the steps written
    /// to it are only in the open file, so they count as pending, not persisted.
    unlinked: Option<String>,
}

/// Memory one kept step holds (tags are shared pointers, so the pairs dominate).
fn step_bytes(step: &BackendStep) -> usize {
    std::mem::size_of::<BackendStep>()
        + step.scalars.len() * std::mem::size_of::<(crate::tag::Tag, f64)>()
}

/// What a failed write of a local sink did to its step.
enum Outcome {
    /// Nothing of the step stayed: keep it and try again later.
    Retry,
    /// The step can never be written.
    Lost,
    /// The step is in the file; only pushing it to stable storage failed.
    Written,
}

fn outcome(e: SinkError) -> (Outcome, String) {
    match e.downcast::<StorageFault>() {
        Ok(fault) => match *fault {
            StorageFault::Unwritable(e) => (Outcome::Lost, e.to_string()),
            StorageFault::NotSynced(e) => (Outcome::Written, e.to_string()),
        },
        Err(e) => (Outcome::Retry, e.to_string()),
    }
}

impl Slot {
    pub(crate) fn new(sink: Box<dyn Sink>) -> Self {
        Slot {
            storage: sink.is_local_storage(),
            sink,
            set_aside: false,
            backlog: VecDeque::new(),
            backlog_bytes: 0,
            failing: false,
            overflowing: false,
            persisted: 0,
            lost: 0,
            lost_steps: LostSteps::default(),
            written_span: None,
            unlinked: None,
        }
    }

    /// Writes a system sample once, best effort, as a text summary is: a sink set aside or in
    /// an outage skips it, and a failed write is not retried (docs/contract/system-metrics.md
    /// "Step and wall time").
    pub(crate) fn write_system(&mut self, step: i64, wall_time: f64, values: &[(Arc<str>, f64)]) {
        if self.set_aside || self.failing || !self.backlog.is_empty() {
            return;
        }
        let _ = self.sink.write_system(step, wall_time, values);
    }

    /// Writes a text summary (a health finding) once, best effort: a sink set aside or in
    /// an outage skips it, and a failed write is not retried (the finding stays in
    /// `run_summary.json`; docs/contract/health.md "In the logger").
    pub(crate) fn write_text(&mut self, step: i64, wall_time: f64, tag: &str, text: &str) {
        if self.set_aside || self.failing || !self.backlog.is_empty() {
            return;
        }
        let _ = self.sink.write_text(step, wall_time, tag, text);
    }

    /// The sink's name.
    pub(crate) fn name(&self) -> &str {
        self.sink.name()
    }

    /// Whether this is the run's local storage.
    pub(crate) fn is_storage(&self) -> bool {
        self.storage
    }

    /// Steps in the sink's file at its path.
    pub(crate) fn persisted(&self) -> u64 {
        match self.unlinked {
            Some(_) => 0,
            None => self.persisted,
        }
    }

    /// Steps kept for a retry (those only in an unlinked file among them).
    pub(crate) fn pending(&self) -> u64 {
        let unlinked = if self.unlinked.is_some() {
            self.persisted
        } else {
            0
        };
        self.backlog.len() as u64 + unlinked
    }

    /// Put the sink's file back at its path if it was unlinked (`Sink::relink`). A failure
    /// leaves the steps in the open file, pending, for the next try (or lost at close).
    pub(crate) fn relink(&mut self) -> Result<Option<Relinked>, SinkError> {
        if !self.storage || self.set_aside {
            return Ok(None);
        }
        match self.sink.relink() {
            Ok(done) => {
                self.unlinked = None;
                Ok(done)
            }
            Err(e) => {
                self.unlinked = Some(e.to_string());
                Err(e)
            }
        }
    }

    pub(crate) fn failure(&self, iteration: u64, message: String) -> SinkFailure {
        SinkFailure {
            sink: self.sink.name().to_owned(),
            iteration,
            message,
        }
    }

    /// Write `step` after whatever the backlog holds. Returns what to report: each outage once
    /// (at its first failed write), a lost step, and the first overflow of the backlog.
    pub(crate) fn write(&mut self, step: &BackendStep, out: &mut Vec<SinkFailure>) {
        if self.set_aside {
            return;
        }
        if !self.storage {
            if let Err(e) = self.sink.write(step) {
                self.set_aside = true;
                out.push(self.failure(step.iteration, e.to_string()));
            }
            return;
        }
        self.retry(out);
        if !self.backlog.is_empty() {
            self.keep(step.clone(), out);
            return;
        }
        match self.sink.write(step) {
            Ok(()) => self.written(step.iteration),
            Err(e) => match self.fault(step.iteration, e, out) {
                Outcome::Retry => self.keep(step.clone(), out),
                Outcome::Lost => self.lose(step.iteration, step.iteration, 1),
                Outcome::Written => self.persist(step.iteration),
            },
        }
    }

    fn written(&mut self, iteration: u64) {
        self.persist(iteration);
        self.failing = false;
    }

    fn persist(&mut self, iteration: u64) {
        self.persisted += 1;
        let first = self.written_span.map_or(iteration, |(f, _)| f);
        self.written_span = Some((first, iteration));
    }

    /// Count `n` steps from iteration `first` to `last` lost, and which they were.
    fn lose(&mut self, first: u64, last: u64, n: u64) {
        self.lost += n;
        self.lost_steps.add_run(first, last, n, self.persisted);
    }

    /// Classify a failed write and report it if it starts an outage (or loses the step).
    fn fault(&mut self, iteration: u64, e: SinkError, out: &mut Vec<SinkFailure>) -> Outcome {
        let (what, text) = outcome(e);
        match what {
            Outcome::Retry if !self.failing => {
                self.failing = true;
                out.push(self.failure(
                    iteration,
                    format!(
                        "{text}; this step and the next ones are kept (up to {BACKLOG_MAX_STEPS} \
                         steps or {} MiB) and written again once the disk takes them",
                        BACKLOG_MAX_BYTES >> 20
                    ),
                ));
            }
            Outcome::Written if !self.failing => {
                self.failing = true;
                out.push(self.failure(iteration, format!("{text}; the step is in the file")));
            }
            Outcome::Lost => {
                out.push(self.failure(iteration, format!("{text}; the step is lost")));
            }
            Outcome::Retry | Outcome::Written => {}
        }
        what
    }

    /// Keep a step the sink could not take, or count it lost when the backlog is full.
    fn keep(&mut self, step: BackendStep, out: &mut Vec<SinkFailure>) {
        let bytes = step_bytes(&step);
        if self.backlog.len() >= BACKLOG_MAX_STEPS || self.backlog_bytes + bytes > BACKLOG_MAX_BYTES
        {
            self.lose(step.iteration, step.iteration, 1);
            if !self.overflowing {
                self.overflowing = true;
                out.push(self.failure(
                    step.iteration,
                    format!(
                        "{} steps are waiting for the disk (the cap is {BACKLOG_MAX_STEPS} steps \
                         or {} MiB): this step and later ones are lost until it takes writes again",
                        self.backlog.len(),
                        BACKLOG_MAX_BYTES >> 20
                    ),
                ));
            }
            return;
        }
        self.backlog_bytes += bytes;
        self.backlog.push_back(step);
    }

    /// Write the backlog, oldest first, until a write fails again.
    pub(crate) fn retry(&mut self, out: &mut Vec<SinkFailure>) {
        while let Some(step) = self.backlog.front() {
            let (iteration, bytes) = (step.iteration, step_bytes(step));
            match self.sink.write(step) {
                Ok(()) => self.written(iteration),
                Err(e) => match self.fault(iteration, e, out) {
                    Outcome::Retry => return,
                    Outcome::Lost => self.lose(iteration, iteration, 1),
                    Outcome::Written => self.persist(iteration),
                },
            }
            self.backlog.pop_front();
            self.backlog_bytes -= bytes;
        }
        self.overflowing = false;
    }

    /// Retry the backlog, then push buffered data towards stable storage.
    pub(crate) fn flush(&mut self, out: &mut Vec<SinkFailure>) {
        if self.set_aside {
            return;
        }
        if self.storage {
            self.retry(out);
        }
        if let Err(e) = self.sink.flush() {
            if self.storage {
                if !self.failing {
                    self.failing = true;
                    out.push(self.failure(0, e.to_string()));
                }
            } else {
                self.set_aside = true;
                out.push(self.failure(0, e.to_string()));
            }
        }
    }

    /// Last retry of the backlog (what is still kept is lost), then close the sink.
    pub(crate) fn close(&mut self, out: &mut Vec<SinkFailure>) {
        if self.storage {
            self.retry(out);
            if !self.backlog.is_empty() {
                let first = self.backlog.front().map_or(0, |s| s.iteration);
                let last = self.backlog.back().map_or(0, |s| s.iteration);
                let n = self.backlog.len() as u64;
                self.lose(first, last, n);
                self.backlog.clear();
                self.backlog_bytes = 0;
                let which = match first == last {
                    true => format!("iteration {first}"),
                    false => format!("iterations {first}–{last}"),
                };
                out.push(self.failure(
                    first,
                    format!(
                        "the disk still refused writes at close: {n} kept steps are lost \
                         ({which})"
                    ),
                ));
            }
            if let Some(why) = self.unlinked.take() {
                let n = std::mem::take(&mut self.persisted);
                let (first, last) = self.written_span.take().unwrap_or((0, 0));
                self.lose(first, last, n);
                out.push(self.failure(
                    0,
                    format!("{why}; still not restored at close: the {n} steps it held are lost"),
                ));
            }
        }
        // Close even a set-aside sink: it may hold files or a remote run.
        if let Err(e) = self.sink.close() {
            out.push(self.failure(0, e.to_string()));
        }
    }
}
