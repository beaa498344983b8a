//! `with log.phase(name):`, the learner-phase timer of a `tally.Logger`.

use super::guard::{lock, refuse_reentry, refuse_tally_thread};
use super::state::PyLogger;
use pyo3::prelude::*;
use std::time::Instant;
use tally::Key;

/// `with log.phase(name):` — times the block into the next step's learner phase `name`.
#[pyclass(module = "tally._tally", name = "Phase")]
pub struct Phase {
    pub(super) logger: Py<PyLogger>,
    pub(super) name: Key,
    pub(super) started: Option<Instant>,
}

#[pymethods]
impl Phase {
    fn __enter__(mut slf: PyRefMut<'_, Self>) -> PyRefMut<'_, Self> {
        slf.started = Some(Instant::now());
        slf
    }

    #[pyo3(signature = (exc_type = None, exc = None, tb = None))]
    fn __exit__(
        &mut self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        exc: Option<&Bound<'_, PyAny>>,
        tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let _ = (exc_type, exc, tb);
        let Some(t0) = self.started.take() else {
            return Ok(false);
        };
        let secs = t0.elapsed().as_secs_f64();
        refuse_tally_thread("phase")?;
        refuse_reentry("phase")?;
        let log = self.logger.get();
        if log.tracer.is_enabled() {
            // The block ended now on the tracer's clock and lasted `secs`.
            let end = log.tracer.now();
            crate::trace::name_thread(py, &log.tracer)?;
            log.tracer.complete(&self.name, "learner", end - secs, end);
        }
        let mut draft = lock(py, &log.draft);
        match draft.pending.iter_mut().find(|(k, _)| *k == self.name) {
            Some(e) => e.1 += secs,
            None => draft.pending.push((self.name.clone(), secs)),
        }
        Ok(false)
    }

    /// The learner phase this timer feeds.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }
}
