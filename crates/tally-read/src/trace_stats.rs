//! What a Perfetto trace says about where the time went (`tally trace-stats`,
//! docs/contract/trace.md "trace-stats"): per span name the count and the distribution of
//! durations, the interval between consecutive iterations, and each thread's busy share.

use crate::error::Error;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The span that marks one iteration: the logger records it once per `step`.
pub const ITERATION_SPAN: &str = "logger/step";

/// A distribution of durations, in milliseconds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Stats {
    /// How many values.
    pub n: usize,
    /// Their mean.
    pub mean_ms: f64,
    /// Their median.
    pub median_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
}

/// One span name's durations.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SpanStats {
    /// The span name.
    pub name: String,
    /// Sum of its durations, ms.
    pub total_ms: f64,
    /// Their distribution.
    #[serde(flatten)]
    pub stats: Stats,
}

/// One thread's (or track's) share of the trace's time spent inside its spans.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ThreadBusy {
    /// The tid in the trace.
    pub tid: u64,
    /// Its `thread_name`, when the trace names it.
    pub name: Option<String>,
    /// Spans on it.
    pub spans: usize,
    /// Time inside at least one of its spans (nested spans count once), ms.
    pub busy_ms: f64,
    /// `busy_ms` over the trace's window.
    pub busy_share: f64,
}

/// What `trace-stats` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The file read.
    pub file: String,
    /// The file ended before its closing `]` (a crashed or killed run).
    pub truncated: bool,
    /// Events read (all phases).
    pub events: usize,
    /// From the first span's start to the last span's end, ms.
    pub window_ms: f64,
    /// Per span name, the most total time first.
    pub spans: Vec<SpanStats>,
    /// Start-to-start intervals of consecutive `logger/step` spans (`None` without two).
    pub iteration_gaps: Option<Stats>,
    /// Per thread and track, by tid.
    pub threads: Vec<ThreadBusy>,
}

/// The `q` quantile of sorted `v`: linear interpolation between the two nearest ranks
/// (numpy's default), so the figures can be checked with any statistics tool.
fn quantile(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// The distribution of `ms`, which must not be empty.
fn stats(mut ms: Vec<f64>) -> Stats {
    ms.sort_by(f64::total_cmp);
    Stats {
        n: ms.len(),
        mean_ms: ms.iter().sum::<f64>() / ms.len() as f64,
        median_ms: quantile(&ms, 0.5),
        p90_ms: quantile(&ms, 0.9),
        p95_ms: quantile(&ms, 0.95),
        p99_ms: quantile(&ms, 0.99),
    }
}

/// A complete slice as read from the file, µs.
struct Slice<'a> {
    name: &'a str,
    tid: u64,
    ts: f64,
    dur: f64,
}

fn slice<'a>(path: &Path, k: usize, e: &'a Value) -> Result<Slice<'a>, Error> {
    let num = |key: &str| e.get(key).and_then(Value::as_f64).filter(|x| x.is_finite());
    let bad = |what: &str| {
        Error::Refused(format!(
            "{}: event #{k} ({}): {what}",
            path.display(),
            e.get("name").map_or("unnamed".into(), Value::to_string)
        ))
    };
    Ok(Slice {
        name: e
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("an X event needs a string name"))?,
        tid: e.get("tid").and_then(Value::as_u64).unwrap_or(0),
        ts: num("ts").ok_or_else(|| bad("an X event needs a numeric ts"))?,
        dur: num("dur")
            .filter(|d| *d >= 0.0)
            .ok_or_else(|| bad("an X event needs a non-negative numeric dur"))?,
    })
}

/// Length of the union of `[start, end)` intervals.
fn union_len(mut iv: Vec<(f64, f64)>) -> f64 {
    iv.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut cur: Option<(f64, f64)> = None;
    for (s, e) in iv {
        cur = match cur {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    total + cur.map_or(0.0, |(s, e)| e - s)
}

/// Read `path` (a truncated tail is tolerated) and compute the report.
pub fn report(path: &Path) -> Result<Report, Error> {
    let file = tally::trace::read_trace(path).map_err(|e| match e {
        tally::Error::Io { path, source, .. } => Error::Io { path, source },
        tally::Error::Json { path, source } => Error::Json { path, source },
        other => Error::Logger(other),
    })?;
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    let mut slices = Vec::new();
    for (k, e) in file.events.iter().enumerate() {
        match e.get("ph").and_then(Value::as_str) {
            Some("X") => slices.push(slice(path, k, e)?),
            Some("M") if e.get("name").and_then(Value::as_str) == Some("thread_name") => {
                let tid = e.get("tid").and_then(Value::as_u64).unwrap_or(0);
                if let Some(n) = e.pointer("/args/name").and_then(Value::as_str) {
                    names.insert(tid, n.to_owned());
                }
            }
            _ => {}
        }
    }
    let start = slices.iter().map(|s| s.ts).fold(f64::INFINITY, f64::min);
    let end = slices
        .iter()
        .map(|s| s.ts + s.dur)
        .fold(f64::NEG_INFINITY, f64::max);
    let window_us = if slices.is_empty() { 0.0 } else { end - start };

    let mut by_name: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut by_tid: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
    let mut steps = Vec::new();
    for s in &slices {
        by_name.entry(s.name).or_default().push(s.dur / 1e3);
        by_tid.entry(s.tid).or_default().push((s.ts, s.ts + s.dur));
        if s.name == ITERATION_SPAN {
            steps.push(s.ts);
        }
    }
    let mut spans: Vec<SpanStats> = by_name
        .into_iter()
        .map(|(name, ms)| SpanStats {
            name: name.to_owned(),
            total_ms: ms.iter().sum(),
            stats: stats(ms),
        })
        .collect();
    spans.sort_by(|a, b| b.total_ms.total_cmp(&a.total_ms));
    steps.sort_by(f64::total_cmp);
    let gaps: Vec<f64> = steps.windows(2).map(|w| (w[1] - w[0]) / 1e3).collect();
    let threads = by_tid
        .into_iter()
        .map(|(tid, iv)| {
            let spans = iv.len();
            let busy_us = union_len(iv);
            ThreadBusy {
                tid,
                name: names.get(&tid).cloned(),
                spans,
                busy_ms: busy_us / 1e3,
                busy_share: if window_us > 0.0 {
                    busy_us / window_us
                } else {
                    0.0
                },
            }
        })
        .collect();
    Ok(Report {
        file: path.display().to_string(),
        truncated: file.truncated,
        events: file.events.len(),
        window_ms: window_us / 1e3,
        spans,
        iteration_gaps: (!gaps.is_empty()).then(|| stats(gaps)),
        threads,
    })
}
