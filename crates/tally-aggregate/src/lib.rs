//! Trinity-style metric aggregation: key suffixes, run/task/step levels, eval statistics. Pure numerics, no I/O.
//!
//! This crate reproduces `trinity.utils.metrics` of trinity-rft 0.6.0 **bit for bit** (the
//! rules, section by section: `docs/contract/rft.md`):
//! the same output keys in the same order, the same treatment of bools, non-numeric values,
//! NaN, ±inf, empty input and key collisions, and the same floating-point results, because
//! the numerics that Trinity borrows from numpy and CPython are re-implemented exactly:
//!
//! * [`numeric::np_sum`] / [`numeric::np_mean`] / [`numeric::np_std`]: numpy's pairwise
//!   summation, mean and population standard deviation;
//! * [`numeric::py_sum`]: CPython's builtin `sum` over floats, as a plain left fold (Python
//!   ≤ 3.11) or with Neumaier compensation (Python 3.12), selected by [`BuiltinSum`];
//! * [`numeric::py_max`] / [`numeric::py_min`]: the builtin first-wins, strict-comparison
//!   `max`/`min` (order-dependent with NaN);
//! * [`bootstrap::bootstrap_metric`]: numpy's legacy `RandomState` (MT19937 seeded per call,
//!   `choice(n, k, replace=True)` = masked-rejection `randint`) and the resampling loop.
//!
//! Beyond Trinity, [`Estimator::Exact`] computes `best@k` / `worst@k` as the exact
//! expectation of the max / min of `k` draws with replacement ([`exact`]), and
//! [`per_token_ms`] gives the `timing_per_token_ms/` family.
//!
//! The four pipeline functions live in [`aggregate`]:
//! [`aggregate_run_level_metrics`] (experience → run),
//! [`calculate_task_level_metrics`] (run → task), [`aggregate_metrics`] (task → step, train)
//! and [`aggregate_eval_metrics`] (task → step, eval). Each runs on [`keyed`]'s grouping over
//! numbered keys; the `*_keyed` forms take that input directly, for callers (the Python
//! binding) that number keys themselves.

pub mod aggregate;
pub mod bootstrap;
pub mod exact;
pub mod key;
pub mod keyed;
pub mod mt19937;
pub mod numeric;
pub mod value;

pub use aggregate::{
    aggregate_eval_metrics, aggregate_metrics, aggregate_run_level_metrics,
    calculate_task_level_metrics, eval_task_level_keyed, run_level_keyed, step_level_keyed,
    subset_sizes, Estimator, Stat, TaskOptions,
};
pub use bootstrap::{bootstrap_metric, BootstrapError, Reducer};
pub use key::{canonical_key, parse_metric_key, AggType};
pub use numeric::BuiltinSum;
pub use value::{MetricMap, Value};

/// Milliseconds per token, as the `timing_per_token_ms/{section}` family computes it:
/// `seconds * 1000 / tokens`, in that operation order (so the result is bit-identical to
/// the Python expression). Returns `None` when `tokens == 0` (Python raises
/// `ZeroDivisionError` there).
pub fn per_token_ms(seconds: f64, tokens: u64) -> Option<f64> {
    if tokens == 0 {
        None
    } else {
        Some(seconds * 1000.0 / tokens as f64)
    }
}
