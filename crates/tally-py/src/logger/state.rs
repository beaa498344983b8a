//! What a `tally.Logger` holds: the `PyLogger` class's fields, the `Core` it shares with the
//! exit hook, and the `Draft` of the step being built.
//!
//! Below `logger.rs` (the methods), `closing.rs` (which closes a `Core`) and `phase.rs` (which
//! adds to a logger's `Draft`), so those files reach the state without reaching up into the
//! module that uses them.

use crate::convert::KeyCache;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tally::{Key, StepInput};

/// The shared part: the Rust logger (which owns its panel) and the Python sinks to finish
/// after it closes.
pub(super) struct Core {
    pub(super) log: Option<tally::Logger>,
    pub(super) py_sinks: Vec<Py<PyAny>>,
    pub(super) run_dir: PathBuf,
    /// `sys.stdout`/`sys.stderr` redirected above the live panel, undone at close.
    pub(super) console: Option<Py<PyAny>>,
    /// `log_video` said once that nothing here uploads videos.
    pub(super) video_noted: bool,
    /// The findings `on_health` was told (docs/contract/health.md "In the logger").
    pub(super) health_cursor: usize,
    /// A run written to object storage: its uploader (docs/contract/object-storage.md
    /// "Writing").
    pub(super) bucket: Option<Arc<tally_cloud::Uploader>>,
    /// The logger's `on_storage_error`, for the bucket's faults.
    pub(super) on_storage_error: tally::OnStorageError,
}

/// The step being built: conversion buffers and the phase timers' seconds not yet submitted.
#[derive(Default)]
pub(super) struct Draft {
    pub(super) scratch: StepInput,
    pub(super) keys: KeyCache,
    pub(super) pending: Vec<(Key, f64)>,
}

/// The training logger: one per run, on rank 0; `step()` once per iteration. Its methods,
/// the Python API, are in `logger.rs`.
#[pyclass(module = "tally._tally", name = "Logger", subclass, frozen)]
pub struct PyLogger {
    pub(super) core: Arc<Mutex<Core>>,
    /// Taken before `core` by `step` (a step converts its Python arguments here, running
    /// Python code, before the logger's lock is taken); `phase` adds to it.
    pub(super) draft: Mutex<Draft>,
    pub(super) run_dir: Py<PyAny>,
    pub(super) event_file: Option<Py<PyAny>>,
    pub(super) panel: String,
    /// The trace recorder, disabled unless `trace=True` (docs/contract/trace.md).
    pub(super) tracer: tally::Tracer,
    /// Told each new health finding from `step` (docs/contract/health.md "In the logger").
    pub(super) on_health: Option<Py<PyAny>>,
}
