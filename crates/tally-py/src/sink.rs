//! `PySink`: a Rust [`tally::Sink`] that hands each logged step to a Python object.
//!
//! The writer thread calls it, or for a remote sink (`remote = True`: the W&B, MLflow and
//! trackio sinks) its own
//! follower thread reading the event file (docs/contract/remote-sinks.md), attaching to the
//! interpreter for the call only, so the W&B SDK runs off the training loop's thread. Every method that can wait on the writer thread
//! (`step` under back-pressure, `flush`, `close`) releases the GIL first, or the two threads
//! would deadlock.
//!
//! The Python object's protocol (see `tally._tally.Sink` in the stubs): `name: str`;
//! `start(run_dir) -> url | None` (caller thread, once); `write(step, wall_time, iteration,
//! scalars)` (writer thread, once per logged iteration, `scalars` the exact TensorBoard
//! payload); `flush()`, `close()` (writer thread); optional `finish(run_dir)` and
//! `log_video(path, key)` (caller thread, after close / on demand, through `each_sink`). A
//! remote sink also has `remote = True`, `resume_at(rows)` (the index of the next row it is
//! given) and, once started, `remote_run` (its destination: a cursor kept for another one does
//! not apply).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::path::Path;
use tally::{BackendStep, Sink, SinkError};

/// A new `tally._wandb.WandbSink` (the W&B sink over the real SDK) with `settings` (a dict of
/// W&B settings, or `None`): the one place either the Logger or the CLI's demo builds it.
pub fn wandb_sink<'py>(
    py: Python<'py>,
    settings: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let settings = match settings {
        Some(s) if !s.is_none() => redacted(py, s)?,
        _ => py.None().into_bound(py),
    };
    py.import("tally._wandb")?
        .getattr("WandbSink")?
        .call1((settings,))
}

/// A new replica sink over another tracker's own Python package: `tally._mlflow.MlflowSink`
/// for `"mlflow"`, `tally._trackio.TrackioSink` for `"trackio"`, given its settings dict
/// (checked by the sink, each unknown key refused by name; docs/contract/remote-sinks.md
/// "MLflow" and "trackio").
pub fn replica_sink<'py>(
    py: Python<'py>,
    name: &str,
    settings: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let class = match name {
        "mlflow" => "MlflowSink",
        "trackio" => "TrackioSink",
        other => {
            return Err(crate::errors::Failure::Config(format!(
            "{other}: not a replica tally has (mlflow, trackio, or W&B through logger=\"wandb\")"
        ))
            .into())
        }
    };
    py.import(format!("tally._{name}"))?
        .getattr(class)?
        .call1((settings,))
}

/// The Python sink objects (kept to `finish` them after close) and the same wrapped for the
/// writer thread.
pub type Sinks<'py> = (Vec<Bound<'py, PyAny>>, Vec<Box<dyn Sink>>);

/// The name a Python sink object gives itself, if any.
fn sink_name(o: &Bound<'_, PyAny>) -> Option<String> {
    o.getattr("name").ok()?.extract::<String>().ok()
}

/// The logger's Python sinks: those given, plus the W&B sink when `wandb_backend` and none of
/// them is named `wandb`, plus a replica sink for each `(name, settings)` of `replicas` (a
/// sink of that name given too is refused: two would share one cursor); each wrapped for the
/// writer, a remote one's `finish_timeout` set to the logger's.
pub fn python_sinks<'py>(
    py: Python<'py>,
    mut objs: Vec<Bound<'py, PyAny>>,
    wandb_backend: bool,
    wandb: Option<&Bound<'py, PyDict>>,
    replicas: &[(&str, &Bound<'py, PyDict>)],
    finish_timeout: f64,
) -> PyResult<Sinks<'py>> {
    let has = |objs: &[Bound<'py, PyAny>], name: &str| {
        objs.iter().any(|o| sink_name(o).is_some_and(|n| n == name))
    };
    if wandb_backend && !has(&objs, "wandb") {
        objs.push(wandb_sink(py, wandb.map(|w| w.as_any()))?);
    }
    for (name, settings) in replicas {
        if has(&objs, name) {
            return Err(crate::errors::Failure::Config(format!(
                "{name}={{...}} and a sink named '{name}' in sinks=: give one (both would send \
                 the run through the same cursor)"
            ))
            .into());
        }
        objs.push(replica_sink(py, name, settings.as_any())?);
    }
    let mut boxed: Vec<Box<dyn Sink>> = Vec::with_capacity(objs.len());
    for o in &objs {
        // A remote sink's `finish` after close has the same deadline as its sending.
        if o.hasattr("finish_timeout")? {
            o.setattr("finish_timeout", finish_timeout)?;
        }
        boxed.push(Box::new(PySink::new(o)?));
    }
    Ok((objs, boxed))
}

/// Call `method(args)` on each Python sink that has it (caller thread, GIL held).
pub fn each_sink<'py>(
    py: Python<'py>,
    sinks: &[Py<PyAny>],
    method: &str,
    args: impl Fn() -> PyResult<Bound<'py, pyo3::types::PyTuple>>,
) -> PyResult<()> {
    let mut first_err = None;
    for s in sinks {
        let s = s.bind(py);
        if s.hasattr(method)? {
            if let Err(e) = s.call_method1(method, args()?) {
                first_err.get_or_insert(e);
            }
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// `settings` with every secret redacted: names and notes are free text that W&B stores
/// (docs/contract/run-artifacts.md "Secrets").
fn redacted<'py>(py: Python<'py>, settings: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let json = py.import("json")?;
    let text: String = json.call_method1("dumps", (settings,))?.extract()?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| crate::errors::Failure::Config(format!("wandb settings: {e}")))?;
    json.call_method1("loads", (tally::redact::redact_value(&value).to_string(),))
}

/// A Python sink object driven from the writer thread.
pub struct PySink {
    name: String,
    obj: Py<PyAny>,
    url: Option<String>,
    remote: bool,
    /// The destination a remote sink names once started (`remote_run`).
    remote_run: Option<String>,
}

fn describe(py: Python<'_>, e: PyErr) -> String {
    let text = e.to_string();
    // Keep the traceback's last frame for a failure deep inside an SDK.
    match e.traceback(py).and_then(|tb| tb.format().ok()) {
        Some(tb) if !tb.is_empty() => {
            let last = tb.lines().rev().take(2).collect::<Vec<_>>();
            format!(
                "{text} (at {})",
                last.into_iter().rev().collect::<Vec<_>>().join(" ")
            )
        }
        _ => text,
    }
}

impl PySink {
    /// Wrap `obj`, reading its `name` attribute.
    pub fn new(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        if !obj.hasattr("write")? {
            return Err(crate::errors::Failure::Config(format!(
                "sink {} has no write(step, wall_time, iteration, scalars) method",
                obj.repr()?
            ))
            .into());
        }
        let name = match obj.getattr("name") {
            Ok(n) => n.extract::<String>()?,
            Err(_) => obj.get_type().name()?.to_string(),
        };
        let remote = match obj.getattr("remote") {
            Ok(r) => r.is_truthy()?,
            Err(_) => false,
        };
        Ok(PySink {
            name,
            obj: obj.clone().unbind(),
            url: None,
            remote,
            remote_run: None,
        })
    }

    fn call(&self, method: &str) -> Result<(), SinkError> {
        Python::attach(|py| {
            let o = self.obj.bind(py);
            if !o.hasattr(method).unwrap_or(false) {
                return Ok(());
            }
            o.call_method0(method)
                .map(drop)
                .map_err(|e| SinkError::from(describe(py, e)))
        })
    }
}

impl Sink for PySink {
    fn name(&self) -> &str {
        &self.name
    }

    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        Python::attach(|py| {
            let scalars = PyDict::new(py);
            for (tag, v) in &step.scalars {
                scalars
                    .set_item(PyString::intern(py, tag.as_str()), *v)
                    .map_err(|e| SinkError::from(describe(py, e)))?;
            }
            self.obj
                .bind(py)
                .call_method1(
                    "write",
                    (step.step, step.wall_time, step.iteration, scalars),
                )
                .map(drop)
                .map_err(|e| SinkError::from(describe(py, e)))
        })
    }

    fn is_remote(&self) -> bool {
        self.remote
    }

    fn resume_at(&mut self, rows: u64) -> Result<(), SinkError> {
        Python::attach(|py| {
            let o = self.obj.bind(py);
            if !o.hasattr("resume_at").unwrap_or(false) {
                return Ok(());
            }
            o.call_method1("resume_at", (rows,))
                .map(drop)
                .map_err(|e| SinkError::from(describe(py, e)))
        })
    }

    fn flush(&mut self) -> Result<(), SinkError> {
        self.call("flush")
    }

    fn close(&mut self) -> Result<(), SinkError> {
        self.call("close")
    }

    fn start(&mut self, run_dir: &Path) -> Result<(), SinkError> {
        Python::attach(|py| {
            let o = self.obj.bind(py);
            if !o.hasattr("start").unwrap_or(false) {
                return Ok(());
            }
            let url = o
                .call_method1("start", (run_dir.to_string_lossy().into_owned(),))
                .map_err(|e| SinkError::from(describe(py, e)))?;
            self.url = url.extract::<Option<String>>().unwrap_or(None);
            if let Ok(r) = o.getattr("remote_run") {
                self.remote_run = r.extract::<Option<String>>().unwrap_or(None);
            }
            Ok(())
        })
    }

    fn run_url(&self) -> Option<String> {
        self.url.clone()
    }

    fn remote_run(&self) -> Option<String> {
        self.remote_run.clone()
    }
}
