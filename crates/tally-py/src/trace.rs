//! The trace from Python: `with log.span(...)`, `log.counter(...)`, `log.add_span(...)`
//! (docs/contract/trace.md). Spans land on the calling Python thread, named as `threading`
//! names it; with tracing off every call returns at its first check.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tally::trace::{Mark, Tracer};

/// Name the calling thread in the trace as Python's `threading` names it (Rust cannot see
/// the names of threads it did not start).
pub fn name_thread(py: Python<'_>, tracer: &Tracer) -> PyResult<()> {
    if tracer.is_enabled() {
        let t = py.import("threading")?.call_method0("current_thread")?;
        tracer.name_thread(&t.getattr("name")?.extract::<String>()?);
    }
    Ok(())
}

/// `log.counter(name, value)`.
pub fn counter(tracer: &Tracer, name: &str, value: f64) -> PyResult<()> {
    tracer
        .counter(name, value)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `log.add_span(name, cat, start, duration, track)`: `start` is a `time.perf_counter()`
/// reading, moved onto the trace's clock through the two clocks' readings now. Arguments are
/// checked with tracing off too.
pub fn add_span(
    py: Python<'_>,
    tracer: &Tracer,
    name: &str,
    cat: &str,
    start: f64,
    duration: f64,
    track: &str,
) -> PyResult<()> {
    let start = match tracer.is_enabled() {
        true => {
            let now: f64 = py.import("time")?.call_method0("perf_counter")?.extract()?;
            tracer.now() - (now - start)
        }
        false => start,
    };
    tracer
        .add_span(name, cat, start, duration, track)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `with log.span(name, cat=...):` — one span on the calling thread, from enter to exit.
#[pyclass(module = "tally._tally", name = "Span")]
pub struct Span {
    tracer: Tracer,
    name: String,
    cat: String,
    mark: Option<Mark>,
}

impl Span {
    pub fn new(tracer: Tracer, name: String, cat: String) -> Self {
        Span {
            tracer,
            name,
            cat,
            mark: None,
        }
    }
}

#[pymethods]
impl Span {
    fn __enter__(mut slf: PyRefMut<'_, Self>) -> PyRefMut<'_, Self> {
        slf.mark = slf.tracer.begin();
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
        if let Some(m) = self.mark.take() {
            name_thread(py, &self.tracer)?;
            self.tracer.end(m, &self.name, &self.cat);
        }
        Ok(false)
    }

    /// The span's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The span's category.
    #[getter]
    fn cat(&self) -> &str {
        &self.cat
    }
}
