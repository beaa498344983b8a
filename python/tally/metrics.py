"""Trinity-RFT metric aggregation, bit-identical to ``trinity.utils.metrics`` (0.6.0), in Rust.

A drop-in replacement: the same names and signatures as ``trinity.utils.metrics``
(``parse_metric_key``, ``aggregate_metrics``, ``aggregate_eval_metrics``,
``aggregate_run_level_metrics``, ``calculate_task_level_metrics``, ``bootstrap_metric``, plus
``AggType``, ``take_last``, ``AGG_REDUCERS``, ``STAT_FNS``, ``group_numeric_metrics`` and
``group_metrics_by_canonical_key``), returning identical dicts (same keys, same order, same
floats bit for bit) on the same interpreter. Two additions, both keyword-only:

* ``estimator="exact"`` on ``calculate_task_level_metrics``: ``best@k`` / ``worst@k`` become the
  exact expectation of the max / min of ``k`` draws with replacement (no Monte-Carlo noise, no
  dependence on run order) instead of Trinity's bootstrap (the default).
* ``builtin_sum="left_fold" | "neumaier"``: which CPython builtin ``sum`` to reproduce for
  run-level means, ``:sum`` and the ``time/*`` means. ``None`` (the default) is the running
  interpreter's own (``BUILTIN_SUM``): Python <= 3.11 folds left, 3.12 compensates.

Unlike Trinity, nothing here touches the global ``numpy.random`` state, and numpy is only
imported for ``STAT_FNS`` and for ``bootstrap_metric`` with custom reducers or non-float data.
"""

from __future__ import annotations

import builtins
from collections import defaultdict
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tally._tally import aggregate as _native

__all__ = [
    "AGG_REDUCERS",
    "BUILTIN_SUM",
    "STAT_FNS",
    "AggType",
    "aggregate_eval_metrics",
    "aggregate_metrics",
    "aggregate_run_level_metrics",
    "bootstrap_metric",
    "calculate_task_level_metrics",
    "exact_best_worst",
    "group_metrics_by_canonical_key",
    "group_numeric_metrics",
    "parse_metric_key",
    "per_token_ms",
    "take_last",
]


class AggType(str, Enum):
    """Aggregation type of a metric key (its ``:agg`` suffix)."""

    MEAN = "mean"
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    LAST = "last"


def take_last(values: List[float]) -> float:
    """The ``:last`` reducer."""
    return values[-1]


AGG_REDUCERS: Dict[AggType, Callable[[List[float]], float]] = {
    AggType.SUM: sum,
    AggType.MAX: max,
    AggType.MIN: min,
    AggType.LAST: take_last,
}


def _interpreter_builtin_sum() -> str:
    # Python 3.12's builtin sum compensates (Neumaier); <= 3.11 folds left. Detect, don't guess.
    return "neumaier" if sum([1e16, 1.0, -1e16]) == 1.0 else "left_fold"


#: The builtin-``sum`` behaviour of the running interpreter: ``"left_fold"`` or ``"neumaier"``.
BUILTIN_SUM: str = _interpreter_builtin_sum()


def _sum_mode(builtin_sum: Optional[str]) -> str:
    if builtin_sum is None:
        return BUILTIN_SUM
    if builtin_sum not in ("left_fold", "neumaier"):
        raise ValueError(f"builtin_sum must be 'left_fold', 'neumaier' or None, not {builtin_sum!r}")
    return builtin_sum


def __getattr__(name: str) -> Any:
    # STAT_FNS maps to numpy functions; numpy is imported only when it is asked for.
    if name == "STAT_FNS":
        import numpy as np

        return {"mean": np.mean, "max": np.max, "min": np.min, "std": np.std}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_metric_key(key: str) -> Tuple[str, AggType]:
    """Parse a metric key into ``(name, AggType)``.

    Only the last colon counts and only the exact lowercase suffixes ``mean sum max min last``
    are recognised; anything else keeps the whole key with ``AggType.MEAN``::

        "reward"               -> ("reward", AggType.MEAN)
        "ns:tokens:sum"        -> ("ns:tokens", AggType.SUM)
        "some:unknown_suffix"  -> ("some:unknown_suffix", AggType.MEAN)
    """
    if ":" in key:
        name, agg_str = key.rsplit(":", 1)
        try:
            return name, AggType(agg_str)
        except ValueError:
            return key, AggType.MEAN
    return key, AggType.MEAN


def group_numeric_metrics(
    metric_dicts: List[Dict[str, float]],
) -> Dict[Tuple[str, AggType], List[float]]:
    """Numeric values grouped by ``(name, agg)`` in first-appearance order (pure Python)."""
    grouped: Dict[Tuple[str, AggType], List[float]] = defaultdict(list)
    for metric_dict in metric_dicts:
        for key, value in metric_dict.items():
            if not isinstance(value, (int, float)):
                continue
            name, agg = parse_metric_key(key)
            grouped[(name, agg)].append(float(value))
    return grouped


def group_metrics_by_canonical_key(
    metric_dicts: List[Dict[str, float]],
) -> Dict[str, Tuple[AggType, List[float]]]:
    """Numeric values grouped by canonical key; the first seen agg decides (pure Python)."""
    grouped: Dict[str, Tuple[AggType, List[float]]] = {}
    for metric_dict in metric_dicts:
        for key, value in metric_dict.items():
            if not isinstance(value, (int, float)):
                continue
            name, agg = parse_metric_key(key)
            canonical_key = f"{name}:{agg.value}" if agg != AggType.MEAN else name
            if canonical_key not in grouped:
                grouped[canonical_key] = (agg, [])
            grouped[canonical_key][1].append(float(value))
    return grouped


def _stats(stats: Sequence[Any]) -> List[str]:
    # Trinity looks each name up in STAT_FNS; anything that is not a str can never match.
    return [str(s) for s in stats if isinstance(s, str)]


def aggregate_metrics(
    metric_dicts: List[Dict[str, float]],
    prefix: str = "",
    default_output_stats: Optional[List[str]] = None,
    *,
    builtin_sum: Optional[str] = None,
) -> Dict[str, float]:
    """Task → step aggregation (training), respecting each key's ``:agg`` suffix.

    Mean keys give ``{prefix}/{name}/{stat}`` for each of *default_output_stats* (default
    ``["mean", "max", "min"]``; numpy semantics, population std); ``:sum``/``:max``/``:min``/
    ``:last`` keys give ``{prefix}/{name}/{agg}`` with the builtin reducers.
    """
    if not metric_dicts:
        return {}
    if default_output_stats is None:
        default_output_stats = ["mean", "max", "min"]
    return _native.aggregate_metrics(
        metric_dicts,
        f"{prefix}" if prefix else "",
        _stats(default_output_stats),
        _sum_mode(builtin_sum),
    )


def aggregate_eval_metrics(
    metric_dicts: List[Dict[str, float]],
    prefix: str = "",
    output_stats: Optional[List[str]] = None,
    detailed_stats: bool = False,
    *,
    builtin_sum: Optional[str] = None,
) -> Dict[str, float]:
    """Task → step aggregation (eval).

    Mean keys give only ``{prefix}/{name}`` (the mean over tasks) unless *detailed_stats*, in
    which case they give ``{prefix}/{name}/{stat}`` for *output_stats* (default
    ``["mean", "max", "min", "std"]``). Non-mean keys behave as in :func:`aggregate_metrics`.
    """
    if not metric_dicts:
        return {}
    if output_stats is None:
        output_stats = ["mean", "max", "min", "std"]
    return _native.aggregate_eval_metrics(
        metric_dicts,
        f"{prefix}" if prefix else "",
        _stats(output_stats),
        bool(detailed_stats),
        _sum_mode(builtin_sum),
    )


def aggregate_run_level_metrics(
    metric_dicts: List[Dict[str, float]],
    *,
    builtin_sum: Optional[str] = None,
) -> Dict[str, float]:
    """Experience → run aggregation; output keys are the canonical keys (suffix kept)."""
    if not metric_dicts:
        return {}
    return _native.aggregate_run_level_metrics(metric_dicts, _sum_mode(builtin_sum))


def _fast_reducers(reduce_fns: Any) -> Optional[List[str]]:
    names = []
    for fn in reduce_fns:
        if fn is builtins.max:
            names.append("max")
        elif fn is builtins.min:
            names.append("min")
        else:
            return None
    return names


def _is_count(x: Any, low: int, high: int) -> bool:
    return type(x) is int and low <= x <= high


def bootstrap_metric(
    data: List[Any],
    subset_size: int,
    reduce_fns: List[Callable[[List[Any]], float]],
    n_bootstrap: int = 1000,
    seed: int = 42,
) -> List[Tuple[float, float]]:
    """Estimate metric statistics with bootstrap resampling, exactly as Trinity does.

    Same draws (MT19937 seeded with *seed*, ``choice(len(data), subset_size, replace=True)``
    per resample) and same ``(np.mean, np.std)`` of each reducer's results, but with a private
    generator: the global ``numpy.random`` state is left alone. Float data with the builtin
    ``max`` / ``min`` reducers run in Rust; anything else runs the same loop in Python.
    """
    names = _fast_reducers(reduce_fns) if isinstance(reduce_fns, (list, tuple)) else None
    if (
        names
        and isinstance(data, (list, tuple))
        and 1 <= len(data) <= 2**32
        and _is_count(subset_size, 1, 2**31)
        and _is_count(n_bootstrap, 1, 2**31)
        and _is_count(seed, 0, 2**32 - 1)
        and subset_size * n_bootstrap <= 2**31
        and all(type(x) is float for x in data)
    ):
        return [tuple(r) for r in _native.bootstrap_metric(list(data), subset_size, names, n_bootstrap, seed)]

    import numpy as np

    rng = np.random.RandomState(seed)  # legacy seeding, identical to np.random.seed(seed)
    bootstrap_metric_lists: List[List[Any]] = [[] for _ in range(len(reduce_fns))]
    for _ in range(n_bootstrap):
        bootstrap_idxs = rng.choice(len(data), size=subset_size, replace=True)
        bootstrap_data = [data[i] for i in bootstrap_idxs]
        for i, reduce_fn in enumerate(reduce_fns):
            bootstrap_metric_lists[i].append(reduce_fn(bootstrap_data))
    return [(float(np.mean(lst)), float(np.std(lst))) for lst in bootstrap_metric_lists]


def calculate_task_level_metrics(
    metrics: List[Dict[str, float]],
    is_eval: bool,
    *,
    estimator: str = "bootstrap",
    builtin_sum: Optional[str] = None,
) -> Dict[str, float]:
    """Run → task aggregation.

    Training: the same as :func:`aggregate_run_level_metrics`. Eval: for each mean key with
    ``n`` runs, ``key/mean@n``, ``key/std@n`` and, when ``n >= 2``, ``key/best@k`` and
    ``key/worst@k`` for ``k`` in 2, 4, 8, ... < n and n. ``estimator="bootstrap"`` (default)
    reproduces Trinity's 1000-resample bootstrap bit for bit; ``estimator="exact"`` gives the
    exact expectation of the max / min of ``k`` draws with replacement.
    """
    if not metrics:
        return {}
    return _native.calculate_task_level_metrics(
        metrics, bool(is_eval), _sum_mode(builtin_sum), estimator
    )


def exact_best_worst(data: Sequence[float], k: int) -> Tuple[float, float]:
    """``(E[max], E[min])`` of ``k`` draws with replacement from *data* (order statistics)."""
    return _native.expected_max_min([float(x) for x in data], k)


def per_token_ms(seconds: float, tokens: int) -> float:
    """``seconds * 1000 / tokens``, the ``timing_per_token_ms/{section}`` value."""
    return _native.per_token_ms(seconds, tokens)
