//! Text, PR-curve, custom-scalars and plain tensor summaries: tensors tagged with the plugin
//! that reads them.
//!
//! Tags, plugin names and tensor layouts are the ones TensorBoard's text, pr_curves and
//! custom_scalars plugins read (and torch/tensorboardX write).

use crate::histogram::{bucket_counts, uniform_edges};
use crate::proto::{
    summary, summary_metadata, tensor_shape_proto, DataType, SummaryMetadata, TensorProto,
    TensorShapeProto, SCALARS_PLUGIN_NAME,
};
use prost::Message;

/// The text plugin's name; text tags get [`TEXT_TAG_SUFFIX`] appended.
pub const TEXT_PLUGIN_NAME: &str = "text";
/// Suffix torch and tensorboardX append to a text summary's tag.
pub const TEXT_TAG_SUFFIX: &str = "/text_summary";
/// The PR-curve plugin's name.
pub const PR_CURVES_PLUGIN_NAME: &str = "pr_curves";
/// Most thresholds a PR curve may have (more breaks TensorBoard's reader).
pub const MAX_PR_THRESHOLDS: u32 = 127;
/// The plugin name torch's `add_tensor` tags a tensor with.
pub const TENSOR_PLUGIN_NAME: &str = "tensor";
/// The custom-scalars plugin's name.
pub const CUSTOM_SCALARS_PLUGIN_NAME: &str = "custom_scalars";
/// The one tag the custom-scalars plugin reads its layout from.
pub const CUSTOM_SCALARS_TAG: &str = "custom_scalars__config__";

fn shape(dims: &[i64]) -> TensorShapeProto {
    TensorShapeProto {
        dim: dims
            .iter()
            .map(|&size| tensor_shape_proto::Dim {
                size,
                name: String::new(),
            })
            .collect(),
        unknown_rank: false,
    }
}

fn plugin_value(
    tag: String,
    plugin: &str,
    content: Vec<u8>,
    tensor: TensorProto,
) -> summary::Value {
    summary::Value {
        tag,
        metadata: Some(SummaryMetadata {
            plugin_data: Some(summary_metadata::PluginData {
                plugin_name: plugin.to_string(),
                content,
            }),
            ..Default::default()
        }),
        value: Some(summary::value::Value::Tensor(Box::new(tensor))),
        ..Default::default()
    }
}

/// A scalar as torch's `add_scalar(new_style=True)` writes it: a one-element tensor of the
/// scalars plugin, `DT_DOUBLE` when `double` (the value kept whole: docs/contract/remote-sinks.md
/// "Values are float32"), else `DT_FLOAT`.
pub fn scalar_tensor_value(tag: &str, value: f64, double: bool) -> summary::Value {
    let tensor = if double {
        TensorProto {
            dtype: DataType::DtDouble as i32,
            double_val: vec![value],
            ..Default::default()
        }
    } else {
        TensorProto {
            dtype: DataType::DtFloat as i32,
            float_val: vec![value as f32],
            ..Default::default()
        }
    };
    plugin_value(tag.to_owned(), SCALARS_PLUGIN_NAME, Vec::new(), tensor)
}

/// A text summary: tag `<tag>/text_summary`, a one-element string tensor (markdown).
pub fn text_value(tag: &str, text: &str) -> summary::Value {
    let tensor = TensorProto {
        dtype: DataType::DtString as i32,
        tensor_shape: Some(shape(&[1])),
        string_val: vec![text.as_bytes().to_vec()],
        ..Default::default()
    };
    // TextPluginData { version: 0 } encodes to no bytes.
    plugin_value(
        format!("{tag}{TEXT_TAG_SUFFIX}"),
        TEXT_PLUGIN_NAME,
        Vec::new(),
        tensor,
    )
}

/// The element types a plain tensor summary takes, by numpy's name for them.
pub const TENSOR_DTYPES: [(&str, DataType, usize); 9] = [
    ("float16", DataType::DtHalf, 2),
    ("float32", DataType::DtFloat, 4),
    ("float64", DataType::DtDouble, 8),
    ("int8", DataType::DtInt8, 1),
    ("uint8", DataType::DtUint8, 1),
    ("int16", DataType::DtInt16, 2),
    ("int32", DataType::DtInt32, 4),
    ("int64", DataType::DtInt64, 8),
    ("bool", DataType::DtBool, 1),
];

/// A tensor as torch's `add_tensor` writes it (plugin `tensor`): `content` holds the elements
/// little-endian in row-major order, `dtype` names their type ([`TENSOR_DTYPES`]). `None` for
/// a type it does not take or content of the wrong length.
pub fn tensor_value(
    tag: &str,
    dtype: &str,
    dims: &[i64],
    content: Vec<u8>,
) -> Option<summary::Value> {
    let &(_, dt, width) = TENSOR_DTYPES.iter().find(|(name, ..)| *name == dtype)?;
    let elements = dims
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))?;
    if elements.checked_mul(width)? != content.len() {
        return None;
    }
    let tensor = TensorProto {
        dtype: dt as i32,
        tensor_shape: Some(shape(dims)),
        tensor_content: content,
        ..Default::default()
    };
    Some(plugin_value(
        tag.to_owned(),
        TENSOR_PLUGIN_NAME,
        Vec::new(),
        tensor,
    ))
}

/// `PrCurvePluginData` (tensorboard/plugins/pr_curve/plugin_data.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PrCurvePluginData {
    /// Format version (0).
    #[prost(int32, tag = "1")]
    pub version: i32,
    /// Number of thresholds (columns of the data tensor).
    #[prost(uint32, tag = "2")]
    pub num_thresholds: u32,
}

/// Why a PR curve cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PrCurveError {
    /// Inputs of different lengths.
    #[error("{what} has {got} elements but predictions has {expected}")]
    Length {
        /// `labels` or `weights`.
        what: &'static str,
        /// Its length.
        got: usize,
        /// The length of `predictions`.
        expected: usize,
    },
    /// Fewer than 2 thresholds.
    #[error("num_thresholds must be at least 2, got {0}")]
    Thresholds(u32),
}

/// The 6 × `num_thresholds` rows TP, FP, TN, FN, precision, recall, bucketed as TensorBoard's
/// `pr_curve` summary does (prediction `p` falls in bucket `floor(p * (num_thresholds - 1))`).
pub fn compute_pr_curve(
    labels: &[f64],
    predictions: &[f64],
    weights: Option<&[f64]>,
    num_thresholds: u32,
) -> Result<Vec<[f64; 6]>, PrCurveError> {
    let n = predictions.len();
    if labels.len() != n {
        return Err(PrCurveError::Length {
            what: "labels",
            got: labels.len(),
            expected: n,
        });
    }
    if let Some(w) = weights.filter(|w| w.len() != n) {
        return Err(PrCurveError::Length {
            what: "weights",
            got: w.len(),
            expected: n,
        });
    }
    if num_thresholds < 2 {
        return Err(PrCurveError::Thresholds(num_thresholds));
    }
    let t = num_thresholds as usize;
    let top = f64::from(num_thresholds - 1);
    // Bucket indices are integers, counted in `t` equal-width buckets over [0, t - 1].
    let index: Vec<f64> = predictions
        .iter()
        .map(|p| f64::from((p * top).floor() as i32))
        .collect();
    let edges = uniform_edges(0.0, top, t);
    let w = |i: usize| weights.map_or(1.0, |w| w[i]);
    let tp_b = bucket_counts(&index, &edges, |i| labels[i] * w(i));
    let fp_b = bucket_counts(&index, &edges, |i| (1.0 - labels[i]) * w(i));
    let rev_cumsum = |b: &[f64]| {
        let mut out = vec![0.0; b.len()];
        let mut acc = 0.0;
        for i in (0..b.len()).rev() {
            acc += b[i];
            out[i] = acc;
        }
        out
    };
    let (tp, fp) = (rev_cumsum(&tp_b), rev_cumsum(&fp_b));
    const MINIMUM_COUNT: f64 = 1e-7;
    Ok((0..t)
        .map(|i| {
            let (tn, fn_) = (fp[0] - fp[i], tp[0] - tp[i]);
            let precision = tp[i] / MINIMUM_COUNT.max(tp[i] + fp[i]);
            let recall = tp[i] / MINIMUM_COUNT.max(tp[i] + fn_);
            [tp[i], fp[i], tn, fn_, precision, recall]
        })
        .collect())
}

/// A PR-curve summary: a 6 × `num_thresholds` float tensor, one column per threshold.
pub fn pr_curve_value(tag: &str, curve: &[[f64; 6]]) -> summary::Value {
    let t = curve.len();
    let float_val = (0..6)
        .flat_map(|row| curve.iter().map(move |c| c[row] as f32))
        .collect();
    let tensor = TensorProto {
        dtype: DataType::DtFloat as i32,
        tensor_shape: Some(shape(&[6, t as i64])),
        float_val,
        ..Default::default()
    };
    let content = PrCurvePluginData {
        version: 0,
        num_thresholds: t as u32,
    }
    .encode_to_vec();
    plugin_value(tag.to_string(), PR_CURVES_PLUGIN_NAME, content, tensor)
}

/// `tensorboard.Layout` (tensorboard/plugins/custom_scalar/layout.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Layout {
    /// Format version (0).
    #[prost(int32, tag = "1")]
    pub version: i32,
    /// Collapsible sections of charts.
    #[prost(message, repeated, tag = "2")]
    pub category: Vec<Category>,
}

/// One section of the custom-scalars dashboard.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Category {
    /// Section title.
    #[prost(string, tag = "1")]
    pub title: String,
    /// Charts of the section.
    #[prost(message, repeated, tag = "2")]
    pub chart: Vec<Chart>,
    /// Whether the section starts collapsed.
    #[prost(bool, tag = "3")]
    pub closed: bool,
}

/// One chart: several tags on one plot, or a value with its lower and upper margin.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Chart {
    /// Chart title.
    #[prost(string, tag = "1")]
    pub title: String,
    /// Multiline tags (regular expressions) when not empty.
    #[prost(message, optional, tag = "2")]
    pub multiline: Option<MultilineChartContent>,
    /// Margin series when not empty.
    #[prost(message, optional, tag = "3")]
    pub margin: Option<MarginChartContent>,
}

/// Tags (regular expressions) drawn on one chart.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MultilineChartContent {
    /// The tags.
    #[prost(string, repeated, tag = "1")]
    pub tag: Vec<String>,
}

/// Series drawn with a shaded margin.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MarginChartContent {
    /// The series.
    #[prost(message, repeated, tag = "1")]
    pub series: Vec<MarginSeries>,
}

/// A value tag with the tags of its lower and upper bounds.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MarginSeries {
    /// Tag of the value.
    #[prost(string, tag = "1")]
    pub value: String,
    /// Tag of the lower bound.
    #[prost(string, tag = "2")]
    pub lower: String,
    /// Tag of the upper bound.
    #[prost(string, tag = "3")]
    pub upper: String,
}

/// The custom-scalars layout summary (tag `custom_scalars__config__`).
pub fn custom_scalars_value(layout: &Layout) -> summary::Value {
    let tensor = TensorProto {
        dtype: DataType::DtString as i32,
        tensor_shape: Some(shape(&[])),
        string_val: vec![layout.encode_to_vec()],
        ..Default::default()
    };
    plugin_value(
        CUSTOM_SCALARS_TAG.to_string(),
        CUSTOM_SCALARS_PLUGIN_NAME,
        Vec::new(),
        tensor,
    )
}

/// The text plugin's string tensor: one string as it is, a vector one per line, a matrix as
/// Markdown table rows (TensorBoard draws the last two as tables).
pub fn tensor_text(t: &TensorProto) -> String {
    let strings: Vec<String> = t
        .string_val
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect();
    let dims: Vec<i64> = t
        .tensor_shape
        .as_ref()
        .map_or(Vec::new(), |s| s.dim.iter().map(|d| d.size).collect());
    match dims.as_slice() {
        [_, cols] if *cols > 0 => strings
            .chunks(*cols as usize)
            .map(|row| format!("| {} |", row.join(" | ")))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => strings.join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pr_curve_counts_at_each_threshold() {
        // Thresholds 0, 0.5, 1: a positive at 0.9 and a negative at 0.2.
        let c = compute_pr_curve(&[1.0, 0.0], &[0.9, 0.2], None, 3).unwrap();
        assert_eq!(c[0][..4], [1.0, 1.0, 0.0, 0.0]);
        assert_eq!(c[1][..4], [1.0, 0.0, 1.0, 0.0]);
        assert_eq!(c[2][..4], [0.0, 0.0, 1.0, 1.0]);
        assert_eq!(c[1][4..], [1.0, 1.0]);
    }
}
