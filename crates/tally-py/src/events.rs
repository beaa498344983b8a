//! `EventWriter`: tally's event-file writer for `tally.SummaryWriter` (one event per step
//! of scalars; summaries and events built elsewhere written as they come).

use crate::convert::{event_step, number, KeyCache};
use crate::errors::Failure;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use tally_tfevents::proto::{event, Event, SessionLog};
use tally_tfevents::{encode_summary_event, override_event, EventFileWriter, WriterOptions};

/// An `events.out.tfevents.*` file in a directory, written one step (event) at a time.
#[pyclass(module = "tally._tally", name = "EventWriter")]
pub struct EventWriter {
    writer: Option<EventFileWriter>,
    path: PathBuf,
    keys: KeyCache,
    scratch: Vec<(tally::Key, f64)>,
}

impl EventWriter {
    fn open_writer(&mut self) -> PyResult<&mut EventFileWriter> {
        let path = &self.path;
        Ok(self
            .writer
            .as_mut()
            .ok_or_else(|| Failure::Closed(format!("event file {} is closed", path.display())))?)
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
            writer: Some(writer),
            path,
            keys: KeyCache::default(),
            scratch: Vec::new(),
        })
    }

    /// Write one event at `step` holding every `tag: value` of `scalars` (f32 simple values).
    fn write_scalars(
        &mut self,
        step: &Bound<'_, PyAny>,
        wall_time: f64,
        scalars: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let step = event_step("step", step)?;
        let w = self.writer.as_mut().ok_or_else(|| {
            Failure::Closed(format!("event file {} is closed", self.path.display()))
        })?;
        self.scratch.clear();
        for (k, v) in scalars.iter() {
            let key = self.keys.key(0, "scalars", &k)?;
            let value = number(0, &|| format!("scalar '{key}' at step {step}"), &v)?;
            self.scratch.push((key, value));
        }
        let pairs: Vec<(&str, f64)> = self.scratch.iter().map(|(k, v)| (&**k, *v)).collect();
        w.write_scalars(step, wall_time, &pairs)
            .map_err(Failure::from)?;
        Ok(())
    }

    /// Write one event holding the serialized `Summary` `summary` (no step field when `step` is None).
    #[pyo3(signature = (step, wall_time, summary))]
    fn write_summary(
        &mut self,
        step: Option<&Bound<'_, PyAny>>,
        wall_time: f64,
        summary: &[u8],
    ) -> PyResult<()> {
        let step = opt_step(step)?;
        let event = encode_summary_event(step, wall_time, summary);
        self.open_writer()?
            .write_event_bytes(&event)
            .map_err(Failure::from)?;
        Ok(())
    }

    /// Write a serialized `Event`, its `step` and `wall_time` replaced when given.
    #[pyo3(signature = (event, step=None, wall_time=None))]
    fn write_event(
        &mut self,
        event: &[u8],
        step: Option<&Bound<'_, PyAny>>,
        wall_time: Option<f64>,
    ) -> PyResult<()> {
        let step = opt_step(step)?;
        let event = override_event(event, step, wall_time);
        self.open_writer()?
            .write_event_bytes(&event)
            .map_err(Failure::from)?;
        Ok(())
    }

    /// Write a session-start event at `step`: TensorBoard then drops the events of earlier
    /// files at `step` and later (torch's `purge_step`).
    fn write_session_start(&mut self, step: &Bound<'_, PyAny>, wall_time: f64) -> PyResult<()> {
        let step = event_step("step", step)?;
        let event = Event {
            wall_time,
            step,
            what: Some(event::What::SessionLog(SessionLog {
                status: 1,
                ..Default::default()
            })),
        };
        self.open_writer()?
            .write_event(&event)
            .map_err(Failure::from)?;
        Ok(())
    }

    /// Push written records to the OS (a no-op in practice: records are never buffered).
    fn flush(&mut self) -> PyResult<()> {
        if let Some(w) = self.writer.as_mut() {
            w.flush().map_err(Failure::from)?;
        }
        Ok(())
    }

    /// Close the file. Closing twice is harmless.
    fn close(&mut self) -> PyResult<()> {
        if let Some(w) = self.writer.take() {
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
    fn closed(&self) -> bool {
        self.writer.is_none()
    }
}
