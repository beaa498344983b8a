//! The Python exception tree, declared once, and the one mapping from Rust errors onto it.
//!
//! Every class derives from `tally.TallyError` and also from the natural builtin (`ValueError`
//! for schema and contract violations, `TypeError` for wrong value types, `OSError` for I/O),
//! so both `except tally.TallyError` and ordinary `except ValueError` clauses work. PyO3's
//! `create_exception!` takes one base only, so the classes are built with `type(...)` at import.

use pyo3::exceptions::{PyException, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

/// One class of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `TallyError(Exception)`: the root.
    Tally,
    /// `SchemaError(TallyError, ValueError)`: a step broke the schema or the step-axis contract.
    Schema,
    /// `ConfigError(TallyError, ValueError)`: an unusable logger/writer configuration or name.
    Config,
    /// `ClosedError(TallyError, ValueError)`: the logger or writer was already closed.
    Closed,
    /// `ValueTypeError(TallyError, TypeError)`: a value or key of the wrong Python type.
    ValueType,
    /// `StorageError(TallyError, OSError)`: a file-system or encoding failure.
    Storage,
    /// `SinkError(StorageError)`: a sink (event file, W&B) failed to take a step.
    Sink,
    /// `HealthStop(TallyError)`: a health rule in `stop_on` fired; the step was not taken.
    HealthStop,
}

/// (kind, name, parent in the tree, builtin base, docstring), parents before children.
const TREE: [(Kind, &str, Option<Kind>, Builtin, &str); 8] = [
    (
        Kind::Tally,
        "TallyError",
        None,
        Builtin::Exception,
        "Base class of every error tally raises.",
    ),
    (
        Kind::Schema,
        "SchemaError",
        Some(Kind::Tally),
        Builtin::Value,
        "A step broke the canonical schema or the step-axis contract; nothing was logged for it.",
    ),
    (
        Kind::Config,
        "ConfigError",
        Some(Kind::Tally),
        Builtin::Value,
        "An unusable logger or writer configuration, run name or run directory.",
    ),
    (
        Kind::Closed,
        "ClosedError",
        Some(Kind::Tally),
        Builtin::Value,
        "The logger or writer is already closed.",
    ),
    (
        Kind::ValueType,
        "ValueTypeError",
        Some(Kind::Tally),
        Builtin::Type,
        "A submitted value or key has the wrong Python type (the message names the key).",
    ),
    (
        Kind::Storage,
        "StorageError",
        Some(Kind::Tally),
        Builtin::Os,
        "Writing the run directory, an artefact or an event file failed.",
    ),
    (
        Kind::Sink,
        "SinkError",
        Some(Kind::Storage),
        Builtin::Os,
        "A sink (event file, W&B) failed to persist a step; the other sinks kept it.",
    ),
    (
        Kind::HealthStop,
        "HealthStop",
        Some(Kind::Tally),
        Builtin::Exception,
        "A health rule named in stop_on fired (the finding is its `finding` attribute): this \
         step was not taken; every earlier one is kept and the logger can still be closed.",
    ),
];

#[derive(Debug, Clone, Copy)]
enum Builtin {
    Exception,
    Value,
    Type,
    Os,
}

static CLASSES: [PyOnceLock<Py<PyType>>; 8] = [
    PyOnceLock::new(),
    PyOnceLock::new(),
    PyOnceLock::new(),
    PyOnceLock::new(),
    PyOnceLock::new(),
    PyOnceLock::new(),
    PyOnceLock::new(),
    PyOnceLock::new(),
];

fn index(kind: Kind) -> usize {
    TREE.iter()
        .position(|(k, ..)| *k == kind)
        .expect("every kind is in TREE")
}

/// The class of `kind` (built on first use, normally at import by [`register`]).
pub fn class(py: Python<'_>, kind: Kind) -> PyResult<Bound<'_, PyType>> {
    let i = index(kind);
    if let Some(t) = CLASSES[i].get(py) {
        return Ok(t.bind(py).clone());
    }
    let (_, name, parent, builtin, doc) = TREE[i];
    let builtin = match builtin {
        Builtin::Exception => py.get_type::<PyException>(),
        Builtin::Value => py.get_type::<PyValueError>(),
        Builtin::Type => py.get_type::<PyTypeError>(),
        Builtin::Os => py.get_type::<PyOSError>(),
    };
    let bases = match parent {
        None => PyTuple::new(py, [builtin])?,
        // SinkError's builtin already comes through StorageError.
        Some(p) if p != Kind::Tally => PyTuple::new(py, [class(py, p)?])?,
        Some(p) => PyTuple::new(py, [class(py, p)?, builtin])?,
    };
    let ns = PyDict::new(py);
    ns.set_item("__module__", "tally")?;
    ns.set_item("__doc__", doc)?;
    let t = py
        .get_type::<PyType>()
        .call1((name, bases, ns))?
        .cast_into::<PyType>()?;
    let _ = CLASSES[i].set(py, t.clone().unbind());
    Ok(t)
}

/// Add every class of the tree to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for (kind, name, ..) in TREE {
        m.add(name, class(m.py(), kind)?)?;
    }
    Ok(())
}

/// Everything tally-py raises, before it becomes a Python exception (see [`From`] below).
#[derive(Debug)]
pub enum Failure {
    /// An error of the tally facade.
    Tally(tally::Error),
    /// Opening an event file failed.
    Open(tally_tfevents::OpenError),
    /// Writing an event file failed.
    Write(tally_tfevents::WriteError),
    /// A value or key of the wrong Python type, with the message naming the key.
    ValueType(String),
    /// A key or value the schema or the API does not accept, with the message naming it.
    Schema(String),
    /// A bad constructor argument.
    Config(String),
    /// A call on a closed object.
    Closed(String),
    /// A call the object cannot serve from where it was made (a sink calling back into its
    /// logger from tally's writer thread).
    Reentrant(String),
}

impl From<tally::Error> for Failure {
    fn from(e: tally::Error) -> Self {
        Failure::Tally(e)
    }
}

impl From<tally_tfevents::OpenError> for Failure {
    fn from(e: tally_tfevents::OpenError) -> Self {
        Failure::Open(e)
    }
}

impl From<tally_tfevents::WriteError> for Failure {
    fn from(e: tally_tfevents::WriteError) -> Self {
        Failure::Write(e)
    }
}

/// The one mapping from Rust errors onto the Python tree.
impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        use tally::Error as E;
        use tally_tfevents::WriteError as W;
        let (kind, message) = match f {
            Failure::Tally(e) => {
                let kind = match &e {
                    E::InvalidStep { .. } | E::Ranks(_) | E::Document { .. } => Kind::Schema,
                    E::InvalidName { .. }
                    | E::RunDirTaken(..)
                    | E::RunInUse(..)
                    | E::Config(_)
                    | E::EventFile(tally_tfevents::OpenError::InvalidHostname { .. }) => {
                        Kind::Config
                    }
                    E::EventFile(_) => Kind::Storage,
                    E::Closed => Kind::Closed,
                    E::HealthStop(_) => Kind::HealthStop,
                    E::Sink { .. } | E::NotDurable { .. } | E::EventFileFault { .. } => Kind::Sink,
                    E::EventWrite(_) => Kind::Storage,
                    E::Io { .. } | E::Json { .. } => Kind::Storage,
                    // tally::Error may grow; an unknown variant is still a TallyError.
                    #[allow(unreachable_patterns)]
                    _ => Kind::Tally,
                };
                (kind, e.to_string())
            }
            Failure::Open(e) => (
                match e {
                    tally_tfevents::OpenError::InvalidHostname { .. } => Kind::Config,
                    _ => Kind::Storage,
                },
                e.to_string(),
            ),
            Failure::Write(e) => (
                match e {
                    W::EmptyTag { .. } | W::DuplicateTag { .. } => Kind::Schema,
                    _ => Kind::Storage,
                },
                e.to_string(),
            ),
            Failure::ValueType(m) => (Kind::ValueType, m),
            Failure::Schema(m) => (Kind::Schema, m),
            Failure::Config(m) => (Kind::Config, m),
            Failure::Closed(m) => (Kind::Closed, m),
            Failure::Reentrant(m) => (Kind::Tally, m),
        };
        Python::attach(|py| match class(py, kind) {
            Ok(t) => PyErr::from_type(t, message),
            Err(e) => e,
        })
    }
}

/// Result of tally-py internals: converts into `PyResult` with `?`.
pub type Result<T, E = Failure> = std::result::Result<T, E>;
