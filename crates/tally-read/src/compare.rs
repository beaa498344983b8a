//! Seed statistics: runs grouped by configuration, one score per run, and per group the mean,
//! standard deviation, interquartile mean and their 95 % bootstrap intervals, with curves on
//! aligned steps (docs/contract/consumers.md "Comparing runs").
//!
//! The intervals are percentile bootstraps over the group's runs, as rliable computes them for
//! one task: each of [`Settings::reps`] resamples draws the group's size in run indices with
//! numpy's legacy `RandomState(seed).randint` (MT19937, masked draws: the same stream, so a
//! numpy computation with the same seed gives the same resamples), the statistic is taken on
//! each, and the interval is numpy's linear percentile of those at 2.5 % and 97.5 %.

use crate::columns::{read_all, ReadOptions};
use crate::config::run_configuration;
use serde_json::Value;
use std::path::PathBuf;
use tally_aggregate::mt19937::{MaskedIndex, Mt19937};
use tally_aggregate::numeric::np_mean;
use tally_tfevents::Damage;

/// Which value of a run's curve is its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum At {
    /// The mean over the last 10 % of the run's steps (the runs table's `final_mean`).
    Final,
    /// The last value at or before this step; a run that has not reached it has no score.
    Step(i64),
    /// The curve's mean height over its steps (trapezoids over the step range).
    Auc,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            At::Final => f.write_str("the final 10 % of steps"),
            At::Auc => f.write_str("its mean height (auc)"),
            At::Step(n) => write!(f, "step {n}"),
        }
    }
}

impl std::str::FromStr for At {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "final" => Ok(At::Final),
            "auc" => Ok(At::Auc),
            _ => s.parse::<i64>().map(At::Step).map_err(|_| {
                format!("at={s:?}: expected \"final\", \"auc\" or a step (an integer)")
            }),
        }
    }
}

/// How a comparison is made.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The tag scored.
    pub metric: String,
    /// Configuration keys grouping the runs (a flat column such as `config.config.lr`, or the
    /// same without its leading `config.`); none: all runs are one group.
    pub by: Vec<String>,
    /// Which value of a run's curve is its score.
    pub at: At,
    /// Bootstrap resamples (rliable's default is 50 000).
    pub reps: usize,
    /// The bootstrap's seed.
    pub seed: u32,
    /// Steps of the aligned curves.
    pub curve_points: usize,
}

impl Settings {
    /// `metric` compared at its final value, 50 000 resamples, seed 0, 100 curve points.
    pub fn new(metric: impl Into<String>) -> Self {
        Settings {
            metric: metric.into(),
            by: Vec::new(),
            at: At::Final,
            reps: 50_000,
            seed: 0,
            curve_points: 100,
        }
    }
}

/// A statistic with its 95 % bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The statistic on the group's scores.
    pub value: f64,
    /// The 2.5 % percentile of the resampled statistic.
    pub low: f64,
    /// The 97.5 % percentile.
    pub high: f64,
}

/// One group's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The `by` values that define it (JSON; null when a run lacks the key).
    pub key: Vec<Value>,
    /// The runs scored, by name.
    pub runs: Vec<String>,
    /// Their scores, in the same order.
    pub scores: Vec<f64>,
    /// The mean and its interval. A group of one run has none: `low` and `high` are NaN (null
    /// in JSON), never the score twice, which would read as certainty.
    pub mean: Estimate,
    /// The sample standard deviation (n − 1); `None` for one run.
    pub std: Option<f64>,
    /// The interquartile mean (a quarter of the scores cut at each end, as
    /// `scipy.stats.trim_mean(x, 0.25)`) and its interval (none for one run, as the mean's).
    pub iqm: Estimate,
    /// The group's curve on aligned steps.
    pub curve: Vec<CurvePoint>,
}

/// One aligned step of a group's curve.
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint {
    /// The step.
    pub step: i64,
    /// Runs with a value at or before it.
    pub n: usize,
    /// Their mean.
    pub mean: f64,
    /// Their sample standard deviation; `None` for one run.
    pub std: Option<f64>,
    /// The mean's 95 % percentile-bootstrap interval, on [`BAND_REPS`] resamples.
    pub low: f64,
    /// See `low`.
    pub high: f64,
    /// Their interquartile mean with its band, on the same resamples.
    pub iqm: Estimate,
}

/// Resamples behind each curve point's band: a band is drawn, not reported, and a curve has up
/// to a few thousand points, so fewer than a score's interval takes.
pub const BAND_REPS: usize = 2_000;

/// The comparison: groups sorted by mean, best first, the runs left out with why, and what the
/// reading met, as every reader reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The groups, by descending mean.
    pub groups: Vec<Group>,
    /// Runs without a score (no point of the metric, or not at the step), each with why.
    pub unscored: Vec<(String, String)>,
    /// What was not read, each path with why (`tally.read`'s `skipped`).
    pub skipped: Vec<(PathBuf, String)>,
    /// What the reader read past: truncated tails, skipped records, steps going back, purges
    /// (the runs table's and `tally.read`'s `damage`).
    pub damage: Vec<Damage>,
    /// The `by` keys no scored run has: said, and not grouped by (one group of nulls would
    /// look like an answer).
    pub absent: Vec<String>,
}

impl Group {
    /// The group as JSON: `key` (by name), `n`, `mean`/`mean_low`/`mean_high`, `std`,
    /// `iqm`/`iqm_low`/`iqm_high`, `runs`, `scores`, `curve` (`{step, n, mean, std, low, high, iqm, iqm_low, iqm_high}`
    /// each);
    /// a value that is not finite is null.
    pub fn to_json(&self, by: &[String]) -> Value {
        let num = |v: f64| serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number);
        let curve: Vec<Value> = self
            .curve
            .iter()
            .map(|p| {
                serde_json::json!({
                    "step": p.step, "n": p.n, "mean": num(p.mean), "std": p.std.map(num),
                    "low": num(p.low), "high": num(p.high),
                    "iqm": num(p.iqm.value), "iqm_low": num(p.iqm.low), "iqm_high": num(p.iqm.high),
                })
            })
            .collect();
        let key: serde_json::Map<String, Value> =
            by.iter().cloned().zip(self.key.iter().cloned()).collect();
        serde_json::json!({
            "key": key,
            "n": self.scores.len(),
            "mean": num(self.mean.value), "mean_low": num(self.mean.low), "mean_high": num(self.mean.high),
            "std": self.std.map(num),
            "iqm": num(self.iqm.value), "iqm_low": num(self.iqm.low), "iqm_high": num(self.iqm.high),
            "runs": self.runs,
            "scores": self.scores.iter().map(|&v| num(v)).collect::<Vec<_>>(),
            "curve": curve,
        })
    }
}

/// A scored run: its group key, name, score and points.
type Scored = (Vec<Value>, String, f64, Vec<(i64, f64)>);

/// A scored run before grouping: its configuration, name, score and points.
type Configured = (Vec<(String, Value)>, String, f64, Vec<(i64, f64)>);

/// Compare the runs under `inputs` as `s` says. No run with a point of the metric is an error
/// naming it: an empty comparison would read as an answer.
pub fn compare(inputs: &[PathBuf], s: &Settings) -> Result<Comparison, crate::Error> {
    if s.reps == 0 {
        return Err(crate::Error::Setting("reps must be at least 1".into()));
    }
    let opts = ReadOptions {
        strict: false,
        skip_unreadable: true,
        readable_part: false,
    };
    let globs = [s.metric.clone()];
    let c = read_all(inputs, Some(&globs), opts).map_err(crate::Error::Refused)?;
    // Each run's points of the metric, in reading order.
    let mut series: Vec<Vec<(i64, f64)>> = vec![Vec::new(); c.runs.len()];
    for chunk in &c.chunks {
        for i in 0..chunk.rows() {
            series[chunk.run_codes[i] as usize].push((chunk.step[i], chunk.value[i]));
        }
    }
    if series.iter().all(Vec::is_empty) {
        return Err(crate::Error::Refused(format!(
            "no run under {} has a point of {:?} (`tally runs --tags '*'` lists the tags)",
            inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            s.metric
        )));
    }
    let mut unscored = Vec::new();
    let mut scored: Vec<Configured> = Vec::new();
    for (code, points) in series.into_iter().enumerate() {
        let name = c.runs.get(code).to_owned();
        let dir = &c.run_dirs[code];
        let Some(score) = score(&points, s.at) else {
            let why = if points.is_empty() {
                format!("no point of {}", s.metric)
            } else {
                format!("no finite score of {} at {} (the run ends before it, or its values there are not finite)", s.metric, s.at)
            };
            unscored.push((name, why));
            continue;
        };
        scored.push((run_configuration(dir)?, name, score, points));
    }
    let (present, absent): (Vec<&String>, Vec<&String>) = s.by.iter().partition(|by| {
        scored
            .iter()
            .any(|(config, ..)| !config_value(config, by).is_null())
    });
    let keyed: Vec<Scored> = scored
        .into_iter()
        .map(|(config, name, score, points)| {
            let key =
                s.by.iter()
                    .map(|by| {
                        if present.contains(&by) {
                            config_value(&config, by)
                        } else {
                            Value::Null
                        }
                    })
                    .collect();
            (key, name, score, points)
        })
        .collect();
    let mut groups: Vec<Group> = Vec::new();
    // Groups in first-seen order before sorting, so equal means keep the runs' order.
    let mut order: Vec<Vec<Value>> = Vec::new();
    for (key, ..) in &keyed {
        if !order.contains(key) {
            order.push(key.clone());
        }
    }
    for key in order {
        let members: Vec<&Scored> = keyed.iter().filter(|m| m.0 == key).collect();
        let scores: Vec<f64> = members.iter().map(|m| m.2).collect();
        let curves: Vec<&[(i64, f64)]> = members.iter().map(|m| m.3.as_slice()).collect();
        let [mut mean, mut trimmed] = bootstrap(&scores, [np_mean, iqm], s);
        if scores.len() < 2 {
            for e in [&mut mean, &mut trimmed] {
                (e.low, e.high) = (f64::NAN, f64::NAN);
            }
        }
        groups.push(Group {
            runs: members.iter().map(|m| m.1.clone()).collect(),
            mean,
            std: sample_std(&scores),
            iqm: trimmed,
            curve: aligned_curve(&curves, s),
            scores,
            key,
        });
    }
    groups.sort_by(|a, b| b.mean.value.total_cmp(&a.mean.value));
    Ok(Comparison {
        groups,
        unscored,
        skipped: c.skipped,
        damage: c.damage,
        absent: absent.into_iter().cloned().collect(),
    })
}

/// What every front end says of a `by` key no scored run has: the runs are not grouped by it,
/// and where a run's configuration comes from (docs/contract/consumers.md "A run's
/// configuration").
pub fn absent_message(key: &str) -> String {
    format!(
        "no run has configuration key {key:?}: not grouped by it (a run's configuration is its \
         run_config.json, else its hparams, a hyperparameters text table, and key=value folder \
         names; `tally runs --json` lists each run's keys)"
    )
}

/// The run's `by` value: the flat column named so, else `config.<by>`; null when it has
/// neither.
fn config_value(config: &[(String, Value)], by: &str) -> Value {
    let find = |k: &str| config.iter().find(|(c, _)| c == k).map(|(_, v)| v.clone());
    let key = by.strip_prefix("config.").unwrap_or(by);
    find(key)
        .or_else(|| find(&format!("config.{key}")))
        .unwrap_or(Value::Null)
}

/// A run's score, from its points in reading order.
fn score(points: &[(i64, f64)], at: At) -> Option<f64> {
    let finite = || -> Vec<(i64, f64)> {
        points
            .iter()
            .copied()
            .filter(|(_, v)| v.is_finite())
            .collect()
    };
    match at {
        // The runs table's rule, computed where it computes it: the window spans the tag's
        // whole step range, finite or not, and averages the finite values in it.
        At::Final => crate::runs::final_mean(points),
        At::Step(n) => {
            let finite = finite();
            let last = finite.iter().map(|p| p.0).max()?;
            finite
                .iter()
                .filter(|(s, _)| *s <= n)
                .max_by_key(|(s, _)| *s)
                .filter(|_| last >= n)
                .map(|p| p.1)
        }
        At::Auc => {
            let mut sorted = finite();
            sorted.sort_by_key(|p| p.0);
            let (first, last) = (sorted.first()?.0, sorted.last()?.0);
            if last == first {
                return Some(sorted[sorted.len() - 1].1);
            }
            let area: f64 = sorted
                .windows(2)
                .map(|w| (w[1].0 - w[0].0) as f64 * (w[0].1 + w[1].1) / 2.0)
                .sum();
            Some(area / (last - first) as f64)
        }
    }
}

/// `scipy.stats.trim_mean(x, 0.25)`: sorted, `int(0.25 n)` cut from each end, the rest's mean.
pub fn iqm(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let cut = v.len() / 4;
    np_mean(&v[cut..v.len() - cut])
}

fn sample_std(x: &[f64]) -> Option<f64> {
    if x.len() < 2 {
        return None;
    }
    let m = np_mean(x);
    let ss: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
    Some((ss / (x.len() - 1) as f64).sqrt())
}

/// Each of `stats` on `x` with its percentile-bootstrap interval (the module's rules), all on
/// the same resamples: each statistic's interval is the one a bootstrap of it alone with the
/// same seed gives, for the cost of one set of draws.
fn bootstrap<const K: usize>(
    x: &[f64],
    stats: [fn(&[f64]) -> f64; K],
    s: &Settings,
) -> [Estimate; K] {
    let mut mt = Mt19937::new(s.seed);
    let draw = MaskedIndex::new(x.len());
    let mut sample = vec![0.0; x.len()];
    let mut resampled: [Vec<f64>; K] = std::array::from_fn(|_| Vec::with_capacity(s.reps));
    for _ in 0..s.reps {
        for v in sample.iter_mut() {
            *v = x[draw.draw(&mut mt) as usize];
        }
        for (stat, out) in stats.iter().zip(resampled.iter_mut()) {
            out.push(stat(&sample));
        }
    }
    std::array::from_fn(|k| {
        let sorted = &mut resampled[k];
        sorted.sort_by(f64::total_cmp);
        Estimate {
            value: stats[k](x),
            low: percentile(sorted, 2.5),
            high: percentile(sorted, 97.5),
        }
    })
}

/// numpy's `percentile(sorted, q)` with the default linear method (its `_lerp` included).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let index = (q / 100.0) * (sorted.len() - 1) as f64;
    let below = index.floor();
    let t = index - below;
    let a = sorted[below as usize];
    let b = sorted[(below as usize + 1).min(sorted.len() - 1)];
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// The group's curves on `s.curve_points` steps evenly spaced from the latest first step to the
/// earliest last step (the range every run covers), each run's value the last at or before
/// the step, with the mean's and the IQM's bootstrap bands ([`BAND_REPS`] resamples, `s.seed`).
fn aligned_curve(curves: &[&[(i64, f64)]], s: &Settings) -> Vec<CurvePoint> {
    let points = s.curve_points;
    let band = Settings {
        reps: BAND_REPS.min(s.reps),
        ..s.clone()
    };
    let sorted: Vec<Vec<(i64, f64)>> = curves
        .iter()
        .map(|c| {
            let mut v: Vec<(i64, f64)> = c.iter().copied().filter(|p| p.1.is_finite()).collect();
            v.sort_by_key(|p| p.0);
            v
        })
        .filter(|v| !v.is_empty())
        .collect();
    let (Some(from), Some(to)) = (
        sorted.iter().map(|v| v[0].0).max(),
        sorted.iter().map(|v| v[v.len() - 1].0).min(),
    ) else {
        return Vec::new();
    };
    if to < from || points == 0 {
        return Vec::new();
    }
    let n = points.min((to - from) as usize + 1).max(1);
    let mut steps: Vec<i64> = (0..n)
        .map(|i| {
            if n == 1 {
                to
            } else {
                from + ((to - from) as f64 * i as f64 / (n - 1) as f64).round() as i64
            }
        })
        .collect();
    steps.dedup();
    steps
        .into_iter()
        .map(|step| {
            let values: Vec<f64> = sorted
                .iter()
                .filter_map(|v| {
                    let i = v.partition_point(|p| p.0 <= step);
                    (i > 0).then(|| v[i - 1].1)
                })
                .collect();
            let [mean, trimmed] = bootstrap(&values, [np_mean, iqm], &band);
            CurvePoint {
                step,
                n: values.len(),
                mean: mean.value,
                std: sample_std(&values),
                low: mean.low,
                high: mean.high,
                iqm: trimmed,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iqm_cuts_a_quarter_at_each_end_as_scipy_does() {
        assert_eq!(iqm(&[1.0, 2.0, 3.0, 4.0, 100.0]), 3.0);
        assert_eq!(iqm(&[1.0, 2.0, 3.0]), 2.0);
        assert_eq!(iqm(&[4.0, 1.0, 3.0, 2.0, 0.0, 100.0, -50.0, 5.0]), 2.5);
    }

    #[test]
    fn percentile_is_numpy_linear() {
        let v = [1.0, 2.0, 4.0, 8.0];
        assert_eq!(percentile(&v, 50.0), 3.0);
        assert_eq!(percentile(&v, 2.5), 1.075);
        assert_eq!(percentile(&v, 100.0), 8.0);
    }

    #[test]
    fn scores_take_the_final_tenth_a_step_or_the_mean_height() {
        let pts: Vec<(i64, f64)> = (0..=10).map(|s| (s * 10, s as f64)).collect();
        assert_eq!(score(&pts, At::Final), Some(9.5), "steps 90 and 100");
        assert_eq!(score(&pts, At::Step(55)), Some(5.0));
        assert_eq!(score(&pts, At::Step(101)), None, "not reached");
        assert_eq!(score(&pts, At::Auc), Some(5.0));
        assert_eq!(score(&[(1, f64::NAN)], At::Final), None);
    }

    /// A run of `ret` with these points in `dir`, one event each.
    fn write(dir: &std::path::Path, points: &[(i64, f64)]) {
        std::fs::create_dir_all(dir).unwrap();
        let mut w = tally_tfevents::RecordWriter::new(Vec::new());
        for &(step, v) in points {
            let mut buf = Vec::new();
            tally_tfevents::encode_scalar_event(step, 1.0 + step as f64, &[("ret", v)], &mut buf);
            w.write_record(&buf).unwrap();
        }
        std::fs::write(dir.join("events.out.tfevents.1.h"), w.into_inner()).unwrap();
    }

    /// A run's name, its points of `ret`, and the final mean the runs table gives them.
    type Case = (&'static str, Vec<(i64, f64)>, Option<f64>);

    #[test]
    fn the_final_score_is_the_runs_tables_final_mean_whatever_is_not_finite() {
        let nan = f64::NAN;
        let dense = |f: &dyn Fn(i64) -> f64| (0..=100).map(|s| (s, f(s))).collect::<Vec<_>>();
        let cases: Vec<Case> = vec![
            // The last 10 % all NaN: no final mean, however many finite points come before.
            (
                "tail_nan",
                dense(&|s| if s >= 90 { nan } else { s as f64 }),
                None,
            ),
            // One NaN at the last step keeps the window where the step range puts it (90..=100),
            // not where the last finite point would (85.5..=95).
            (
                "last_nan",
                vec![(0, 0.0), (88, 88.0), (95, 95.0), (100, nan)],
                Some(95.0),
            ),
            (
                "inf_inside",
                dense(&|s| if s == 95 { f64::INFINITY } else { 1.0 }),
                Some(1.0),
            ),
            ("plain", dense(&|s| s as f64), Some(95.0)),
        ];
        let tmp = tempfile::tempdir().unwrap();
        for (name, points, _) in &cases {
            write(&tmp.path().join(name), points);
        }
        let inputs = [tmp.path().to_owned()];
        let table =
            crate::runs::runs_table(&inputs, &["ret".to_owned()], Default::default()).unwrap();
        let c = compare(
            &inputs,
            &Settings {
                reps: 10,
                ..Settings::new("ret")
            },
        )
        .unwrap();
        for (name, points, want) in &cases {
            assert_eq!(score(points, At::Final), *want, "{name}");
            let row = table.rows.iter().find(|r| r.name == *name).unwrap();
            assert_eq!(row.tags[0].final_mean, *want, "{name}: the runs table");
            let scored = c.groups[0].runs.iter().position(|r| r == name);
            match want {
                Some(v) => assert_eq!(c.groups[0].scores[scored.unwrap()], *v, "{name}"),
                None => assert!(
                    scored.is_none() && c.unscored.iter().any(|(r, _)| r == name),
                    "{name}: {c:?}"
                ),
            }
        }
    }
}
