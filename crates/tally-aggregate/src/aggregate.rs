//! The four levels of Trinity's pipeline: experience → run → task → step
//! (`docs/contract/rft.md` "Experience → run", "Run → task", "Task → step").
//!
//! Every function takes a list of metric dicts as `&[D]` where each `D` is an ordered list of
//! `(key, Value)` pairs (a Python dict in insertion order). Values are grouped in encounter
//! order, dicts in list order and keys in dict order, and non-numeric values are skipped
//! (`docs/contract/rft.md` "Numeric values"). Outputs are [`MetricMap`]s whose iteration order
//! is Python's.

use crate::bootstrap::bootstrap_best_worst;
use crate::exact::expected_max_min_many;
use crate::key::{parse_metric_key, AggType};
use crate::keyed::{group_canonical, group_numeric, number_keys, CanonicalGroup, Entry};
use crate::numeric::BuiltinSum;
use crate::numeric::{np_max, np_mean, np_min, np_std, py_max, py_mean, py_min, py_sum};
use crate::value::{MetricMap, Value};

/// A step-level statistic of a mean-aggregated metric (`STAT_FNS` in Trinity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stat {
    /// `np.mean`.
    Mean,
    /// `np.max`.
    Max,
    /// `np.min`.
    Min,
    /// `np.std`, population (ddof = 0).
    Std,
}

impl Stat {
    /// The statistic named exactly `s`; unknown names are `None` (and skipped silently).
    pub fn parse(s: &str) -> Option<Stat> {
        match s {
            "mean" => Some(Stat::Mean),
            "max" => Some(Stat::Max),
            "min" => Some(Stat::Min),
            "std" => Some(Stat::Std),
            _ => None,
        }
    }

    /// Applies the numpy function to a non-empty array.
    pub fn compute(self, values: &[f64]) -> f64 {
        match self {
            Stat::Mean => np_mean(values),
            Stat::Max => np_max(values),
            Stat::Min => np_min(values),
            Stat::Std => np_std(values),
        }
    }
}

/// How `best@k` / `worst@k` are estimated at the eval task level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Estimator {
    /// Trinity's bootstrap (1000 resamples, MT19937 seeded 42 per `(key, k)`): bit-identical
    /// to trinity-rft 0.6.0, but noisy and dependent on the order of the runs.
    #[default]
    Bootstrap,
    /// The exact expectation of the max / min of `k` draws with replacement
    /// ([`crate::exact`]): what the bootstrap estimates, without noise or order dependence.
    Exact,
}

/// Options of [`calculate_task_level_metrics`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TaskOptions {
    /// Which builtin `sum` to reproduce for run-level means, `:sum` and the `time/*` means.
    pub builtin_sum: BuiltinSum,
    /// How to estimate `best@k` / `worst@k`.
    pub estimator: Estimator,
}

/// The numeric values of all dicts, in encounter order, with their keys numbered.
fn numbered<'a, D, K>(metric_dicts: &'a [D]) -> (Vec<&'a str>, Vec<Entry>)
where
    D: AsRef<[(K, Value)]>,
    K: AsRef<str> + 'a,
{
    number_keys(metric_dicts.iter().flat_map(|d| {
        d.as_ref()
            .iter()
            .filter_map(|(k, v)| v.as_numeric().map(|x| (k.as_ref(), x)))
    }))
}

/// `AGG_REDUCERS[agg](values)` for a non-mean agg.
fn reduce(agg: AggType, values: &[f64], builtin_sum: BuiltinSum) -> f64 {
    match agg {
        AggType::Sum => py_sum(values, builtin_sum),
        AggType::Max => py_max(values),
        AggType::Min => py_min(values),
        AggType::Last => values[values.len() - 1],
        AggType::Mean => py_mean(values, builtin_sum),
    }
}

fn prefix_str(prefix: &str) -> String {
    if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}/")
    }
}

/// The step-level stats Trinity writes by default for mean metrics in training.
pub const DEFAULT_OUTPUT_STATS: [&str; 3] = ["mean", "max", "min"];
/// The step-level stats Trinity writes for mean metrics with `detailed_stats=True`.
pub const DEFAULT_EVAL_OUTPUT_STATS: [&str; 4] = ["mean", "max", "min", "std"];

/// `aggregate_metrics(metric_dicts, prefix, default_output_stats)` (task → step, train,
/// `docs/contract/rft.md` "Task → step"): mean metrics give `{prefix}/{name}/{stat}` for each
/// known stat (default `mean, max, min`, numpy), `:sum`/`:max`/`:min`/`:last` give
/// `{prefix}/{name}/{agg}` with the builtin reducers. An empty `prefix` gives no leading slash.
pub fn aggregate_metrics<D, K>(
    metric_dicts: &[D],
    prefix: &str,
    default_output_stats: Option<&[&str]>,
    builtin_sum: BuiltinSum,
) -> MetricMap
where
    D: AsRef<[(K, Value)]>,
    K: AsRef<str>,
{
    let stats = default_output_stats.unwrap_or(&DEFAULT_OUTPUT_STATS);
    step_level(metric_dicts, prefix, Some(stats), builtin_sum)
}

/// `aggregate_eval_metrics(metric_dicts, prefix, output_stats, detailed_stats)` (task → step,
/// eval, `docs/contract/rft.md` "Task → step"): like [`aggregate_metrics`] except that mean
/// metrics give only `{prefix}/{name}` = `np.mean` unless `detailed_stats`, in which case they
/// give `{prefix}/{name}/{stat}` for `output_stats` (default `mean, max, min, std`).
pub fn aggregate_eval_metrics<D, K>(
    metric_dicts: &[D],
    prefix: &str,
    output_stats: Option<&[&str]>,
    detailed_stats: bool,
    builtin_sum: BuiltinSum,
) -> MetricMap
where
    D: AsRef<[(K, Value)]>,
    K: AsRef<str>,
{
    let stats = output_stats.unwrap_or(&DEFAULT_EVAL_OUTPUT_STATS);
    step_level(
        metric_dicts,
        prefix,
        detailed_stats.then_some(stats),
        builtin_sum,
    )
}

/// Shared body of the step level; `stats == None` is the eval "mean only, no suffix" mode.
fn step_level<D, K>(
    metric_dicts: &[D],
    prefix: &str,
    stats: Option<&[&str]>,
    builtin_sum: BuiltinSum,
) -> MetricMap
where
    D: AsRef<[(K, Value)]>,
    K: AsRef<str>,
{
    if metric_dicts.is_empty() {
        return MetricMap::new();
    }
    let (keys, entries) = numbered(metric_dicts);
    step_level_keyed(&keys, &entries, prefix, stats, builtin_sum)
}

/// The step level (task → step, `docs/contract/rft.md` "Task → step") over numbered keys
/// (`keys[k]` is the text of key number `k` in `entries`): [`aggregate_metrics`] with
/// `stats = Some(default_output_stats)`, [`aggregate_eval_metrics`] with `Some(output_stats)`
/// when `detailed_stats`, else `None` (mean groups give only `{prefix}/{name}`).
pub fn step_level_keyed<K: AsRef<str>>(
    keys: &[K],
    entries: &[Entry],
    prefix: &str,
    stats: Option<&[&str]>,
    builtin_sum: BuiltinSum,
) -> MetricMap {
    let mut result = MetricMap::new();
    let prefix_str = prefix_str(prefix);
    let grouped = group_numeric(keys, entries);
    for (&(name, agg), values) in grouped.iter() {
        if agg == AggType::Mean {
            match stats {
                Some(stats) => {
                    for &stat in stats {
                        if let Some(s) = Stat::parse(stat) {
                            result.insert(format!("{prefix_str}{name}/{stat}"), s.compute(values));
                        }
                    }
                }
                None => {
                    result.insert(format!("{prefix_str}{name}"), np_mean(values));
                }
            }
            continue;
        }
        result.insert(
            format!("{prefix_str}{name}/{}", agg.as_str()),
            reduce(agg, values, builtin_sum),
        );
    }
    result
}

/// `aggregate_run_level_metrics(metric_dicts)` (experience → run, `docs/contract/rft.md`
/// "Experience → run"): grouped by canonical key, which is also the output key (`a:mean` →
/// `a`, `tokens:sum` stays); mean is the builtin `sum(values) / len(values)`.
pub fn aggregate_run_level_metrics<D, K>(metric_dicts: &[D], builtin_sum: BuiltinSum) -> MetricMap
where
    D: AsRef<[(K, Value)]>,
    K: AsRef<str>,
{
    let (keys, entries) = numbered(metric_dicts);
    run_level_keyed(&keys, &entries, builtin_sum)
        .into_iter()
        .map(|(group, x)| (group.key.into_owned(), x))
        .collect()
}

/// [`aggregate_run_level_metrics`] over numbered keys (`keys[k]` is the text of key number `k`
/// in `entries`): each canonical group with its value, in first-appearance order. Canonical
/// keys are distinct, so there is no collision to resolve; a caller holding the key strings
/// can reuse the one named by [`CanonicalGroup::same_text`] as the output key.
pub fn run_level_keyed<'k, K: AsRef<str>>(
    keys: &'k [K],
    entries: &[Entry],
    builtin_sum: BuiltinSum,
) -> Vec<(CanonicalGroup<'k>, f64)> {
    let grouped = group_canonical(keys, entries);
    let values: Vec<f64> = grouped
        .iter()
        .map(|(group, values)| reduce(group.agg, values, builtin_sum))
        .collect();
    grouped.groups.into_iter().zip(values).collect()
}

/// The subset sizes of the `best@k` / `worst@k` statistics for `n` values:
/// `2, 4, 8, …` (powers of two below `n`) and then `n`; empty for `n ≤ 1`.
pub fn subset_sizes(n: usize) -> Vec<usize> {
    let mut ks = Vec::new();
    if n <= 1 {
        return ks;
    }
    let mut k = 2;
    while k < n {
        ks.push(k);
        k *= 2;
    }
    ks.push(n);
    ks
}

/// `calculate_task_level_metrics(metrics, is_eval)` (run → task, `docs/contract/rft.md`
/// "Run → task").
///
/// Training (`is_eval == false`) is exactly [`aggregate_run_level_metrics`]. For eval, per
/// canonical key in first-appearance order: non-mean aggs give `name:agg`; mean keys whose
/// name contains `time/task_execution` or `time/run_execution` give the builtin mean under
/// the key itself; every other mean key with `n` values gives `key/mean@n`, `key/std@n`
/// (numpy, population) and, when `n ≥ 2`, `key/best@k`, `key/worst@k` for each of
/// [`subset_sizes`]`(n)`, estimated by `options.estimator`.
pub fn calculate_task_level_metrics<D, K>(
    metrics: &[D],
    is_eval: bool,
    options: TaskOptions,
) -> MetricMap
where
    D: AsRef<[(K, Value)]>,
    K: AsRef<str>,
{
    if metrics.is_empty() {
        return MetricMap::new();
    }
    if !is_eval {
        return aggregate_run_level_metrics(metrics, options.builtin_sum);
    }
    let (keys, entries) = numbered(metrics);
    eval_task_level_keyed(&keys, &entries, options)
}

/// The eval branch of [`calculate_task_level_metrics`] over numbered keys (`keys[k]` is the
/// text of key number `k` in `entries`); the training branch is [`run_level_keyed`].
pub fn eval_task_level_keyed<K: AsRef<str>>(
    keys: &[K],
    entries: &[Entry],
    options: TaskOptions,
) -> MetricMap {
    let mut result = MetricMap::new();
    for (group, values) in group_canonical(keys, entries).iter() {
        let (key, agg) = (&group.key, group.agg);
        // Trinity re-parses the canonical key: `name` is what the time test looks at.
        let (name, _) = parse_metric_key(key);
        if agg != AggType::Mean {
            result.insert(
                format!("{name}:{}", agg.as_str()),
                reduce(agg, values, options.builtin_sum),
            );
            continue;
        }
        if name.contains("time/task_execution") || name.contains("time/run_execution") {
            let mean = py_mean(values, options.builtin_sum);
            result.insert(key.to_string(), mean);
            continue;
        }
        let n = values.len();
        result.insert(format!("{key}/mean@{n}"), np_mean(values));
        result.insert(format!("{key}/std@{n}"), np_std(values));
        if n <= 1 {
            continue;
        }
        let ks = subset_sizes(n);
        let estimates: Vec<(f64, f64)> = match options.estimator {
            Estimator::Bootstrap => ks
                .iter()
                .map(|&k| bootstrap_best_worst(values, k))
                .collect(),
            Estimator::Exact => expected_max_min_many(values, &ks),
        };
        for (k, (best, worst)) in ks.iter().zip(estimates) {
            result.insert(format!("{key}/best@{k}"), best);
            result.insert(format!("{key}/worst@{k}"), worst);
        }
    }
    result
}
