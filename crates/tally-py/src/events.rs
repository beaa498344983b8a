//! `EventWriter`: tally's event-file writer for `tally.SummaryWriter` (one event per step
//! of scalars; summaries and events built elsewhere written as they come).
//!
//! `add_scalar` keeps the scalars of the current step in a batch, in Rust: torch's
//! `add_scalar` is called once per value, so its per-call cost is a lookup of the tag by the
//! identity of its `str` and a push (docs/contract/integrations.md "The scalar batch").
//!
//! Any thread may call it at any time (docs/contract/threads-and-signals.md "Sharing a
//! logger between threads"): the class is frozen and its state sits behind a mutex taken
//! with the GIL released while waiting, so each call writes whole records, in call order.

use crate::bucket::Bucket;
use crate::convert::{event_step, number, repr, type_name, AddrHasher, KeyCache};
use crate::errors::Failure;
use crate::event_output::Output;
use crate::flusher::{self, Batched};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyDict, PyFloat, PyInt, PyString};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tally::kept_events::KeepingEventFile;
use tally::runlock::RunLock;
use tally::OnStorageError;
use tally_cloud::{Roll, SegmentedEventFile};
use tally_tfevents::{
    encode_scalar_event, encode_scalar_event_from, encode_summary_event, override_event,
    proto::encode_session_start, EventFileWriter, WriterOptions,
};

/// An `events.out.tfevents.*` file in a directory, written one step (event) at a time.
#[pyclass(module = "tally._tally", name = "EventWriter", frozen)]
pub struct EventWriter {
    /// Shared with the batch timer, which holds it weakly.
    inner: Arc<Mutex<Inner>>,
    path: PathBuf,
    /// The system metrics' sampler once started, stopped at close
    /// (docs/contract/system-metrics.md), and its note (why there are no GPU tags).
    system: Arc<Mutex<(Option<tally::system::Sampler>, Option<String>)>>,
}

/// Writes a SummaryWriter's system samples into its event file, each as one event at the step
/// of the newest scalar batch, never writing the batch itself (docs/contract/system-metrics.md
/// "Step and wall time").
struct ToEventFile {
    inner: std::sync::Weak<Mutex<Inner>>,
    note: std::sync::Weak<Mutex<(Option<tally::system::Sampler>, Option<String>)>>,
}

impl tally::system::Deliver for ToEventFile {
    fn sample(&mut self, sample: tally::system::Sample) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
        let step = inner.batch.step;
        if let Some(w) = inner.writer.as_mut() {
            let pairs: Vec<(&str, f64)> = sample.values.iter().map(|(t, v)| (&**t, *v)).collect();
            // What a full disk refuses is kept by the file; the outage is raised by the next
            // call, as the batch timer's is.
            let written = w.write_with(Some(step), |buf| {
                encode_scalar_event(step, sample.wall_time, &pairs, buf)
            });
            if let Err(e) = written {
                inner.deferred.get_or_insert(e);
            }
        }
    }

    fn note(&mut self, text: &str) {
        if let Some(n) = self.note.upgrade() {
            n.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(text.to_owned());
        }
    }
}

/// What the calls change: the open file, the scalar batch and the conversion buffers.
struct Inner {
    /// The open file, keeping what a full disk refuses (docs/contract/run-artifacts.md
    /// "Storage faults"), or a bucket's open segment (docs/contract/object-storage.md "Writing").
    writer: Option<Output>,
    /// An outage the batch timer met: raised by the next call, which cannot lose it.
    deferred: Option<tally::Error>,
    /// The directory's lock while the file is open: one writer per directory
    /// (docs/contract/run-artifacts.md "Resume").
    lock: Option<RunLock>,
    keys: KeyCache,
    scratch: Vec<(tally::Key, f64)>,
    tags: Tags,
    batch: Batch,
    /// How long a batch may wait for its step's next value (the last `add_scalar`'s
    /// `flush_secs`); `None` never.
    flush_after: Option<Duration>,
}

/// Tag tables beyond this are dropped when the next batch starts (tags invented every step).
const MAX_TAGS: usize = 8192;

/// The tags `add_scalar` has seen: each text once, numbered; and each `str` object by address.
/// A cached `str` is referenced, so its address cannot be reused by another while cached.
#[derive(Default)]
struct Tags {
    by_addr: HashMap<usize, (Py<PyString>, u32), BuildHasherDefault<AddrHasher>>,
    by_text: HashMap<Box<str>, u32>,
    text: Vec<Box<str>>,
    /// The batch each tag was last added to: a repeat within a batch is found without a scan.
    last_batch: Vec<u64>,
}

impl Tags {
    /// The number of `tag`'s text; a tag that is not a non-empty `str` is refused by name.
    fn id(&mut self, tag: &Bound<'_, PyAny>) -> Result<u32, Failure> {
        let addr = tag.as_ptr() as usize;
        if let Some((_, id)) = self.by_addr.get(&addr) {
            return Ok(*id);
        }
        let bad = |why: &str| {
            Failure::ValueType(format!(
                "add_scalar: tag {} of type {}: {why}",
                repr(tag),
                type_name(tag)
            ))
        };
        let s = tag
            .cast::<PyString>()
            .map_err(|_| bad("tags must be str"))?;
        let text = s.to_cow().map_err(|e| bad(&e.to_string()))?;
        if text.is_empty() {
            return Err(bad("tags must be non-empty str"));
        }
        let id = match self.by_text.get(&*text) {
            Some(id) => *id,
            None => {
                let id = self.text.len() as u32;
                self.text.push(text.as_ref().into());
                self.last_batch.push(0);
                self.by_text.insert(text.as_ref().into(), id);
                id
            }
        };
        if self.by_addr.len() >= MAX_TAGS {
            self.by_addr.clear();
        }
        self.by_addr.insert(addr, (s.clone().unbind(), id));
        Ok(id)
    }
}

/// The scalars of one step not yet written: one event when the step ends.
struct Batch {
    /// Numbers batches from 1, for [`Tags::last_batch`].
    number: u64,
    step: i64,
    wall_time: f64,
    started: Instant,
    values: Vec<(u32, f64)>,
}

impl Inner {
    /// Write the batch as one event (nothing when empty). The batch is done either way: an
    /// event the disk refuses is kept by the file and written again later.
    fn write_batch(&mut self) -> Result<(), tally::Error> {
        if self.batch.values.is_empty() {
            return Ok(());
        }
        let Some(w) = self.writer.as_mut() else {
            return Ok(());
        };
        let text = &self.tags.text;
        let pairs = self
            .batch
            .values
            .iter()
            .map(|&(id, v)| (&*text[id as usize], v));
        // Non-empty (checked when first seen) and unique (a repeat starts a new batch).
        let (step, wall_time) = (self.batch.step, self.batch.wall_time);
        let written = w.write_with(Some(step), |buf| {
            encode_scalar_event_from(step, wall_time, pairs, buf)
        });
        self.batch.values.clear();
        written
    }

    /// The batch written and then `event` (at `step`, when known), also when the batch's
    /// write reports an outage (its event is kept): the first report is returned, after both
    /// were taken.
    fn write_after_batch(&mut self, step: Option<i64>, event: &[u8]) -> Result<(), Failure> {
        let batch = self.write_batch();
        let this = match self.writer.as_mut() {
            Some(w) => w.write_bytes(step, event),
            None => Ok(()),
        };
        self.raise_deferred()?;
        batch.and(this).map_err(failure)
    }

    /// The outage the batch timer met, if any.
    fn raise_deferred(&mut self) -> Result<(), Failure> {
        self.deferred.take().map_or(Ok(()), |e| Err(failure(e)))
    }
}

/// A write error as the binding raises it: tfevents' own errors as before, the rest as tally's.
fn failure(e: tally::Error) -> Failure {
    match e {
        tally::Error::EventWrite(w) => Failure::Write(w),
        e => Failure::Tally(e),
    }
}

/// `flush_secs` as a wait: none for 0 or less, `None` (never) for NaN or beyond `Duration`.
fn flush_after(flush_secs: f64) -> Option<Duration> {
    if flush_secs <= 0.0 {
        return Some(Duration::ZERO);
    }
    Duration::try_from_secs_f64(flush_secs).ok()
}

impl Batched for Inner {
    fn due(&self) -> Option<Instant> {
        if self.batch.values.is_empty() || self.writer.is_none() {
            return None;
        }
        self.batch.started.checked_add(self.flush_after?)
    }

    fn write_pending(&mut self) {
        if let Err(e) = self.write_batch() {
            // The next call raises it; the event itself is kept by the file.
            self.deferred.get_or_insert(e);
        }
    }
}

impl Drop for Inner {
    /// An unclosed writer being collected: its batch and file are closed, as `close()` would;
    /// nothing can be raised here, so a failure is said on stderr.
    fn drop(&mut self) {
        let say = |e: &dyn std::fmt::Display| {
            eprintln!("tally: warning: an unclosed event writer: {e}");
        };
        let failures = [
            self.deferred.take().map_or(Ok(()), Err),
            self.write_batch(),
            self.writer.take().map_or(Ok(()), Output::close),
        ];
        failures
            .iter()
            .filter_map(|r| r.as_ref().err())
            .for_each(|e| say(e));
    }
}

/// `add_scalar`'s value as torch takes it: `float(v)` of anything but None, str or bytes.
fn scalar_value(tag: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>) -> Result<f64, Failure> {
    if let Ok(f) = v.cast::<PyFloat>() {
        return Ok(f.value());
    }
    let tag = tag
        .str()
        .map(|t| t.to_string_lossy().into_owned())
        .unwrap_or_else(|_| repr(tag));
    if v.is_none() || v.is_instance_of::<PyString>() || v.is_instance_of::<pyo3::types::PyBytes>() {
        return Err(Failure::ValueType(format!(
            "add_scalar('{tag}'): expected a number, got {} {}",
            type_name(v),
            repr(v)
        )));
    }
    let py = v.py();
    let refused = |e: PyErr| {
        Failure::ValueType(format!(
            "add_scalar('{tag}'): expected a number, got {}: {}",
            type_name(v),
            e.value(py)
        ))
    };
    // A one-element array or tensor (what `keepdims=True` or a shape-[1] tensor's `.numpy()`
    // gives) is its element, as torch's writer squeezes it; numpy refuses `float()` of one.
    let is_array = !v.is_instance_of::<PyInt>()
        && v.getattr(pyo3::intern!(py, "ndim"))
            .and_then(|n| n.extract::<i64>())
            .is_ok_and(|n| n > 0);
    let element = if is_array {
        v.call_method0(pyo3::intern!(py, "item")).map_err(refused)?
    } else {
        v.clone()
    };
    py.get_type::<PyFloat>()
        .call1((element,))
        .and_then(|f| f.extract::<f64>())
        .map_err(refused)
}

/// `add_scalar`'s step as torch takes it: `int(global_step)`, None as 0, within int64.
fn scalar_step(v: Option<&Bound<'_, PyAny>>) -> PyResult<i64> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(0);
    };
    let int;
    let n = if v.is_exact_instance_of::<PyInt>() {
        v
    } else {
        int = v.py().get_type::<PyInt>().call1((v,))?;
        &int
    };
    n.extract::<i64>().map_err(|_| {
        Failure::Schema(format!(
            "global_step={}: beyond TensorBoard's int64 step range [{}, {}]",
            repr(v),
            i64::MIN,
            i64::MAX
        ))
        .into()
    })
}

fn now_wall() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl EventWriter {
    fn inner(&self, py: Python<'_>) -> MutexGuard<'_, Inner> {
        self.inner
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Write a serialized event to the open file, or fail naming the closed one.
    /// The scalar batch is written first: the file keeps the calls' order.
    fn write_bytes(&self, py: Python<'_>, step: Option<i64>, event: &[u8]) -> PyResult<()> {
        let mut inner = self.inner(py);
        if inner.writer.is_none() {
            return Err(self.closed_error().into());
        }
        Ok(inner.write_after_batch(step, event)?)
    }

    fn closed_error(&self) -> Failure {
        Failure::Closed(format!("event file {} is closed", self.path.display()))
    }
}

/// Write every event writer's pending scalar batch now, the GIL released (registered with
/// `atexit`: a writer never closed has its last step on disk when the interpreter exits).
#[pyfunction]
pub fn _write_event_batches(py: Python<'_>) {
    py.detach(flusher::write_all);
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
    /// `on_storage_error` is the Logger's choice for a disk that refuses writes: `"raise"`
    /// the outage once, or `"warn"` on stderr; either way what is refused is kept and written
    /// again (docs/contract/run-artifacts.md "Storage faults").
    /// With `bucket`, `log_dir` is a directory in the bucket's staging directory and the file
    /// goes to the bucket as segments (docs/contract/object-storage.md "Writing").
    #[pyo3(signature = (log_dir, filename_suffix="", on_storage_error="raise", bucket=None))]
    fn new(
        log_dir: PathBuf,
        filename_suffix: &str,
        on_storage_error: &str,
        bucket: Option<PyRef<'_, Bucket>>,
    ) -> PyResult<Self> {
        let on_error: OnStorageError = on_storage_error.parse().map_err(Failure::Config)?;
        if filename_suffix.contains(['/', '\\', '\0']) {
            return Err(Failure::Config(format!(
                "filename_suffix {filename_suffix:?} must not contain a path separator or NUL"
            ))
            .into());
        }
        if let Some(scheme) = tally::rundir::url_scheme(&log_dir) {
            // Never a local directory named `s3:` (docs/contract/object-storage.md "Writing").
            return Err(Failure::Config(format!(
                "log_dir {}: a {scheme}:// URL; tally.SummaryWriter writes to a bucket (this \
                 low-level writer takes its staging directory and bucket=)",
                log_dir.display()
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
        // Refused before the file exists when another writer holds the directory.
        let lock = RunLock::acquire(&log_dir).map_err(Failure::from)?;
        let writer = match bucket {
            Some(b) => Output::Bucket(
                SegmentedEventFile::open(
                    &log_dir,
                    options,
                    on_error,
                    Roll::from_env(),
                    b.uploader.clone(),
                )
                .map_err(Failure::from)?,
            ),
            None => Output::Local(KeepingEventFile::new(
                EventFileWriter::open(&log_dir, options).map_err(Failure::from)?,
                on_error,
            )),
        };
        let path = writer.path().to_owned();
        let inner = Arc::new(Mutex::new(Inner {
            writer: Some(writer),
            deferred: None,
            lock,
            keys: KeyCache::default(),
            scratch: Vec::new(),
            tags: Tags::default(),
            batch: Batch {
                number: 0,
                step: 0,
                wall_time: 0.0,
                started: Instant::now(),
                values: Vec::new(),
            },
            flush_after: flush_after(120.0),
        }));
        let timed: Arc<Mutex<dyn Batched>> = inner.clone();
        flusher::register(&timed);
        Ok(EventWriter {
            inner,
            path,
            system: Arc::default(),
        })
    }

    /// Add `tag: value` to the batch of `global_step`. The batch is written as one event first
    /// when the step changes, the tag is already in it, `walltime` differs from the batch's,
    /// or the batch is `flush_secs` old; the batch timer writes it once it is `flush_secs` old
    /// with no call coming. A bad argument is refused with the batch kept.
    #[pyo3(signature = (tag, value, global_step=None, walltime=None, flush_secs=120.0))]
    fn add_scalar(
        &self,
        py: Python<'_>,
        tag: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        global_step: Option<&Bound<'_, PyAny>>,
        walltime: Option<&Bound<'_, PyAny>>,
        flush_secs: f64,
    ) -> PyResult<()> {
        // Converted before the lock is taken: `float()` and `int()` may run Python code.
        let value = scalar_value(tag, value)?;
        let step = scalar_step(global_step)?;
        let walltime = match walltime.filter(|w| !w.is_none()) {
            Some(w) => Some(py.get_type::<PyFloat>().call1((w,))?.extract::<f64>()?),
            None => None,
        };
        let mut guard = self.inner(py);
        let inner: &mut Inner = &mut guard;
        if inner.writer.is_none() {
            return Err(self.closed_error().into());
        }
        let mut written = Ok(());
        if inner.batch.values.is_empty() && inner.tags.text.len() > MAX_TAGS {
            // No batch refers to a tag number now: start the tables afresh.
            inner.tags = Tags::default();
        }
        let id = inner.tags.id(tag)?;
        let now = Instant::now();
        let batch = &inner.batch;
        if !batch.values.is_empty()
            && (step != batch.step
                || inner.tags.last_batch[id as usize] == batch.number
                || walltime.is_some_and(|w| w != batch.wall_time)
                || now.duration_since(batch.started).as_secs_f64() >= flush_secs)
        {
            // Raised after this value joins the next batch: the call's value is accepted.
            written = inner.write_batch();
        }
        if inner.batch.values.is_empty() {
            let b = &mut inner.batch;
            b.number += 1;
            b.step = step;
            b.wall_time = walltime.unwrap_or_else(now_wall);
            b.started = now;
            if inner.flush_after.map(|d| d.as_secs_f64()) != Some(flush_secs) {
                inner.flush_after = flush_after(flush_secs);
            }
            if let Some(due) = inner.flush_after.and_then(|d| now.checked_add(d)) {
                flusher::batch_started(due);
            }
        }
        inner.tags.last_batch[id as usize] = inner.batch.number;
        inner.batch.values.push((id, value));
        inner.raise_deferred()?;
        Ok(written.map_err(failure)?)
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
        // Dict keys: unique, and non-empty as `keys.key` checks.
        let pairs: Vec<(&str, f64)> = inner.scratch.iter().map(|(k, v)| (&**k, *v)).collect();
        let mut event = Vec::new();
        encode_scalar_event(step, wall_time, &pairs, &mut event);
        Ok(inner.write_after_batch(Some(step), &event)?)
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
        self.write_bytes(py, step, &encode_summary_event(step, wall_time, summary))
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
        self.write_bytes(py, step, &override_event(event, step, wall_time))
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
        self.write_bytes(py, Some(step), &encode_session_start(step, wall_time))
    }

    /// Write the scalar batch and what a full disk kept: when it returns, every value so far
    /// is in the file (handed to the OS). While the disk keeps refusing, it raises each time
    /// (with `on_storage_error="raise"`).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let mut inner = self.inner(py);
        let batch = inner.write_batch();
        inner.raise_deferred()?;
        batch.map_err(failure)?;
        if let Some(w) = inner.writer.as_mut() {
            // A bucket's flush waits for the store (bounded): the GIL released.
            py.detach(|| w.flush()).map_err(failure)?;
        }
        Ok(())
    }

    /// Sample the process, the machine and each GPU every `interval` seconds into this file
    /// under `system/...` until `close` (docs/contract/system-metrics.md). Once per writer.
    fn start_system_metrics(&self, py: Python<'_>, interval: f64) -> PyResult<()> {
        tally::system::check_interval("system_interval", interval).map_err(Failure::Config)?;
        let mut system = self
            .system
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner());
        if system.0.is_some() {
            return Ok(());
        }
        let deliver = ToEventFile {
            inner: Arc::downgrade(&self.inner),
            note: Arc::downgrade(&self.system),
        };
        let dir = self.path.parent().map(PathBuf::from).unwrap_or_default();
        let sampler = tally::system::Sampler::spawn(
            Duration::from_secs_f64(interval),
            dir,
            tally::system::gpu::Devices::All,
            Box::new(now_wall),
            Box::new(deliver),
        )
        .map_err(|e| Failure::Config(format!("cannot start the system metrics thread: {e}")))?;
        system.0 = Some(sampler);
        Ok(())
    }

    /// Why the system samples have no GPU tags, once the sampler said so (`None` otherwise).
    #[getter]
    fn system_note(&self, py: Python<'_>) -> Option<String> {
        let system = self
            .system
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner());
        system.1.clone()
    }

    /// Write the scalar batch, retry what a full disk kept one last time, and close the file;
    /// what is still kept is lost and said. Closing twice is harmless.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        // No sample after close begins; the sampler is joined with the GIL released (its
        // sample in progress takes this writer's lock, never the GIL).
        let sampler = self
            .system
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner())
            .0
            .take();
        if let Some(mut s) = sampler {
            py.detach(move || s.stop());
        }
        let (batch, deferred, writer, lock) = {
            let mut inner = self.inner(py);
            let batch = inner.write_batch();
            (
                batch,
                inner.deferred.take(),
                inner.writer.take(),
                inner.lock.take(),
            )
        };
        // A bucket's last segment is put and waited for (bounded): the GIL released.
        let closed = py.detach(|| writer.map_or(Ok(()), Output::close));
        drop(lock); // the directory is free once its file is closed
        deferred
            .map_or(Ok(()), Err)
            .and(batch)
            .and(closed)
            .map_err(failure)?;
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
