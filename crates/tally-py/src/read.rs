//! `read_columns`: every scalar of event files as Arrow-ready columns, behind `tally.read`:
//! [`tally_read::columns::read_all`] with the GIL released, each column handed to Python as a
//! [`ColumnBuffer`].
//!
//! The rows come in chunks of contiguous columns plus the run and tag dictionaries in Arrow's
//! string layout; each is a [`ColumnBuffer`] that pyarrow wraps in place
//! (`pyarrow.foreign_buffer`), so no Python object is made per scalar and nothing is copied.
//! What is read and what is reported are `tally_read::columns`' rules
//! (`docs/contract/consumers.md` "What readers report").

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use tally_read::columns::{read_all, ReadOptions};

use crate::errors::{class, Kind};

/// One immutable column owned by Rust. `frozen`, so the memory never moves or changes while
/// a pyarrow buffer points into it (the buffer holds this object as its base).
#[pyclass(frozen, module = "tally._tally", name = "ColumnBuffer")]
pub struct ColumnBuffer {
    data: Data,
}

enum Data {
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bytes(Vec<u8>),
}

#[pymethods]
impl ColumnBuffer {
    /// Address of the first byte (for `pyarrow.foreign_buffer`).
    #[getter]
    fn address(&self) -> usize {
        match &self.data {
            Data::I32(v) => v.as_ptr() as usize,
            Data::I64(v) => v.as_ptr() as usize,
            Data::F64(v) => v.as_ptr() as usize,
            Data::Bytes(v) => v.as_ptr() as usize,
        }
    }

    /// Length in bytes.
    #[getter]
    fn size(&self) -> usize {
        match &self.data {
            Data::I32(v) => std::mem::size_of_val(v.as_slice()),
            Data::I64(v) => std::mem::size_of_val(v.as_slice()),
            Data::F64(v) => std::mem::size_of_val(v.as_slice()),
            Data::Bytes(v) => v.len(),
        }
    }
}

fn buffer(py: Python<'_>, data: Data) -> PyResult<Py<ColumnBuffer>> {
    Py::new(py, ColumnBuffer { data })
}

/// Every scalar of the event files or directories `paths` (directories searched recursively),
/// optionally only tags matching one of the `*` globs `tags`, as a dict of column buffers:
/// `rows`, `chunks` (the rows in order, each chunk a dict of `rows`, `step` (int64),
/// `wall_time`, `value` (float64) and `run_codes`/`tag_codes` (int32 indices into the
/// dictionaries)), `runs`/`tags` (`(offsets int32, utf8 bytes, count)`) and
/// `run_dirs` (each run's absolute directory, by code), `damage` (one `(file, offset, kind,
/// detail)` per finding: `truncated_tail`, `steps_back`, `purged`) and `skipped` (one `(run
/// directory, message)` per run not read, with `skip_unreadable`). `strict` refuses a run whose
/// steps go back across its files. Raises `StorageError` naming the file (and byte offset)
/// that could not be read.
#[pyfunction]
#[pyo3(signature = (paths, tags=None, strict=false, skip_unreadable=false))]
fn read_columns<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    tags: Option<Vec<String>>,
    strict: bool,
    skip_unreadable: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = ReadOptions {
        strict,
        skip_unreadable,
        readable_part: false,
    };
    let c = match py.detach(|| read_all(&paths, tags.as_deref(), opts)) {
        Ok(c) => c,
        Err(message) => return Err(PyErr::from_type(class(py, Kind::Storage)?, message)),
    };
    let out = PyDict::new(py);
    out.set_item("rows", c.rows())?;
    let dirs: Vec<_> = c.run_dirs.iter().map(|d| d.to_string_lossy()).collect();
    out.set_item("run_dirs", dirs)?;
    set_findings(&out, &c.damage, &c.skipped)?;
    for (key, dict) in [("runs", c.runs), ("tags", c.tags)] {
        let count = dict.len();
        let offsets = buffer(py, Data::I32(dict.offsets))?;
        let bytes = buffer(py, Data::Bytes(dict.bytes))?;
        out.set_item(key, (offsets, bytes, count))?;
    }
    let chunks = PyList::empty(py);
    for chunk in c.chunks {
        let columns = PyDict::new(py);
        columns.set_item("rows", chunk.rows())?;
        columns.set_item("run_codes", buffer(py, Data::I32(chunk.run_codes))?)?;
        columns.set_item("tag_codes", buffer(py, Data::I32(chunk.tag_codes))?)?;
        columns.set_item("step", buffer(py, Data::I64(chunk.step))?)?;
        columns.set_item("wall_time", buffer(py, Data::F64(chunk.wall_time))?)?;
        columns.set_item("value", buffer(py, Data::F64(chunk.value))?)?;
        chunks.append(columns)?;
    }
    out.set_item("chunks", chunks)?;
    Ok(out)
}

/// `damage` (one `(file, offset, kind, detail)` per finding: `truncated_tail`, `steps_back`,
/// `purged`) and `skipped` (one `(run directory, message)` per run not read) into `out`.
fn set_findings(
    out: &Bound<'_, PyDict>,
    damage: &[tally_tfevents::Damage],
    skipped: &[(PathBuf, String)],
) -> PyResult<()> {
    let damage: Vec<_> = damage
        .iter()
        .map(|d| {
            let file = d.path().map(|p| p.to_string_lossy().into_owned());
            (file, d.offset(), d.kind_name(), d.detail())
        })
        .collect();
    out.set_item("damage", damage)?;
    let skipped: Vec<_> = skipped
        .iter()
        .map(|(dir, why)| (dir.to_string_lossy().into_owned(), why.as_str()))
        .collect();
    out.set_item("skipped", skipped)
}

/// A reader's error as `StorageError`.
fn storage_error(py: Python<'_>, e: tally_read::Error) -> PyErr {
    match class(py, Kind::Storage) {
        Ok(cls) => PyErr::from_type(cls, e.to_string()),
        Err(e) => e,
    }
}

/// The runs table of `paths` (`tally_read::runs`) with the tags matching `tags` summarized:
/// a dict of `ipc` (the table as an Arrow IPC stream, columns typed as `tally_sql::tables`
/// types them), `damage` and `skipped` as [`read_columns`] gives them. Runs that cannot be read
/// are skipped.
#[pyfunction]
#[pyo3(signature = (paths, tags, strict=false))]
fn runs_table<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    tags: Vec<String>,
    strict: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = ReadOptions {
        strict,
        skip_unreadable: true,
        readable_part: false,
    };
    let t = py
        .detach(|| tally_read::runs::runs_table(&paths, &tags, opts))
        .map_err(|e| storage_error(py, e))?;
    let ipc = tally_sql::tables::runs_ipc_stream(&t.rows)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    let out = PyDict::new(py);
    out.set_item("ipc", pyo3::types::PyBytes::new(py, &ipc))?;
    set_findings(&out, &t.damage, &t.skipped)?;
    Ok(out)
}

/// A read-only SQL query over the runs of `paths` (`tally_sql`): a dict of `ipc` (the answer as
/// an Arrow IPC stream), `damage` and `skipped` as [`read_columns`] gives them. A query that
/// does not parse or plan raises `ValueError` with the engine's message.
#[pyfunction]
#[pyo3(signature = (paths, query, strict=false))]
fn sql_query<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    query: &str,
    strict: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let answered = py.detach(|| {
        let a = tally_sql::query(&paths, query, strict)?;
        let ipc = a.to_ipc_stream()?;
        Ok::<_, tally_sql::Error>((a, ipc))
    });
    let (answer, ipc) = match answered {
        Ok(a) => a,
        Err(tally_sql::Error::Read(e)) => return Err(storage_error(py, e)),
        Err(e) => return Err(pyo3::exceptions::PyValueError::new_err(e.to_string())),
    };
    let out = PyDict::new(py);
    out.set_item("ipc", pyo3::types::PyBytes::new(py, &ipc))?;
    set_findings(&out, &answer.damage, &answer.skipped)?;
    Ok(out)
}

/// Seed statistics (`tally_read::compare`): a dict of `groups` (a JSON array, best mean
/// first, each as `Group::to_json`), `unscored` (`(run, why)`), `absent` (what is said of each
/// `by` key no run has), `damage` and `skipped` as [`read_columns`] gives them.
#[pyfunction]
#[pyo3(signature = (paths, metric, by, at, reps, seed, curve_points))]
#[allow(clippy::too_many_arguments)]
fn compare_runs<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    metric: String,
    by: Vec<String>,
    at: &str,
    reps: usize,
    seed: u32,
    curve_points: usize,
) -> PyResult<Bound<'py, PyDict>> {
    use tally_read::compare::{absent_message, compare, Settings};
    let at = at.parse().map_err(|e: String| {
        pyo3::exceptions::PyValueError::new_err(format!("tally.compare: {e}"))
    })?;
    let settings = Settings {
        by,
        at,
        reps,
        seed,
        curve_points,
        ..Settings::new(metric)
    };
    let c = py
        .detach(|| compare(&paths, &settings))
        .map_err(|e| storage_error(py, e))?;
    let groups: Vec<serde_json::Value> = c.groups.iter().map(|g| g.to_json(&settings.by)).collect();
    let out = PyDict::new(py);
    out.set_item("groups", serde_json::Value::from(groups).to_string())?;
    out.set_item("unscored", c.unscored)?;
    let absent: Vec<String> = c.absent.iter().map(|k| absent_message(k)).collect();
    out.set_item("absent", absent)?;
    set_findings(&out, &c.damage, &c.skipped)?;
    Ok(out)
}

/// The run in `dir`'s configuration as dotted keys (`tally_read::config::run_configuration`:
/// `run_config.json` flattened, else the hparams plugin's values), a JSON array of
/// `[key, value]` pairs; `StorageError` naming the file when it cannot be read.
#[pyfunction]
fn flat_config(py: Python<'_>, dir: PathBuf) -> PyResult<String> {
    let pairs = py
        .detach(|| tally_read::config::run_configuration(&dir))
        .map_err(|e| storage_error(py, e))?;
    Ok(serde_json::Value::from(
        pairs
            .into_iter()
            .map(|(k, v)| serde_json::Value::from(vec![serde_json::Value::from(k), v]))
            .collect::<Vec<_>>(),
    )
    .to_string())
}

/// Adds `read_columns`, `runs_table`, `flat_config`, `compare_runs`, `sql_query` and
/// `ColumnBuffer` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ColumnBuffer>()?;
    m.add_function(wrap_pyfunction!(read_columns, m)?)?;
    m.add_function(wrap_pyfunction!(runs_table, m)?)?;
    m.add_function(wrap_pyfunction!(flat_config, m)?)?;
    m.add_function(wrap_pyfunction!(compare_runs, m)?)?;
    m.add_function(wrap_pyfunction!(sql_query, m)?)
}
