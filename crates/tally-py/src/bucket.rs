//! `Bucket`: a run written to object storage (docs/contract/object-storage.md "Writing"), for
//! `tally.SummaryWriter("s3://...")`. It holds the run's uploader and its staging directory,
//! the local directory the writer writes into; `EventWriter(..., bucket=)` writes its event
//! file there as segments, and `put` hands the uploader a JSON artefact written whole.

use crate::errors::{class, Failure, Kind};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use tally_cloud::segments::CLOSE_WAIT;
use tally_cloud::Uploader;

/// Numbers the staging directories of this process.
static NEXT_STAGING: AtomicU64 = AtomicU64::new(0);

/// A run in a bucket: its URL, its staging directory and the thread putting it there.
#[pyclass(module = "tally._tally", name = "Bucket", frozen)]
pub struct Bucket {
    pub(crate) uploader: Arc<Uploader>,
}

/// The uploader of the run at `url` (no trailing `/`), staging in a new directory. A URL no
/// store serves is a `ConfigError` naming it; a staging directory not made, a `StorageError`.
pub(crate) fn start(py: Python<'_>, url: &str) -> PyResult<Arc<Uploader>> {
    match Uploader::start(url, staging_for(url)) {
        Ok(uploader) => Ok(uploader),
        Err(e @ tally_cloud::Error::Url { .. }) => Err(Failure::Config(e.to_string()).into()),
        Err(e) => Err(PyErr::from_type(class(py, Kind::Storage)?, e.to_string())),
    }
}

/// `url`'s staging directory: below the cache directory, named by the URL's parts (so what is
/// left there after a crash says where it goes) and by this writer.
fn staging_for(url: &str) -> PathBuf {
    let mut dir = tally_cloud::mirror::cache_root().join("staging");
    let (scheme, rest) = url.split_once("://").unwrap_or(("url", url));
    dir.push(scheme);
    for part in rest.split('/') {
        if !part.is_empty() && part != "." && part != ".." {
            dir.push(part);
        }
    }
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let n = NEXT_STAGING.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".tally-staging.{secs}.{}.{n}", std::process::id()))
}

#[pymethods]
impl Bucket {
    /// The run at `url`: a client configured from the environment (nothing asked of the store
    /// yet) and a new staging directory. A URL no store serves is a `ConfigError` naming it.
    #[new]
    fn new(py: Python<'_>, url: &str) -> PyResult<Self> {
        let uploader = start(py, url.trim_end_matches('/'))?;
        Ok(Bucket { uploader })
    }

    /// The local directory standing for the URL (`pathlib.Path`-able `str`).
    #[getter]
    fn staging(&self) -> String {
        self.uploader.staging().to_string_lossy().into_owned()
    }

    /// The run's URL.
    #[getter]
    fn url(&self) -> String {
        self.uploader.url().to_owned()
    }

    /// Put `path` (a file below the staging directory, written whole) to its key; returns
    /// at once.
    fn put(&self, path: PathBuf) {
        self.uploader.put(&path, None, false);
    }

    /// Wait until everything handed in is in the store, for at most 10 s while it refuses;
    /// how many puts are left (kept in staging and retried while the process lives).
    fn drain(&self, py: Python<'_>) -> usize {
        py.detach(|| self.uploader.drain(CLOSE_WAIT))
    }
}
