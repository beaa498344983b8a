//! `tally._tally.summaries`: builds serialized `Summary` protos for `tally.SummaryWriter`.
//!
//! Python reduces each input to plain bytes and a shape (numpy does the layout, as torch's
//! writer does); bucketing and PNG, GIF and WAV encoding run here with the GIL released.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyString};
use std::collections::HashMap;
use tally_tfevents::hparams::proto_value::Kind;
use tally_tfevents::plugin_summaries::{
    Category, Chart, Layout, MarginChartContent, MarginSeries, MultilineChartContent,
};
use tally_tfevents::proto::{summary, HistogramProto};
use tally_tfevents::{self as tfe, encode_summary, Bins, HParam};

fn bad(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Little-endian f64 buffer (`ndarray.astype('<f8').tobytes()`) as values.
fn f64s(what: &str, data: &[u8]) -> PyResult<Vec<f64>> {
    if !data.len().is_multiple_of(8) {
        return Err(bad(format!(
            "{what}: {} bytes is not a float64 buffer",
            data.len()
        )));
    }
    Ok(data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8-byte chunk")))
        .collect())
}

fn summary_bytes(py: Python<'_>, values: Vec<summary::Value>) -> Py<PyBytes> {
    PyBytes::new(py, &encode_summary(values)).unbind()
}

/// Histogram of float64 `values`: `bins` equal-width buckets, explicit `edges`, or (neither)
/// TensorFlow's default exponential buckets.
#[pyfunction]
#[pyo3(signature = (tag, values, bins=None, edges=None, max_bins=None))]
fn histogram(
    py: Python<'_>,
    tag: &str,
    values: &[u8],
    bins: Option<usize>,
    edges: Option<Vec<f64>>,
    max_bins: Option<usize>,
) -> PyResult<Py<PyBytes>> {
    let values = f64s("values", values)?;
    let bins = match (bins, edges) {
        (Some(n), _) => Bins::Count(n),
        (None, Some(e)) => Bins::Edges(e),
        (None, None) => Bins::Edges(tfe::default_edges()),
    };
    let h = py
        .detach(|| tfe::histogram(&values, &bins, max_bins))
        .map_err(bad)?;
    Ok(summary_bytes(py, vec![tfe::histogram_value(tag, &h)]))
}

/// A histogram from precomputed buckets (torch's `add_histogram_raw`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn histogram_raw(
    py: Python<'_>,
    tag: &str,
    min: f64,
    max: f64,
    num: f64,
    sum: f64,
    sum_squares: f64,
    bucket_limits: Vec<f64>,
    bucket_counts: Vec<f64>,
) -> Py<PyBytes> {
    let h = HistogramProto {
        min,
        max,
        num,
        sum,
        sum_squares,
        bucket_limit: bucket_limits,
        bucket: bucket_counts,
    };
    summary_bytes(py, vec![tfe::histogram_value(tag, &h)])
}

/// PNG image from 8-bit height × width × channels pixels.
#[pyfunction]
fn image(
    py: Python<'_>,
    tag: &str,
    pixels: &[u8],
    height: usize,
    width: usize,
    channels: usize,
) -> PyResult<Py<PyBytes>> {
    let v = py
        .detach(|| tfe::image_value(tag, pixels, height, width, channels))
        .map_err(bad)?;
    Ok(summary_bytes(py, vec![v]))
}

/// PNG image from 8-bit pixels of `shape` (height, width, channels 3 or 4) with `boxes`
/// (`[xmin, ymin, xmax, ymax]` each) and optional `labels` drawn on it.
#[pyfunction]
#[pyo3(signature = (tag, pixels, shape, boxes, labels=None))]
fn image_with_boxes(
    py: Python<'_>,
    tag: &str,
    pixels: &[u8],
    shape: (usize, usize, usize),
    boxes: Vec<tfe::Box4>,
    labels: Option<Vec<String>>,
) -> PyResult<Py<PyBytes>> {
    let v = py
        .detach(|| {
            tfe::image_with_boxes_value(tag, pixels.to_vec(), shape, &boxes, labels.as_deref())
        })
        .map_err(bad)?;
    Ok(summary_bytes(py, vec![v]))
}

/// Animated GIF from 8-bit frames × height × width × channels pixels.
#[pyfunction]
fn video(
    py: Python<'_>,
    tag: &str,
    frames: &[u8],
    shape: (usize, usize, usize, usize),
    fps: f64,
) -> PyResult<Py<PyBytes>> {
    let shape = [shape.0, shape.1, shape.2, shape.3];
    let v = py
        .detach(|| tfe::video_value(tag, frames, shape, fps))
        .map_err(bad)?;
    Ok(summary_bytes(py, vec![v]))
}

/// 16-bit WAV from interleaved float64 samples.
#[pyfunction]
fn audio(
    py: Python<'_>,
    tag: &str,
    samples: &[u8],
    channels: usize,
    sample_rate: f64,
) -> PyResult<Py<PyBytes>> {
    let samples = f64s("snd_tensor", samples)?;
    let v = py
        .detach(|| tfe::audio_value(tag, &samples, channels, sample_rate))
        .map_err(bad)?;
    Ok(summary_bytes(py, vec![v]))
}

/// A scalar as torch's `add_scalar(new_style=True[, double_precision=True])` writes it.
#[pyfunction]
fn scalar_tensor(py: Python<'_>, tag: &str, value: f64, double: bool) -> Py<PyBytes> {
    summary_bytes(py, vec![tfe::scalar_tensor_value(tag, value, double)])
}

/// Text (markdown) summary.
#[pyfunction]
fn text(py: Python<'_>, tag: &str, text: &str) -> Py<PyBytes> {
    summary_bytes(py, vec![tfe::text_value(tag, text)])
}

/// A tensor as torch's `add_tensor` writes it: `dtype` numpy's name of the element type,
/// `shape` its dimensions, `content` its elements little-endian in row-major order.
#[pyfunction]
fn tensor(
    py: Python<'_>,
    tag: &str,
    dtype: &str,
    shape: Vec<i64>,
    content: Vec<u8>,
) -> PyResult<Py<PyBytes>> {
    let value = tfe::tensor_value(tag, dtype, &shape, content).ok_or_else(|| {
        let known: Vec<_> = tfe::TENSOR_DTYPES.iter().map(|(n, ..)| *n).collect();
        PyValueError::new_err(format!(
            "add_tensor('{tag}'): a tensor of {dtype} elements and shape {shape:?} has no \
             TensorBoard form here (element types: {})",
            known.join(", ")
        ))
    })?;
    Ok(summary_bytes(py, vec![value]))
}

/// PR curve from float64 labels, predictions and optional weights.
#[pyfunction]
#[pyo3(signature = (tag, labels, predictions, num_thresholds, weights=None))]
fn pr_curve(
    py: Python<'_>,
    tag: &str,
    labels: &[u8],
    predictions: &[u8],
    num_thresholds: u32,
    weights: Option<&[u8]>,
) -> PyResult<Py<PyBytes>> {
    let labels = f64s("labels", labels)?;
    let predictions = f64s("predictions", predictions)?;
    let weights = weights.map(|w| f64s("weights", w)).transpose()?;
    let t = num_thresholds.min(tfe::MAX_PR_THRESHOLDS);
    let curve = py
        .detach(|| tfe::compute_pr_curve(&labels, &predictions, weights.as_deref(), t))
        .map_err(bad)?;
    Ok(summary_bytes(py, vec![tfe::pr_curve_value(tag, &curve)]))
}

/// One chart of a custom-scalars layout: title, whether it is a margin chart, its tags.
type ChartSpec = (String, bool, Vec<String>);

/// PR curve from precomputed rows: float64 6 × `num_thresholds` (TP, FP, TN, FN, precision, recall).
#[pyfunction]
fn pr_curve_raw(py: Python<'_>, tag: &str, rows: &[u8]) -> PyResult<Py<PyBytes>> {
    let rows = f64s("pr curve", rows)?;
    let t = rows.len() / 6;
    if t == 0 || rows.len() % 6 != 0 {
        return Err(bad(format!(
            "pr curve: {} values are not 6 rows of thresholds",
            rows.len()
        )));
    }
    let curve: Vec<[f64; 6]> = (0..t)
        .map(|i| std::array::from_fn(|r| rows[r * t + i]))
        .collect();
    Ok(summary_bytes(py, vec![tfe::pr_curve_value(tag, &curve)]))
}

/// Custom-scalars layout: `[(category, [(chart, is_margin, tags)])]`.
#[pyfunction]
fn custom_scalars(py: Python<'_>, layout: Vec<(String, Vec<ChartSpec>)>) -> PyResult<Py<PyBytes>> {
    let mut category = Vec::new();
    for (title, charts) in layout {
        let mut chart = Vec::new();
        for (chart_title, margin, tags) in charts {
            let mut c = Chart {
                title: chart_title,
                ..Default::default()
            };
            if margin {
                let [value, lower, upper]: [String; 3] = tags.try_into().map_err(|t: Vec<_>| {
                    bad(format!(
                        "layout[{title:?}][{:?}]: a Margin chart takes 3 tags (value, lower, upper), got {}",
                        c.title,
                        t.len()
                    ))
                })?;
                c.margin = Some(MarginChartContent {
                    series: vec![MarginSeries {
                        value,
                        lower,
                        upper,
                    }],
                });
            } else {
                c.multiline = Some(MultilineChartContent { tag: tags });
            }
            chart.push(c);
        }
        category.push(Category {
            title,
            chart,
            closed: false,
        });
    }
    let layout = Layout {
        version: 0,
        category,
    };
    Ok(summary_bytes(py, vec![tfe::custom_scalars_value(&layout)]))
}

fn kind(name: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<Kind>> {
    if v.is_none() {
        Ok(None)
    } else if v.is_instance_of::<PyBool>() {
        Ok(Some(Kind::Bool(v.extract()?)))
    } else if v.is_instance_of::<PyFloat>() {
        Ok(Some(Kind::Number(v.extract()?)))
    } else if v.is_instance_of::<PyString>() {
        Ok(Some(Kind::Text(v.extract()?)))
    } else {
        Err(bad(format!(
            "hparam_dict[{name:?}]: expected bool, float, str or None, got {}",
            v.get_type().name()?
        )))
    }
}

/// The experiment, session-start and session-end summaries of one hparams session.
/// Values are bool, float, str or None (a type TensorBoard cannot show).
#[pyfunction]
fn hparams(
    py: Python<'_>,
    hparams: Vec<(String, Bound<'_, PyAny>)>,
    domains: HashMap<String, Vec<Bound<'_, PyAny>>>,
    metrics: Vec<String>,
) -> PyResult<(Py<PyBytes>, Py<PyBytes>, Py<PyBytes>)> {
    let mut list = Vec::with_capacity(hparams.len());
    for (name, v) in &hparams {
        let domain = match domains.get(name) {
            Some(d) => Some(
                d.iter()
                    .map(|x| {
                        kind(name, x)?.ok_or_else(|| {
                            bad(format!("hparam_domain_discrete[{name:?}] holds None"))
                        })
                    })
                    .collect::<PyResult<Vec<_>>>()?,
            ),
            None => None,
        };
        list.push(HParam {
            name: name.clone(),
            value: kind(name, v)?,
            domain,
        });
    }
    let [e, s, x] = tfe::hparams_values(&list, &metrics);
    Ok((
        summary_bytes(py, vec![e]),
        summary_bytes(py, vec![s]),
        summary_bytes(py, vec![x]),
    ))
}

/// Adds the `summaries` submodule.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let sub = PyModule::new(m.py(), "summaries")?;
    sub.add_function(wrap_pyfunction!(histogram, &sub)?)?;
    sub.add_function(wrap_pyfunction!(histogram_raw, &sub)?)?;
    sub.add_function(wrap_pyfunction!(image, &sub)?)?;
    sub.add_function(wrap_pyfunction!(image_with_boxes, &sub)?)?;
    sub.add_function(wrap_pyfunction!(video, &sub)?)?;
    sub.add_function(wrap_pyfunction!(audio, &sub)?)?;
    sub.add_function(wrap_pyfunction!(text, &sub)?)?;
    sub.add_function(wrap_pyfunction!(scalar_tensor, &sub)?)?;
    sub.add_function(wrap_pyfunction!(tensor, &sub)?)?;
    sub.add_function(wrap_pyfunction!(pr_curve, &sub)?)?;
    sub.add_function(wrap_pyfunction!(pr_curve_raw, &sub)?)?;
    sub.add_function(wrap_pyfunction!(custom_scalars, &sub)?)?;
    sub.add_function(wrap_pyfunction!(hparams, &sub)?)?;
    m.add_submodule(&sub)
}
