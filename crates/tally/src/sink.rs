//! Sinks: where the backend payload of each logged step goes.
//!
//! A small trait whose optional hooks default to no-ops. The writer thread owns the sinks
//! and calls them in order. A failing local-storage sink keeps its unwritten steps and retries
//! them; any other failing sink is reported and set aside while the others go on
//! (docs/contract/run-artifacts.md "Storage faults"). A remote sink is not the writer
//! thread's: it follows the event file (`remote.rs`).

use crate::segments::Segments;
use crate::tag::Tag;
use crate::upload::Upload;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tally_tfevents::{EventFileWriter, OpenError, WriteError, WriteRecordError, WriterOptions};

/// One logged iteration's backend payload.
#[derive(Debug, Clone)]
pub struct BackendStep {
    /// The learner iteration.
    pub iteration: u64,
    /// The step axis value (env steps when > 0, else the iteration).
    pub step: i64,
    /// Wall time, seconds since the Unix epoch.
    pub wall_time: f64,
    /// Canonical tags → unsmoothed values in persisted units.
    pub scalars: Vec<(Tag, f64)>,
}

/// Why a sink failed: its own error, kept typed (an event-file error, a Python exception's text).
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// A local-storage sink's failed write that is not "nothing written, try again later" (the
/// default reading of any other error from such a sink). Return it boxed as the [`SinkError`].
#[derive(Debug, thiserror::Error)]
pub enum StorageFault {
    /// The step can never be written (a record over the size cap): it is counted lost.
    #[error("{0}")]
    Unwritable(SinkError),
    /// The step reached the file, but pushing it to stable storage failed: it counts as
    /// persisted (a process crash no longer loses it) and the failure is reported.
    #[error("{0}")]
    NotSynced(SinkError),
}

/// A local file put back at its path after it was unlinked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relinked {
    /// The file.
    pub path: PathBuf,
    /// The bytes copied back from the open file.
    pub bytes: u64,
}

/// A destination for backend payloads.
pub trait Sink: Send {
    /// A short name for messages (`tensorboard`, `wandb`, `memory`).
    fn name(&self) -> &str;
    /// Persist one step. An error sets this sink aside for the rest of the run, unless the sink
    /// is local storage (see [`Sink::is_local_storage`]).
    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError>;
    /// Write one text summary (TensorBoard's text plugin) at `step`: a health finding
    /// (docs/contract/health.md "In the logger"). Sinks without text skip it.
    fn write_text(
        &mut self,
        step: i64,
        wall_time: f64,
        tag: &str,
        text: &str,
    ) -> Result<(), SinkError> {
        let _ = (step, wall_time, tag, text);
        Ok(())
    }
    /// Write one system sample (`system/...` tags) as one event at `step`
    /// (docs/contract/system-metrics.md). Sinks without it skip it.
    fn write_system(
        &mut self,
        step: i64,
        wall_time: f64,
        values: &[(Arc<str>, f64)],
    ) -> Result<(), SinkError> {
        let _ = (step, wall_time, values);
        Ok(())
    }
    /// Whether this sink is the run's local storage (the event file). A failed write of such a
    /// sink must leave nothing of the step behind; the step is kept and written again later
    /// (bounded), and the sink's counts fill `persisted_iterations` / `lost_iterations`.
    fn is_local_storage(&self) -> bool {
        false
    }
    /// Whether this sink is remote (W&B): fed from the run's event file on a thread of its own,
    /// from a cursor kept in the run directory, instead of by the writer thread
    /// (docs/contract/remote-sinks.md). The run must then have an event file.
    fn is_remote(&self) -> bool {
        false
    }
    /// A remote sink's rows acknowledged so far over the run (its cursor): the index of the
    /// next row it is given. Called before the first write and again before rows are sent
    /// again after a failure.
    fn resume_at(&mut self, rows: u64) -> Result<(), SinkError> {
        let _ = rows;
        Ok(())
    }
    /// A remote sink's destination once started (W&B: `entity/project/run id`): a cursor kept
    /// for another destination does not apply to this one.
    fn remote_run(&self) -> Option<String> {
        None
    }
    /// A local-storage sink whose file was unlinked (its run directory removed) puts it back at
    /// its path from the open file and writes on there; `Ok(None)` when it is still linked.
    /// Called on the writer thread at each summary rewrite, flush and close, never per step.
    fn relink(&mut self) -> Result<Option<Relinked>, SinkError> {
        Ok(None)
    }
    /// Push buffered data towards durable storage.
    fn flush(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
    /// Finish; called once at close.
    fn close(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
    /// Open the destination once the run directory and `run_config.json` exist, on the thread
    /// that builds the logger, before any step (W&B's `init` needs both). An error fails the build.
    fn start(&mut self, run_dir: &Path) -> Result<(), SinkError> {
        let _ = run_dir;
        Ok(())
    }
    /// The hosted run's URL, once started (recorded as `wandb_run_url` in `run_summary.json`).
    fn run_url(&self) -> Option<String> {
        None
    }
}

/// TensorBoard event file sink: one Event per logged step holding all its tags.
pub struct TensorBoardSink {
    writer: Option<EventFileWriter>,
    path: PathBuf,
    /// A run written to object storage: the event file as segments (docs/contract/
    /// object-storage.md "Writing").
    segments: Option<Segments>,
}

impl TensorBoardSink {
    /// Create an event file in `dir`.
    pub fn create(dir: &Path, options: WriterOptions) -> Result<Self, OpenError> {
        let writer = EventFileWriter::open(dir, options)?;
        let path = writer.path().to_owned();
        Ok(TensorBoardSink {
            writer: Some(writer),
            path,
            segments: None,
        })
    }

    /// The event file in `dir` as segments, each handed to `upload` once closed.
    pub fn segmented(
        dir: &Path,
        options: WriterOptions,
        upload: Arc<dyn Upload>,
    ) -> Result<Self, OpenError> {
        let (segments, writer) = Segments::open(dir, options, upload)?;
        let path = writer.path().to_owned();
        Ok(TensorBoardSink {
            writer: Some(writer),
            path,
            segments: Some(segments),
        })
    }

    /// The open file, for an event at `step`: with segments, the next one when the open one is
    /// due and `step` passes every step written.
    fn writer_at(&mut self, step: i64) -> Result<&mut EventFileWriter, SinkError> {
        let w = self.writer.as_mut().ok_or("event file already closed")?;
        if let Some(s) = &mut self.segments {
            s.before(w, step);
            self.path = w.path().to_owned();
        }
        Ok(w)
    }

    /// An event at `step` is written.
    fn written(&mut self, step: i64) {
        if let Some(s) = &mut self.segments {
            s.written(step);
        }
    }

    /// The event file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write the purge marker at `step` (a rewinding resume, before any step: readers drop
    /// the earlier files' points from `step` on; docs/contract/run-artifacts.md "Resume").
    pub fn write_session_start(&mut self, step: i64, wall_time: f64) -> crate::Result<()> {
        let w = self.writer.as_mut().ok_or_else(|| crate::Error::Io {
            op: "write the purge marker to",
            path: self.path.clone(),
            source: std::io::Error::other("event file already closed"),
        })?;
        w.write_session_start(step, wall_time)
            .map_err(|e| crate::Error::Io {
                op: "write the purge marker to",
                path: self.path.clone(),
                source: std::io::Error::other(e.to_string()),
            })
    }
}

impl Sink for TensorBoardSink {
    fn name(&self) -> &str {
        "tensorboard"
    }

    fn is_local_storage(&self) -> bool {
        true
    }

    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        let w = self.writer_at(step.step)?;
        let scalars = step.scalars.iter().map(|(t, v)| (t.as_str(), *v));
        // Tags were resolved against the schema: unique and non-empty already.
        w.write_resolved_scalar_iter(step.step, step.wall_time, scalars)
            .map_err(classify)?;
        self.written(step.step);
        Ok(())
    }

    fn write_text(
        &mut self,
        step: i64,
        wall_time: f64,
        tag: &str,
        text: &str,
    ) -> Result<(), SinkError> {
        use tally_tfevents::summary_event::{encode_summary, encode_summary_event};
        let w = self.writer_at(step)?;
        let summary = encode_summary(vec![tally_tfevents::plugin_summaries::text_value(
            tag, text,
        )]);
        w.write_event_bytes(&encode_summary_event(Some(step), wall_time, &summary))
            .map_err(classify)?;
        self.written(step);
        Ok(())
    }

    fn write_system(
        &mut self,
        step: i64,
        wall_time: f64,
        values: &[(Arc<str>, f64)],
    ) -> Result<(), SinkError> {
        let w = self.writer_at(step)?;
        // The sampler's tags: fixed, unique and valid (docs/contract/system-metrics.md).
        let scalars = values.iter().map(|(t, v)| (&**t, *v));
        w.write_resolved_scalar_iter(step, wall_time, scalars)
            .map_err(classify)?;
        self.written(step);
        Ok(())
    }

    fn relink(&mut self) -> Result<Option<Relinked>, SinkError> {
        let Some(w) = self.writer.as_mut() else {
            return Ok(None);
        };
        let unlinked = w
            .is_unlinked()
            .map_err(|e| format!("cannot check the event file {}: {e}", self.path.display()))?;
        if !unlinked {
            return Ok(None);
        }
        let bytes = w.relink()?;
        Ok(Some(Relinked {
            path: self.path.clone(),
            bytes,
        }))
    }

    fn flush(&mut self) -> Result<(), SinkError> {
        let Some(w) = self.writer.as_mut() else {
            return Ok(());
        };
        w.sync()?;
        if let Some(s) = &mut self.segments {
            s.flush(w.path(), w.bytes_written());
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), SinkError> {
        let Some(w) = self.writer.take() else {
            return Ok(());
        };
        let path = w.path().to_owned();
        let closed = w.close();
        if let Some(s) = &mut self.segments {
            // Put even after a failed close: what the file holds is the run's.
            s.close(&path);
        }
        Ok(closed?)
    }
}

/// How an event-file error leaves the step: an I/O failure wrote nothing that stays in the file
/// (the writer cuts a partial record back), so the step is retried; the rest are final.
fn classify(e: WriteError) -> SinkError {
    match e {
        WriteError::Record {
            source: WriteRecordError::Io { .. },
            ..
        }
        | WriteError::Repair { .. } => Box::new(e),
        WriteError::Sync { .. } => Box::new(StorageFault::NotSynced(Box::new(e))),
        _ => Box::new(StorageFault::Unwritable(Box::new(e))),
    }
}

/// An in-memory sink for tests: every step it receives, shared through a handle.
#[derive(Debug, Clone, Default)]
pub struct MemorySink {
    steps: Arc<Mutex<Vec<BackendStep>>>,
    closed: Arc<Mutex<bool>>,
}

impl MemorySink {
    /// A new, empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything written so far.
    pub fn steps(&self) -> Vec<BackendStep> {
        self.steps.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether `close` was called.
    pub fn is_closed(&self) -> bool {
        *self.closed.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Sink for MemorySink {
    fn name(&self) -> &str {
        "memory"
    }

    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        self.steps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(step.clone());
        Ok(())
    }

    fn close(&mut self) -> Result<(), SinkError> {
        *self.closed.lock().unwrap_or_else(|e| e.into_inner()) = true;
        Ok(())
    }
}
