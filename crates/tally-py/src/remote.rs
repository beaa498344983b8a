//! `RemoteFollower`: a remote sink (the W&B sink) following the event files of a directory on
//! a thread of its own, for `tally.SummaryWriter`'s W&B mirror (docs/contract/remote-sinks.md
//! "SummaryWriter"). The Logger starts its followers itself; this exposes the same
//! [`tally::remote::RemoteSinks`] to a writer that has no Logger.

use crate::errors::Failure;
use crate::sink::PySink;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;
use tally::remote::RemoteSinks;
use tally::Sink;

/// One remote sink over the event files in `run_dir`, from its cursor there.
#[pyclass(module = "tally._tally")]
pub struct RemoteFollower {
    remotes: Mutex<Option<RemoteSinks>>,
    run_dir: PathBuf,
}

#[pymethods]
impl RemoteFollower {
    /// Start `sink` (its `start(run_dir)`, on this thread) and its follower over the event
    /// files now in `run_dir`; outages and recoveries are reported on stderr.
    #[new]
    fn new(sink: &Bound<'_, PyAny>, run_dir: PathBuf) -> PyResult<Self> {
        let mut sink = PySink::new(sink)?;
        sink.start(&run_dir).map_err(|e| {
            Failure::Tally(tally::Error::Sink {
                sink: sink.name().to_owned(),
                iteration: 0,
                message: e.to_string(),
            })
        })?;
        let remotes = RemoteSinks::start(vec![Box::new(sink)], &run_dir, |text| {
            eprintln!("tally: {text}")
        })
        .map_err(Failure::Tally)?;
        Ok(RemoteFollower {
            remotes: Mutex::new(Some(remotes)),
            run_dir,
        })
    }

    /// The event files are complete: let the sink send the rest within `timeout` seconds (the
    /// GIL released, so the follower can call into Python). Returns where the sink stands
    /// (`[{name, sent_through_step, pending, last_error?}]`) and one line for each sink left
    /// behind; a second call returns nothing.
    fn finish<'py>(
        &self,
        py: Python<'py>,
        timeout: f64,
    ) -> PyResult<(Vec<Bound<'py, PyDict>>, Vec<String>)> {
        let timeout = Duration::try_from_secs_f64(timeout).map_err(|_| {
            Failure::Config(format!(
                "remote_finish_timeout {timeout} must be a finite number of seconds >= 0"
            ))
        })?;
        let taken = self
            .remotes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(mut remotes) = taken else {
            return Ok((Vec::new(), Vec::new()));
        };
        let run_dir = self.run_dir.clone();
        let (progress, left) = py.detach(move || remotes.finish(timeout, &run_dir));
        let mut out = Vec::new();
        for p in progress {
            let d = PyDict::new(py);
            d.set_item("name", p.name)?;
            d.set_item("sent_through_step", p.sent_through_step)?;
            d.set_item("pending", p.pending)?;
            if let Some(e) = p.last_error {
                d.set_item("last_error", e)?;
            }
            out.push(d);
        }
        Ok((out, left))
    }
}
