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

use crate::exiting;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
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
    /// A remote sink's `tally._sink_thread.SinkThread`, which makes its calls.
    thread: Option<Py<PyAny>>,
}

/// What a call made on a sink's Python thread gave: a `str` result (or `None`), or the error
/// described.
type Answer = Result<Option<String>, String>;

/// Where a call's answer is left for the waiting follower.
#[derive(Default)]
struct Slot {
    answer: Mutex<Option<Answer>>,
    ready: Condvar,
}

/// The callable the sink's Python thread calls with `(error, result)` after each call.
#[pyclass(frozen)]
struct Reply {
    slot: Arc<Slot>,
}

#[pymethods]
impl Reply {
    fn __call__(&self, py: Python<'_>, error: Option<Bound<'_, PyAny>>, result: Bound<'_, PyAny>) {
        let answer = match error {
            Some(e) => Err(describe(py, PyErr::from_value(e))),
            None => Ok(result.extract::<Option<String>>().unwrap_or(None)),
        };
        *self.slot.answer.lock().unwrap_or_else(|e| e.into_inner()) = Some(answer);
        self.slot.ready.notify_all();
    }
}

thread_local! {
    /// Whether this thread is one Python did not start (known once asked).
    static FOREIGN: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Whether this thread is one Python did not start (a follower's): its calls into a remote
/// sink go to the sink's Python thread. A Python thread (the caller's, starting the logger with
/// the GIL held) makes them itself, or it would wait for a thread that needs its GIL.
fn foreign_thread() -> bool {
    FOREIGN.with(|f| {
        *f.get().get_or_insert_with(|| {
            exiting::attach(|py| -> PyResult<bool> {
                let threading = py.import("threading")?;
                threading
                    .call_method0("current_thread")?
                    .is_instance(&threading.getattr("_DummyThread")?)
            })
            .and_then(Result::ok)
            .unwrap_or(true)
        })
    })
}

/// A remote sink's call refused because the interpreter is exiting.
const EXITING: &str =
    "the interpreter is exiting: the rows left are in the event file, for tally sync";

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
        // A remote sink's calls, made on its follower's thread, run on a Python thread of its
        // own (docs/contract/remote-sinks.md "At exit").
        let thread = if remote {
            let py = obj.py();
            let t = py
                .import("tally._sink_thread")?
                .getattr("SinkThread")?
                .call1((name.as_str(),))?;
            Some(t.unbind())
        } else {
            None
        };
        Ok(PySink {
            name,
            obj: obj.clone().unbind(),
            url: None,
            remote,
            remote_run: None,
            thread,
        })
    }

    /// `method(*args)` of the Python object (`Ok(None)` when it has no such method): on a
    /// remote sink's Python thread, waited for outside the interpreter, unless this thread is
    /// attached already; on this thread for any other sink.
    fn invoke(
        &self,
        method: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
    ) -> Result<Option<String>, SinkError> {
        let Some(thread) = self.thread.as_ref().filter(|_| foreign_thread()) else {
            return Python::attach(|py| {
                let o = self.obj.bind(py);
                if !o.hasattr(method).unwrap_or(false) {
                    return Ok(None);
                }
                let r = args(py)
                    .and_then(|a| o.call_method1(method, a))
                    .map_err(|e| SinkError::from(describe(py, e)))?;
                Ok(r.extract::<Option<String>>().unwrap_or(None))
            });
        };
        let slot = Arc::new(Slot::default());
        let submitted = exiting::attach(|py| -> PyResult<bool> {
            let o = self.obj.bind(py);
            if !o.hasattr(method)? {
                return Ok(false);
            }
            let reply = Py::new(py, Reply { slot: slot.clone() })?;
            thread
                .bind(py)
                .call_method1("submit", (o.getattr(method)?, args(py)?, reply))?;
            Ok(true)
        });
        match submitted {
            None => return Err(SinkError::from(EXITING)),
            Some(Err(e)) => {
                return Err(SinkError::from(
                    exiting::attach(|py| describe(py, e)).unwrap_or_else(|| EXITING.into()),
                ))
            }
            Some(Ok(false)) => return Ok(None),
            Some(Ok(true)) => {}
        }
        let mut answer = slot.answer.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(a) = answer.take() {
                return a.map_err(SinkError::from);
            }
            answer = slot.ready.wait(answer).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn call(&self, method: &str) -> Result<(), SinkError> {
        self.invoke(method, |py| Ok(PyTuple::empty(py))).map(drop)
    }
}

impl Drop for PySink {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            // Its Python thread ends; past the interpreter's exit it simply stays asleep.
            exiting::attach(|py| {
                let _ = t.bind(py).call_method0("stop");
            });
        }
    }
}

impl Sink for PySink {
    fn name(&self) -> &str {
        &self.name
    }

    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        self.invoke("write", |py| {
            let scalars = PyDict::new(py);
            for (tag, v) in &step.scalars {
                scalars.set_item(PyString::intern(py, tag.as_str()), *v)?;
            }
            (step.step, step.wall_time, step.iteration, scalars).into_pyobject(py)
        })
        .map(drop)
    }

    fn is_remote(&self) -> bool {
        self.remote
    }

    fn resume_at(&mut self, rows: u64) -> Result<(), SinkError> {
        self.invoke("resume_at", |py| (rows,).into_pyobject(py))
            .map(drop)
    }

    fn flush(&mut self) -> Result<(), SinkError> {
        self.call("flush")
    }

    fn close(&mut self) -> Result<(), SinkError> {
        self.call("close")
    }

    fn start(&mut self, run_dir: &Path) -> Result<(), SinkError> {
        let dir = run_dir.to_string_lossy().into_owned();
        self.url = self.invoke("start", |py| (dir,).into_pyobject(py))?;
        self.remote_run = exiting::attach(|py| {
            let r = self.obj.bind(py).getattr("remote_run").ok()?;
            r.extract::<Option<String>>().unwrap_or(None)
        })
        .flatten();
        Ok(())
    }

    fn run_url(&self) -> Option<String> {
        self.url.clone()
    }

    fn remote_run(&self) -> Option<String> {
        self.remote_run.clone()
    }
}
