//! Trinity-style aggregation bindings: the `tally._tally.aggregate` submodule behind
//! `tally.metrics` (docs/aggregation.md).
//!
//! The dicts are read in one pass into numbered keys ([`numbered`], Trinity's value filter);
//! the numerics run without the GIL.

mod numbered;

use numbered::Numbered;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use tally_aggregate::{
    self as agg, AggType, BuiltinSum, Estimator, MetricMap, Reducer, TaskOptions,
};

// The option names below come from `tally.metrics` as `str` literals, which Python interns, so
// they are recognised by identity first: reading a `str` as text costs an encode under the
// stable ABI, a tenth of a small task's whole aggregation.

fn builtin_sum(mode: &Bound<'_, PyString>) -> PyResult<BuiltinSum> {
    let py = mode.py();
    if mode.is(intern!(py, "left_fold")) {
        return Ok(BuiltinSum::LeftFold);
    }
    if mode.is(intern!(py, "neumaier")) {
        return Ok(BuiltinSum::Neumaier);
    }
    match &*mode.to_cow()? {
        "left_fold" => Ok(BuiltinSum::LeftFold),
        "neumaier" => Ok(BuiltinSum::Neumaier),
        other => Err(PyValueError::new_err(format!(
            "builtin_sum must be 'left_fold' or 'neumaier', not {other:?}"
        ))),
    }
}

fn estimator(name: &Bound<'_, PyString>) -> PyResult<Estimator> {
    let py = name.py();
    if name.is(intern!(py, "bootstrap")) {
        return Ok(Estimator::Bootstrap);
    }
    if name.is(intern!(py, "exact")) {
        return Ok(Estimator::Exact);
    }
    match &*name.to_cow()? {
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

/// Inputs with fewer values than this are aggregated with the GIL held: releasing and taking
/// it back costs more than summing a task's few hundred values.
const DETACH_ABOVE: usize = 4096;

/// The run level into a dict; an output key with the text of an input key is, where that is
/// invisible or Trinity's own choice, that key's own `str` object.
fn run_level<'py>(
    py: Python<'py>,
    input: &Numbered<'py>,
    mode: BuiltinSum,
) -> PyResult<Bound<'py, PyDict>> {
    let (texts, entries) = (&input.texts(), &input.entries);
    let groups = if entries.len() > DETACH_ABOVE {
        py.detach(|| agg::run_level_keyed(texts, entries, mode))
    } else {
        agg::run_level_keyed(texts, entries, mode)
    };
    let d = PyDict::new(py);
    for (group, x) in groups {
        // An exact `str` with the output text is indistinguishable from a new one; a subclass
        // only where Trinity returns the input object itself (the mean key that opened the
        // group), so that output key types stay Trinity's.
        let reuse = group.same_text.filter(|&k| {
            input.key_object(k).is_exact_instance_of::<PyString>()
                || (k == group.first && group.agg == AggType::Mean)
        });
        match reuse {
            Some(k) => d.set_item(input.key_object(k), x)?,
            None => d.set_item(PyString::new(py, &group.key), x)?,
        }
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
    builtin_sum_mode: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyDict>> {
    let input = Numbered::of(metric_dicts)?;
    let mode = builtin_sum(builtin_sum_mode)?;
    let (texts, entries) = (&input.texts(), &input.entries);
    let map = py.detach(|| {
        let stats: Vec<&str> = stats.iter().map(String::as_str).collect();
        agg::step_level_keyed(texts, entries, prefix, Some(&stats), mode)
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
    builtin_sum_mode: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyDict>> {
    let input = Numbered::of(metric_dicts)?;
    let mode = builtin_sum(builtin_sum_mode)?;
    let (texts, entries) = (&input.texts(), &input.entries);
    let map = py.detach(|| {
        let stats: Vec<&str> = stats.iter().map(String::as_str).collect();
        let stats = detailed_stats.then_some(stats.as_slice());
        agg::step_level_keyed(texts, entries, prefix, stats, mode)
    });
    to_dict(py, map)
}

/// `aggregate_run_level_metrics` (experience → run).
#[pyfunction]
fn aggregate_run_level_metrics<'py>(
    py: Python<'py>,
    metric_dicts: &Bound<'py, PyAny>,
    builtin_sum_mode: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyDict>> {
    let input = Numbered::of(metric_dicts)?;
    run_level(py, &input, builtin_sum(builtin_sum_mode)?)
}

/// `calculate_task_level_metrics` (run → task) with the `estimator` option.
#[pyfunction]
fn calculate_task_level_metrics<'py>(
    py: Python<'py>,
    metrics: &Bound<'py, PyAny>,
    is_eval: bool,
    builtin_sum_mode: &Bound<'py, PyString>,
    estimator_name: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyDict>> {
    let input = Numbered::of(metrics)?;
    let options = TaskOptions {
        builtin_sum: builtin_sum(builtin_sum_mode)?,
        estimator: estimator(estimator_name)?,
    };
    if !is_eval {
        return run_level(py, &input, options.builtin_sum);
    }
    let (texts, entries) = (&input.texts(), &input.entries);
    let map = py.detach(|| agg::eval_task_level_keyed(texts, entries, options));
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
