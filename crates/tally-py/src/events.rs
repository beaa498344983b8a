//! `EventWriter`: tally's event-file writer for `tally.SummaryWriter` (one event per step
//! of scalars; summaries and events built elsewhere written as they come).
//!
//! Any thread may call it at any time (docs/contract/threads-and-signals.md "Sharing a
//! logger between threads"): the class is frozen and its state sits behind a mutex taken
//! with the GIL released while waiting, so each call writes whole records, in call order.

use crate::convert::{event_step, number, KeyCache};
use crate::errors::Failure;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use tally_tfevents::proto::{event, Event, SessionLog};
use tally_tfevents::{encode_summary_event, override_event, EventFileWriter, WriterOptions};

/// An `events.out.tfevents.*` file in a directory, written one step (event) at a time.
#[pyclass(module = "tally._tally", name = "EventWriter", frozen)]
pub struct EventWriter {
    inner: Mutex<Inner>,
    path: PathBuf,
}

/// What the calls change: the open file and the scalar conversion buffers.
struct Inner {
    writer: Option<EventFileWriter>,
    keys: KeyCache,
    scratch: Vec<(tally::Key, f64)>,
}

impl EventWriter {
    fn inner(&self, py: Python<'_>) -> MutexGuard<'_, Inner> {
        self.inner
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Run `f` on the open file, or fail naming the closed one.
    fn with_open<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut EventFileWriter) -> Result<T, tally_tfevents::WriteError>,
    ) -> PyResult<T> {
        let mut inner = self.inner(py);
        let w = inner.writer.as_mut().ok_or_else(|| self.closed_error())?;
        Ok(f(w).map_err(Failure::from)?)
    }

    fn closed_error(&self) -> Failure {
        Failure::Closed(format!("event file {} is closed", self.path.display()))
    }
}

/// An optional event step, refused (on this call only) beyond int64.
fn opt_step(step: Option<&Bound<'_, PyAny>>) -> PyResult<Option<i64>> {
    Ok(match step.filter(|s| !s.is_none()) {
        Some(s) => Some(event_step("step", s)?),
        None => None,
    })
}

#[pymethods]
impl EventWriter {
    /// Create `log_dir` if needed and a new event file in it (never overwriting one).
    /// `filename_suffix` is appended to the file name (torch's keyword).
    #[new]
    #[pyo3(signature = (log_dir, filename_suffix=""))]
    fn new(log_dir: PathBuf, filename_suffix: &str) -> PyResult<Self> {
        if filename_suffix.contains(['/', '\\', '\0']) {
            return Err(Failure::Config(format!(
                "filename_suffix {filename_suffix:?} must not contain a path separator or NUL"
            ))
            .into());
        }
        std::fs::create_dir_all(&log_dir).map_err(|source| {
            Failure::Tally(tally::Error::Io {
                op: "create log directory",
                path: log_dir.clone(),
                source,
            })
        })?;
        let options = WriterOptions {
            suffix: filename_suffix.to_string(),
            ..WriterOptions::from_env()
        };
        let writer = EventFileWriter::open(&log_dir, options).map_err(Failure::from)?;
        let path = writer.path().to_owned();
        Ok(EventWriter {
            inner: Mutex::new(Inner {
                writer: Some(writer),
                keys: KeyCache::default(),
                scratch: Vec::new(),
            }),
            path,
        })
    }

    /// Write one event at `step` holding every `tag: value` of `scalars` (f32 simple values).
    fn write_scalars(
        &self,
        py: Python<'_>,
        step: &Bound<'_, PyAny>,
        wall_time: f64,
        scalars: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let step = event_step("step", step)?;
        let mut guard = self.inner(py);
        let inner: &mut Inner = &mut guard;
        if inner.writer.is_none() {
            return Err(self.closed_error().into());
        }
        inner.scratch.clear();
        for (k, v) in scalars.iter() {
            let key = inner.keys.key(0, "scalars", &k)?;
            let value = number(0, &|| format!("scalar '{key}' at step {step}"), &v)?;
            inner.scratch.push((key, value));
        }
        let pairs: Vec<(&str, f64)> = inner.scratch.iter().map(|(k, v)| (&**k, *v)).collect();
        let w = inner.writer.as_mut().ok_or_else(|| self.closed_error())?;
        w.write_scalars(step, wall_time, &pairs)
            .map_err(Failure::from)?;
        Ok(())
    }

    /// Write one event holding the serialized `Summary` `summary` (no step field when `step` is None).
    #[pyo3(signature = (step, wall_time, summary))]
    fn write_summary(
        &self,
        py: Python<'_>,
        step: Option<&Bound<'_, PyAny>>,
        wall_time: f64,
        summary: &[u8],
    ) -> PyResult<()> {
        let step = opt_step(step)?;
        let event = encode_summary_event(step, wall_time, summary);
        self.with_open(py, |w| w.write_event_bytes(&event))
    }

    /// Write a serialized `Event`, its `step` and `wall_time` replaced when given.
    #[pyo3(signature = (event, step=None, wall_time=None))]
    fn write_event(
        &self,
        py: Python<'_>,
        event: &[u8],
        step: Option<&Bound<'_, PyAny>>,
        wall_time: Option<f64>,
    ) -> PyResult<()> {
        let step = opt_step(step)?;
        let event = override_event(event, step, wall_time);
        self.with_open(py, |w| w.write_event_bytes(&event))
    }

    /// Write a session-start event at `step`: TensorBoard then drops the events of earlier
    /// files at `step` and later (torch's `purge_step`).
    fn write_session_start(
        &self,
        py: Python<'_>,
        step: &Bound<'_, PyAny>,
        wall_time: f64,
    ) -> PyResult<()> {
        let step = event_step("step", step)?;
        let event = Event {
            wall_time,
            step,
            what: Some(event::What::SessionLog(SessionLog {
                status: 1,
                ..Default::default()
            })),
        };
        self.with_open(py, |w| w.write_event(&event))
    }

    /// Push written records to the OS (a no-op in practice: records are never buffered).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        if let Some(w) = self.inner(py).writer.as_mut() {
            w.flush().map_err(Failure::from)?;
        }
        Ok(())
    }

    /// Close the file. Closing twice is harmless.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let writer = self.inner(py).writer.take();
        if let Some(w) = writer {
            w.close().map_err(Failure::from)?;
        }
        Ok(())
    }

    /// The event file's path (`pathlib.Path`).
    #[getter]
    fn path(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(py
            .import("pathlib")?
            .getattr("Path")?
            .call1((self.path.to_string_lossy().into_owned(),))?
            .unbind())
    }

    /// Whether `close()` has run.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        self.inner(py).writer.is_none()
    }
}
