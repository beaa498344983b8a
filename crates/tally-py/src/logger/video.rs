//! `log.log_video(path)`: the playback video recorded in the summary and uploaded to each sink
//! that takes videos, or, without one, a warning saying where the path went.

use super::guard::{lock, refuse_tally_thread};
use super::state::{Core, PyLogger};
use crate::errors::Failure;
use crate::sink::each_sink;
use pyo3::prelude::*;
use std::path::PathBuf;

/// `Logger.log_video`'s body.
pub(super) fn log_video(
    logger: &PyLogger,
    py: Python<'_>,
    path: PathBuf,
    key: &str,
) -> PyResult<bool> {
    if !path.is_file() {
        return Ok(false);
    }
    refuse_tally_thread("log_video")?;
    let text = path.to_string_lossy().into_owned();
    let mut guard = lock(py, &logger.core);
    let c: &mut Core = &mut guard;
    let log = c
        .log
        .as_mut()
        .filter(|l| !l.is_closed())
        .ok_or(Failure::Tally(tally::Error::Closed))?;
    log.set_play_video_path(text.clone());
    // Steps already submitted reach W&B before the video (its step counter is shared).
    py.detach(|| log.flush()).map_err(Failure::from)?;
    let sinks: Vec<Py<PyAny>> = c.py_sinks.iter().map(|s| s.clone_ref(py)).collect();
    drop(guard);
    // Sinks are asked outside the lock: `hasattr` runs the sink's Python code.
    let mut takes_video = false;
    for s in &sinks {
        takes_video |= s.bind(py).hasattr("log_video")?;
    }
    if !takes_video && !std::mem::replace(&mut lock(py, &logger.core).video_noted, true) {
        // TensorBoard has no plugin that plays a video file: say where the path went.
        let message = format!(
            "tally.Logger.log_video: {text} was recorded as play_video_path in \
             run_summary.json and not uploaded anywhere (TensorBoard has no video plugin \
             and this run has no W&B sink; `tally sync RUN_DIR --to wandb` uploads the run \
             directory's play_video.mp4 with the rows it sends)"
        );
        // No NUL is left, so the conversion cannot fail.
        let message = std::ffi::CString::new(message.replace('\0', "\\0")).unwrap_or_default();
        let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
        PyErr::warn(py, category.as_any(), &message, 1)?;
    }
    each_sink(py, &sinks, "log_video", || {
        pyo3::types::PyTuple::new(py, [text.clone(), key.to_owned()])
    })?;
    Ok(true)
}
