//! Object-store URLs for the readers (`tally.read`, `read_runs`, `runs`, `compare`, `sql`):
//! `_mirror` makes a URL its mirror's local path, polled once with the GIL released
//! (docs/contract/object-storage.md), and `_cloud_shown` puts URLs back into a message naming
//! a mirror.

use crate::errors::{class, Kind};
use pyo3::prelude::*;
use std::path::PathBuf;

/// The local path to read for `path`: itself, or a URL's mirror after one poll. Raises
/// `StorageError` naming the URL when the store cannot be read.
#[pyfunction]
pub fn _mirror(py: Python<'_>, path: PathBuf) -> PyResult<PathBuf> {
    match py.detach(|| tally_cloud::resolve(&path).map(|r| r.path())) {
        Ok(local) => Ok(local),
        Err(e) => Err(PyErr::from_type(class(py, Kind::Storage)?, e.to_string())),
    }
}

/// `text` naming the URLs where it names their mirrors.
#[pyfunction]
pub fn _cloud_shown(text: &str) -> String {
    tally_cloud::shown(text)
}
