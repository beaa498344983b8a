//! Histogram summaries bucketed as TensorBoard's Python writers (torch, tensorboardX) bucket them.
//!
//! Counting follows `numpy.histogram` (bucket `i` is `[edge_i, edge_i+1)`, the last one closed,
//! values outside the edges dropped), then the buckets are trimmed to the populated range
//! with one empty bucket on the left, because TensorBoard stores only right edges.

use crate::proto::{summary, HistogramProto};

/// Why a histogram cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HistogramError {
    /// No values at all.
    #[error("values is empty: a histogram needs at least one value")]
    Empty,
    /// Bucket edges that are too few or not increasing.
    #[error("bins: bucket edges must be at least 2 and increasing")]
    BadEdges,
    /// A bucket count of zero.
    #[error("bins: the number of buckets must be positive")]
    ZeroBins,
    /// Automatic range over NaN or infinite values.
    #[error(
        "values: the range [{min}, {max}] is not finite, so equal-width buckets cannot be placed"
    )]
    NonFiniteRange {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
    /// Every value fell outside the edges.
    #[error("values: no value falls inside the bucket edges")]
    NoneInRange,
}

/// How the buckets are chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum Bins {
    /// This many equal-width buckets between the smallest and largest value.
    Count(usize),
    /// Explicit increasing edges (`n + 1` edges for `n` buckets).
    Edges(Vec<f64>),
}

/// TensorFlow's default edges: ±1e-12 growing by 10% up to 1e20, and 0.
pub fn default_edges() -> Vec<f64> {
    let mut pos = Vec::new();
    let mut v = 1e-12_f64;
    while v < 1e20 {
        pos.push(v);
        v *= 1.1;
    }
    let mut edges: Vec<f64> = pos.iter().rev().map(|v| -v).collect();
    edges.push(0.0);
    edges.extend(pos);
    edges
}

/// `n` equal-width buckets over `[lo, hi]`, computed as `numpy.linspace` does.
pub fn uniform_edges(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let (lo, hi) = if lo == hi {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    };
    let step = (hi - lo) / n as f64;
    let mut edges: Vec<f64> = (0..=n).map(|i| i as f64 * step + lo).collect();
    edges[n] = hi;
    edges
}

/// Adds `weight(i)` of each value inside `edges` to its bucket (`numpy.histogram` semantics).
pub fn bucket_counts(values: &[f64], edges: &[f64], weight: impl Fn(usize) -> f64) -> Vec<f64> {
    let n = edges.len() - 1;
    let mut counts = vec![0.0; n];
    let (first, last) = (edges[0], edges[n]);
    for (i, &x) in values.iter().enumerate() {
        // NaN fails both comparisons and is dropped, as numpy drops it.
        if !(x >= first && x <= last) {
            continue;
        }
        let b = if x == last {
            n - 1
        } else {
            edges.partition_point(|&e| e <= x) - 1
        };
        counts[b] += weight(i);
    }
    counts
}

/// The `HistogramProto` of `values`, bucketed by `bins`, with at most `max_bins` buckets
/// (neighbouring buckets merged) when given.
pub fn histogram(
    values: &[f64],
    bins: &Bins,
    max_bins: Option<usize>,
) -> Result<HistogramProto, HistogramError> {
    if values.is_empty() {
        return Err(HistogramError::Empty);
    }
    // NaN propagates to min and max as it does in numpy.
    let (min, max) = if values.iter().any(|v| v.is_nan()) {
        (f64::NAN, f64::NAN)
    } else {
        values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            })
    };
    let edges = match bins {
        Bins::Count(0) => return Err(HistogramError::ZeroBins),
        Bins::Count(n) => {
            if !min.is_finite() || !max.is_finite() {
                return Err(HistogramError::NonFiniteRange { min, max });
            }
            uniform_edges(min, max, *n)
        }
        Bins::Edges(e) => {
            if e.len() < 2
                || e.windows(2)
                    .any(|w| w[0].partial_cmp(&w[1]) != Some(std::cmp::Ordering::Less))
            {
                return Err(HistogramError::BadEdges);
            }
            e.clone()
        }
    };
    let mut counts = bucket_counts(values, &edges, |_| 1.0);
    let mut limits = edges;
    if let Some(max_bins) = max_bins.filter(|&m| m > 0 && counts.len() > m) {
        (counts, limits) = subsample(&counts, &limits, max_bins);
    }
    let (bucket, bucket_limit) = trim(&counts, &limits).ok_or(HistogramError::NoneInRange)?;
    Ok(HistogramProto {
        min,
        max,
        num: values.len() as f64,
        sum: values.iter().sum(),
        sum_squares: values.iter().map(|v| v * v).sum(),
        bucket_limit,
        bucket,
    })
}

/// Merges runs of `len / max_bins` buckets (the last run zero-padded).
fn subsample(counts: &[f64], limits: &[f64], max_bins: usize) -> (Vec<f64>, Vec<f64>) {
    let sub = counts.len() / max_bins;
    let merged: Vec<f64> = counts.chunks(sub).map(|c| c.iter().sum()).collect();
    let mut new_limits: Vec<f64> = limits[..limits.len() - 1]
        .iter()
        .step_by(sub)
        .copied()
        .collect();
    new_limits.push(limits[limits.len() - 1]);
    (merged, new_limits)
}

/// Keeps the populated buckets plus one empty bucket on their left; `None` when all are empty.
fn trim(counts: &[f64], limits: &[f64]) -> Option<(Vec<f64>, Vec<f64>)> {
    let start = counts.iter().position(|&c| c > 0.0)?;
    let end = counts.iter().rposition(|&c| c > 0.0)? + 1;
    let bucket = if start > 0 {
        counts[start - 1..end].to_vec()
    } else {
        std::iter::once(0.0)
            .chain(counts[..end].iter().copied())
            .collect()
    };
    Some((bucket, limits[start..=end].to_vec()))
}

/// A `Summary.Value` holding `histogram` under `tag`.
pub fn histogram_value(tag: &str, histogram: &HistogramProto) -> summary::Value {
    use prost::Message;
    summary::Value {
        tag: tag.to_string(),
        value: Some(summary::value::Value::Histo(histogram.encode_to_vec())),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_numpy_semantics() {
        // [0,1) [1,2) [2,3]: the right edge belongs to the last bucket, 5 is dropped.
        let c = bucket_counts(
            &[0.0, 0.5, 1.0, 3.0, 5.0, f64::NAN],
            &[0.0, 1.0, 2.0, 3.0],
            |_| 1.0,
        );
        assert_eq!(c, vec![2.0, 1.0, 1.0]);
    }

    #[test]
    fn trimmed_with_an_empty_left_bucket() {
        let h = histogram(
            &[2.5, 2.6, 4.0],
            &Bins::Edges(vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
            None,
        )
        .unwrap();
        assert_eq!(h.bucket, vec![0.0, 2.0, 0.0, 1.0]);
        assert_eq!(h.bucket_limit, vec![2.0, 3.0, 4.0, 5.0]);
        assert_eq!((h.min, h.max, h.num, h.sum), (2.5, 4.0, 3.0, 9.1));
    }

    #[test]
    fn all_out_of_range_is_an_error() {
        let e = histogram(&[9.0], &Bins::Edges(vec![0.0, 1.0]), None).unwrap_err();
        assert_eq!(e, HistogramError::NoneInRange);
    }
}
