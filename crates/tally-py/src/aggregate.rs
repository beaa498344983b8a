//! Trinity-style aggregation bindings: the `tally._tally.aggregate` submodule behind
//! `tally.metrics` (docs/aggregation.md).
//!
//! Conversion reproduces Trinity's value filter exactly: a value passes when it
//! is an instance of `int` or `float` (so bools and `np.float64` pass, `np.float32`, `str`,
//! `None` do not) and is then `float(value)` (a huge `int` raises `OverflowError`). Keys of
//! numeric values must be `str`. The numerics run without the GIL.

use crate::convert::AddrHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use tally_aggregate::{self as agg, BuiltinSum, Estimator, MetricMap, Reducer, TaskOptions, Value};

/// `float(value)` for a value that passed the `isinstance(value, (int, float))` filter.
fn to_float(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    if value.is_exact_instance_of::<PyFloat>() {
        return Ok(value.cast::<PyFloat>()?.value());
    }
    if value.is_exact_instance_of::<PyInt>() || value.is_exact_instance_of::<pyo3::types::PyBool>()
    {
        // PyFloat_AsDouble: exact rounding, OverflowError for |x| ≥ 2**1024.
        return value.extract::<f64>();
    }
    // Subclasses (np.float64, IntEnum, …): call `float()` itself, as Trinity does.
    value
        .py()
        .get_type::<PyFloat>()
        .call1((value,))?
        .cast::<PyFloat>()
        .map(|f| f.value())
        .map_err(|e| PyTypeError::new_err(e.to_string()))
}

/// The converted input: each distinct key string once, and the dicts as (key index, value).
///
/// Keys are interned by the identity of the Python string (the same key object recurs in
/// every run dict), so each is encoded to UTF-8 once per call. `alive` holds a reference to
/// every dict (and to every key that came from a non-dict `.items()`), so that no interned
/// address can be freed and reused by another string during the call.
#[derive(Default)]
struct Converted<'py> {
    keys: Vec<String>,
    alive: Vec<Bound<'py, PyAny>>,
    index: HashMap<usize, usize, BuildHasherDefault<AddrHasher>>,
    dicts: Vec<Vec<(usize, Value)>>,
}

impl<'py> Converted<'py> {
    fn push_entry(
        &mut self,
        dict: &mut Vec<(usize, Value)>,
        key: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        if !(value.is_instance_of::<PyFloat>() || value.is_instance_of::<PyInt>()) {
            return Ok(());
        }
        let x = to_float(value)?;
        let addr = key.as_ptr() as usize;
        let idx = match self.index.get(&addr) {
            Some(&i) => i,
            None => {
                let Ok(s) = key.cast::<PyString>() else {
                    // What `":" in key` raises in `parse_metric_key` for a non-str key.
                    let ty = key.get_type().name()?;
                    return Err(PyTypeError::new_err(format!(
                        "argument of type '{ty}' is not iterable"
                    )));
                };
                self.keys.push(s.to_cow()?.into_owned());
                self.index.insert(addr, self.keys.len() - 1);
                self.keys.len() - 1
            }
        };
        dict.push((idx, Value::Number(x)));
        Ok(())
    }

    /// The dicts with borrowed key strings, as `tally_aggregate` takes them.
    fn dicts(&self) -> Vec<Vec<(&str, Value)>> {
        self.dicts
            .iter()
            .map(|d| {
                d.iter()
                    .map(|(i, v)| (self.keys[*i].as_str(), v.clone()))
                    .collect()
            })
            .collect()
    }
}

/// `for metric_dict in metric_dicts: for key, value in metric_dict.items(): …`
fn convert<'py>(metric_dicts: &Bound<'py, PyAny>) -> PyResult<Converted<'py>> {
    let mut out = Converted::default();
    for d in metric_dicts.try_iter()? {
        let d = d?;
        let mut dict = Vec::new();
        if let Ok(exact) = d.cast_exact::<PyDict>() {
            for (k, v) in exact.iter() {
                out.push_entry(&mut dict, &k, &v)?;
            }
        } else {
            for item in d.call_method0("items")?.try_iter()? {
                let item = item?;
                let (k, v): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item.extract()?;
                out.push_entry(&mut dict, &k, &v)?;
                out.alive.push(k);
            }
        }
        out.alive.push(d);
        out.dicts.push(dict);
    }
    Ok(out)
}

fn builtin_sum(mode: &str) -> PyResult<BuiltinSum> {
    match mode {
        "left_fold" => Ok(BuiltinSum::LeftFold),
        "neumaier" => Ok(BuiltinSum::Neumaier),
        other => Err(PyValueError::new_err(format!(
            "builtin_sum must be 'left_fold' or 'neumaier', not {other:?}"
        ))),
    }
}

fn estimator(name: &str) -> PyResult<Estimator> {
    match name {
        "bootstrap" => Ok(Estimator::Bootstrap),
        "exact" => Ok(Estimator::Exact),
        other => Err(PyValueError::new_err(format!(
            "estimator must be 'bootstrap' or 'exact', not {other:?}"
        ))),
    }
}

fn to_dict<'py>(py: Python<'py>, map: MetricMap) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in map {
        d.set_item(k, v)?;
    }
    Ok(d)
}

/// `aggregate_metrics` (task → step, train); `stats` is the resolved `default_output_stats`.
#[pyfunction]
fn aggregate_metrics<'py>(
    py: Python<'py>,
    metric_dicts: &Bound<'py, PyAny>,
    prefix: &str,
    stats: Vec<String>,
    builtin_sum_mode: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let converted = convert(metric_dicts)?;
    let dicts = converted.dicts();
    let mode = builtin_sum(builtin_sum_mode)?;
    let map = py.detach(|| {
        let stats: Vec<&str> = stats.iter().map(String::as_str).collect();
        agg::aggregate_metrics(&dicts, prefix, Some(&stats), mode)
    });
    to_dict(py, map)
}

/// `aggregate_eval_metrics` (task → step, eval); `stats` is the resolved `output_stats`.
#[pyfunction]
fn aggregate_eval_metrics<'py>(
    py: Python<'py>,
    metric_dicts: &Bound<'py, PyAny>,
    prefix: &str,
    stats: Vec<String>,
    detailed_stats: bool,
    builtin_sum_mode: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let converted = convert(metric_dicts)?;
    let dicts = converted.dicts();
    let mode = builtin_sum(builtin_sum_mode)?;
    let map = py.detach(|| {
        let stats: Vec<&str> = stats.iter().map(String::as_str).collect();
        agg::aggregate_eval_metrics(&dicts, prefix, Some(&stats), detailed_stats, mode)
    });
    to_dict(py, map)
}

/// `aggregate_run_level_metrics` (experience → run).
#[pyfunction]
fn aggregate_run_level_metrics<'py>(
    py: Python<'py>,
    metric_dicts: &Bound<'py, PyAny>,
    builtin_sum_mode: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let converted = convert(metric_dicts)?;
    let dicts = converted.dicts();
    let mode = builtin_sum(builtin_sum_mode)?;
    let map = py.detach(|| agg::aggregate_run_level_metrics(&dicts, mode));
    to_dict(py, map)
}

/// `calculate_task_level_metrics` (run → task) with the `estimator` option.
#[pyfunction]
fn calculate_task_level_metrics<'py>(
    py: Python<'py>,
    metrics: &Bound<'py, PyAny>,
    is_eval: bool,
    builtin_sum_mode: &str,
    estimator_name: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let converted = convert(metrics)?;
    let dicts = converted.dicts();
    let options = TaskOptions {
        builtin_sum: builtin_sum(builtin_sum_mode)?,
        estimator: estimator(estimator_name)?,
    };
    let map = py.detach(|| agg::calculate_task_level_metrics(&dicts, is_eval, options));
    to_dict(py, map)
}

/// The bootstrap fast path: float `data`, reducers named `"max"`/`"min"`, validated ints.
#[pyfunction]
fn bootstrap_metric<'py>(
    py: Python<'py>,
    data: Vec<f64>,
    subset_size: usize,
    reducers: Vec<String>,
    n_bootstrap: usize,
    seed: u32,
) -> PyResult<Bound<'py, PyList>> {
    let reducers = reducers
        .iter()
        .map(|r| match r.as_str() {
            "max" => Ok(Reducer::Max),
            "min" => Ok(Reducer::Min),
            other => Err(PyValueError::new_err(format!("unknown reducer {other:?}"))),
        })
        .collect::<PyResult<Vec<_>>>()?;
    let out = py
        .detach(|| agg::bootstrap_metric(&data, subset_size, &reducers, n_bootstrap, seed))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let items = out
        .into_iter()
        .map(|(m, s)| PyTuple::new(py, [m, s]))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// `(E[max], E[min])` of `k` draws with replacement from `data` (the exact estimator).
#[pyfunction]
fn expected_max_min(py: Python<'_>, data: Vec<f64>, k: usize) -> (f64, f64) {
    py.detach(|| agg::exact::expected_max_min(&data, k))
}

/// `seconds * 1000 / tokens`; `ZeroDivisionError` for zero tokens.
#[pyfunction]
fn per_token_ms(seconds: f64, tokens: u64) -> PyResult<f64> {
    agg::per_token_ms(seconds, tokens).ok_or_else(|| {
        pyo3::exceptions::PyZeroDivisionError::new_err("per_token_ms: tokens must be positive")
    })
}

/// Add the `aggregate` submodule (used by `python/tally/metrics.py`) to `tally._tally`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let sub = PyModule::new(m.py(), "aggregate")?;
    sub.add_function(wrap_pyfunction!(aggregate_metrics, &sub)?)?;
    sub.add_function(wrap_pyfunction!(aggregate_eval_metrics, &sub)?)?;
    sub.add_function(wrap_pyfunction!(aggregate_run_level_metrics, &sub)?)?;
    sub.add_function(wrap_pyfunction!(calculate_task_level_metrics, &sub)?)?;
    sub.add_function(wrap_pyfunction!(bootstrap_metric, &sub)?)?;
    sub.add_function(wrap_pyfunction!(expected_max_min, &sub)?)?;
    sub.add_function(wrap_pyfunction!(per_token_ms, &sub)?)?;
    m.add_submodule(&sub)
}
