"""Differential test: `tally.metrics` against the real `trinity.utils.metrics` (trinity-rft 0.6.0).

Every generated case calls the same function of both modules on the same input and requires
identical results: the same keys in the same order, Python floats whose bits are equal (all
NaNs count as equal: numpy may return a canonical NaN), and the same exception type when
Trinity raises. The cases cover every function, every suffix (valid, invalid, nested), repeat
counts 1-16 (and sub-task splits), NaN / ±inf / ±0.0 / bool / int / str / None / np.float32 /
np.float64 values, key collisions, detailed_stats on and off, and the whole
experience → run → task → step pipeline (the rules: docs/contract/rft.md).

Trinity is installed with `pip install --no-deps trinity-rft==0.6.0` (its module needs only
numpy). Outside CI the test skips when it is missing; in CI (CI=true) a missing Trinity fails.
TALLY_TRINITY_CASES scales the number of generated cases per family (default 1).
"""

from __future__ import annotations

import math
import os
import random
import struct
import sys
import warnings

import numpy as np
import pytest

if os.environ.get("CI"):
    import trinity.utils.metrics as trinity  # noqa: E402  (must be installed in CI)
else:
    trinity = pytest.importorskip("trinity.utils.metrics")

if os.environ.get("CI"):
    import tally.metrics as tally  # noqa: E402
else:
    tally = pytest.importorskip("tally.metrics")

SCALE = int(os.environ.get("TALLY_TRINITY_CASES", "1"))

# ---------------------------------------------------------------------------------------------
# comparison


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def same_float(got, want) -> bool:
    if type(got) is not float or type(want) is not float:
        return False
    if math.isnan(want):
        return math.isnan(got)
    return bits(got) == bits(want)


#: Keys where only the sign of a zero differed: np.max/np.min of arrays mixing 0.0 and -0.0,
#: whose answer depends on numpy's SIMD lane layout (tally documents this one exception).
ZERO_SIGN_ONLY: list = []


def assert_same(got, want, ctx="", zero_sign_keys=()):
    """Bit-identical dict (keys, order, values) or list of (mean, std) tuples."""
    if isinstance(want, dict):
        assert type(got) is dict, ctx
        assert list(got) == list(want), f"{ctx}: key order\n got  {list(got)}\n want {list(want)}"
        for k, w in want.items():
            g = got[k]
            if same_float(g, w):
                continue
            if k in zero_sign_keys and g == w == 0.0:
                ZERO_SIGN_ONLY.append((ctx, k))
                continue
            raise AssertionError(f"{ctx}: {k!r}: got {g!r} ({type(g).__name__}), want {w!r} ({type(w).__name__})")
    elif isinstance(want, list):
        assert type(got) is list and len(got) == len(want), ctx
        for g, w in zip(got, want):
            assert type(g) is tuple and len(g) == 2, ctx
            assert same_float(g[0], w[0]) and same_float(g[1], w[1]), f"{ctx}: got {g}, want {w}"
    else:
        assert got == want and type(got) is type(want), ctx


def call_both(name, *args, **kwargs):
    """Run trinity's and tally's `name`; both must return, or both raise the same type."""
    results = []
    for mod in (trinity, tally):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # numpy's mean of empty / nan
                results.append(("ok", getattr(mod, name)(*args, **kwargs)))
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            results.append(("err", type(e)))
    (tk, tv), (yk, yv) = results
    assert tk == yk, f"{name}: trinity {tk} {tv!r}, tally {yk} {yv!r}"
    if tk == "err":
        assert yv is tv, f"{name}: trinity raised {tv}, tally raised {yv}"
        return None, None
    return yv, tv


def mixed_zero_keys(dicts, prefix):
    """Step-level keys whose np.max/np.min input mixes +0.0 and -0.0."""
    seen = {}
    for d in dicts:
        for k, v in d.items():
            if isinstance(v, (int, float)) and float(v) == 0.0:
                name, _ = trinity.parse_metric_key(k)
                seen.setdefault(name, set()).add(math.copysign(1.0, float(v)))
    p = f"{prefix}/" if prefix else ""
    return {f"{p}{n}/{s}" for n, signs in seen.items() if len(signs) == 2 for s in ("max", "min")}


# ---------------------------------------------------------------------------------------------
# generators

BASES = [
    "accuracy",
    "reward",
    "format_score",
    "response_length",
    "time/run_execution",
    "time/task_execution",
    "my_time/run_execution_total",
    "worker/time/task_execution",
    "ns:metric",
    "rollout/x",
    "",
]
GOOD_SUFFIXES = ["", ":mean", ":sum", ":max", ":min", ":last"]
BAD_SUFFIXES = [":MEAN", ":Sum", ": sum", ":sum ", ":", ":sum:", "::sum", ":sum:mean", ":unknown", ":max:last"]
PREFIXES = ["", "rollout", "eval/gsm8k", "bench/math-500", "experience_pipeline/group_advantages"]
STAT_LISTS = [None, None, ["mean"], ["std", "mean"], ["max", "bogus", "max", "std"], [], ["min", "median"]]


def key(rng: random.Random, bad_rate=0.15) -> str:
    suffixes = BAD_SUFFIXES if rng.random() < bad_rate else GOOD_SUFFIXES
    return rng.choice(BASES) + rng.choice(suffixes)


def value(rng: random.Random, style: str):
    r = rng.random()
    if style == "clean":
        return rng.choice([float(rng.random() < 0.5), rng.random(), round(rng.random(), 2)])
    # "wild": everything Trinity's filter and numerics can meet
    if r < 0.35:
        return rng.random()
    if r < 0.45:
        return float(rng.randint(0, 1))
    if r < 0.50:
        return rng.choice([True, False])
    if r < 0.55:
        return rng.randint(-5, 2000)
    if r < 0.60:
        return rng.choice([float("nan"), float("inf"), float("-inf")])
    if r < 0.65:
        return rng.choice([0.0, -0.0])
    if r < 0.70:
        return rng.choice([1e16, -1e16, 1e308, -1e308, 5e-324, 1e-300, 2.0**53 + 1])
    if r < 0.75:
        return rng.choice(["0.5", "nan", "", None, [1.0], {"a": 1}, (1,)])
    if r < 0.80:
        return rng.choice([np.float32(0.25), np.int64(3), np.float64(0.1), np.float64("nan")])
    return rng.uniform(-1e3, 1e3)


def metric_dict(rng, keys, style, p_missing=0.1):
    d = {}
    for k in keys:
        if rng.random() >= p_missing:
            d[k] = value(rng, style)
    return d


def eval_task(rng, n_runs, style, n_keys=None, split=False):
    """`task.metrics` as the scheduler builds it: run dicts, then {"time/task_execution": s}
    after each sub-task."""
    n_keys = n_keys or rng.randint(1, 5)
    keys = [key(rng) for _ in range(n_keys)] + ["time/run_execution"]
    runs = []
    sub = max(1, n_runs // rng.randint(1, 3)) if split else n_runs
    for i in range(n_runs):
        runs.append(metric_dict(rng, keys, style, p_missing=0.1 if style == "wild" else 0.0))
        if (i + 1) % sub == 0 or i == n_runs - 1:
            runs.append({"time/task_execution": rng.uniform(0.1, 30.0)})
    return runs


CASES = []


def case(family, count):
    def register(fn):
        for i in range(count * SCALE):
            CASES.append(pytest.param(fn, i, id=f"{family}-{i}"))
        return fn

    return register


# ---------------------------------------------------------------------------------------------
# families (≥ 500 cases in all)


@case("parse_metric_key", 60)
def c_parse(i):
    rng = random.Random(1000 + i)
    keys = [key(rng, bad_rate=0.5) for _ in range(8)] + ["", ":", ":sum", "a::sum", "x:sum:mean", "a:sum:"]
    for k in keys:
        got, want = call_both("parse_metric_key", k)
        assert got[0] == want[0] and got[1].value == want[1].value, k
        assert type(got[1]).__name__ == "AggType" and got[1] == want[1], k


@case("run_level", 70)
def c_run_level(i):
    rng = random.Random(2000 + i)
    style = "wild" if i % 2 else "clean"
    keys = [key(rng) for _ in range(rng.randint(1, 6))]
    dicts = [metric_dict(rng, keys, style) for _ in range(rng.randint(0, 12))]
    got, want = call_both("aggregate_run_level_metrics", dicts)
    assert_same(got, want, f"run_level {dicts}")


@case("task_level_eval", 130)
def c_task_eval(i):
    rng = random.Random(3000 + i)
    n_runs = i % 16 + 1  # every repeat count 1..16
    style = "wild" if i % 3 == 0 else "clean"
    metrics = eval_task(rng, n_runs, style, split=i % 5 == 0)
    got, want = call_both("calculate_task_level_metrics", metrics, True)
    assert_same(got, want, f"task eval {metrics}")


@case("task_level_train", 40)
def c_task_train(i):
    rng = random.Random(4000 + i)
    metrics = eval_task(rng, i % 16 + 1, "wild" if i % 2 else "clean")
    got, want = call_both("calculate_task_level_metrics", metrics, False)
    assert_same(got, want, f"task train {metrics}")


@case("step_train", 60)
def c_step_train(i):
    rng = random.Random(5000 + i)
    style = "wild" if i % 2 else "clean"
    keys = [key(rng) for _ in range(rng.randint(1, 6))]
    dicts = [metric_dict(rng, keys, style) for _ in range(rng.randint(0, 40))]
    prefix = rng.choice(PREFIXES)
    stats = rng.choice(STAT_LISTS)
    got, want = call_both("aggregate_metrics", dicts, prefix=prefix, default_output_stats=stats)
    assert_same(got, want, f"step train {prefix} {stats} {dicts}", mixed_zero_keys(dicts, prefix))


@case("step_eval", 80)
def c_step_eval(i):
    rng = random.Random(6000 + i)
    style = "wild" if i % 2 else "clean"
    keys = [key(rng) for _ in range(rng.randint(1, 6))]
    dicts = [metric_dict(rng, keys, style) for _ in range(rng.randint(0, 40))]
    prefix = rng.choice(PREFIXES)
    stats = rng.choice(STAT_LISTS)
    detailed = i % 2 == 0
    got, want = call_both("aggregate_eval_metrics", dicts, prefix, stats, detailed)
    assert_same(got, want, f"step eval {prefix} {stats} {detailed} {dicts}", mixed_zero_keys(dicts, prefix))


@case("pipeline", 50)
def c_pipeline(i):
    """experience → run → task → step, each level fed its own module's previous output."""
    rng = random.Random(7000 + i)
    is_eval = i % 3 != 0
    style = "wild" if i % 4 == 0 else "clean"
    keys = [key(rng, bad_rate=0.05) for _ in range(rng.randint(1, 4))]
    repeat = rng.randint(1, 16)
    tasks_t, tasks_y = [], []
    for _ in range(rng.randint(1, 6)):
        runs_t, runs_y = [], []
        for _ in range(repeat):
            exps = [metric_dict(rng, keys, style) for _ in range(rng.randint(1, 4))]
            got, want = call_both("aggregate_run_level_metrics", [e for e in exps if e])
            assert_same(got, want, f"pipeline run {exps}")
            if want is None:
                return
            want["time/run_execution"] = got["time/run_execution"] = rng.uniform(0.1, 5.0)
            runs_t.append(want)
            runs_y.append(got)
        t = rng.uniform(1.0, 60.0)
        runs_t.append({"time/task_execution": t})
        runs_y.append({"time/task_execution": t})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = trinity.calculate_task_level_metrics(runs_t, is_eval)
        got = tally.calculate_task_level_metrics(runs_y, is_eval)
        assert_same(got, want, f"pipeline task {runs_t}")
        tasks_t.append(want)
        tasks_y.append(got)
    if is_eval:
        detailed = i % 2 == 0
        got, want = call_both("aggregate_eval_metrics", tasks_y, prefix="eval/dummy", detailed_stats=detailed)
        _, want = call_both("aggregate_eval_metrics", tasks_t, prefix="eval/dummy", detailed_stats=detailed)
    else:
        got, _ = call_both("aggregate_metrics", tasks_y, prefix="rollout")
        _, want = call_both("aggregate_metrics", tasks_t, prefix="rollout")
    assert_same(got, want, f"pipeline step {tasks_t}", mixed_zero_keys(tasks_t, "eval/dummy" if is_eval else "rollout"))


def fresh(text: str) -> str:
    """An equal str that is a different object (dict keys built at run time, not literals)."""
    return "".join([text[:1], text[1:]]) if text else str()


class Items:
    """A mapping that is not a dict: only `.items()`, as Trinity's loop uses."""

    def __init__(self, pairs):
        self.pairs = pairs

    def items(self):
        return iter(self.pairs)


@case("key_shapes", 60)
def c_key_shapes(i):
    """The train step with keys as runners build them: the same key objects in every run, or
    equal text in fresh objects, in changing order, with skipped values, `a:mean` before `a`,
    and non-dict mappings; task dicts then go to the step level (docs/contract/rft.md "Keys
    parsed once")."""
    rng = random.Random(9000 + i)
    bases = [key(rng, bad_rate=0.1) for _ in range(rng.randint(1, 9))]
    bases += [b + ":mean" for b in bases[: rng.randint(0, 2)]]  # `a:mean` beside `a`
    rng.shuffle(bases)
    tasks = []
    for _ in range(rng.randint(1, 12)):
        runs = []
        for _ in range(rng.randint(1, 17)):
            keys = list(bases)
            if rng.random() < 0.3:
                rng.shuffle(keys)
            if rng.random() < 0.3:
                keys = [fresh(k) for k in keys]
            pairs = [(k, value(rng, "wild" if i % 2 else "clean")) for k in keys if rng.random() > 0.1]
            runs.append(Items(pairs) if rng.random() < 0.1 else dict(pairs))
        runs.append({"time/task_execution": rng.uniform(0.1, 30.0)})
        tasks.append(runs)
    per_task = []
    for runs in tasks:
        got, want = call_both("calculate_task_level_metrics", runs, False)
        if want is None:
            return
        assert_same(got, want, f"key shapes task {[getattr(r, 'pairs', r) for r in runs]}")
        per_task.append(got)
    got, want = call_both("aggregate_metrics", per_task, prefix="rollout")
    assert_same(got, want, f"key shapes step {per_task}", mixed_zero_keys(per_task, "rollout"))


@case("bootstrap_metric", 40)
def c_bootstrap(i):
    rng = random.Random(8000 + i)
    n = rng.randint(1, 20)
    data = [value(rng, "clean" if i % 2 else "wild") for _ in range(n)]
    if i % 2 == 0:
        data = [float(x) if isinstance(x, (int, float)) else 0.5 for x in data]
    reducers = rng.choice([[max, min], [min], [max, max, min], [np.max], [max, lambda s: sum(s) / len(s)]])
    k = rng.randint(1, 20)
    n_boot = rng.choice([1, 7, 1000, 1000])
    seed = rng.choice([42, 42, 0, 7, 2**32 - 1])
    if not all(isinstance(x, (int, float)) for x in data):
        data = [0.25 if not isinstance(x, (int, float)) else x for x in data]
    got, want = call_both("bootstrap_metric", data=data, subset_size=k, reduce_fns=reducers, n_bootstrap=n_boot, seed=seed)
    assert_same(got, want, f"bootstrap {data} k={k} n={n_boot} seed={seed}")


ADVERSARIAL = [
    # docs/contract/rft.md "Collisions and edge cases": collisions, first-seen agg, odd keys,
    # NaN placement, signed zero, inf
    ("aggregate_metrics", ([{"acc": 1.0, "acc:max": 5.0}, {"acc": 3.0}],), {"prefix": "rollout"}),
    ("aggregate_metrics", ([{"acc:max": 5.0, "acc": 1.0}, {"acc": 3.0}],), {"prefix": "rollout"}),
    ("aggregate_run_level_metrics", ([{"x:sum": 2}, {"x:sum:mean": 1}, {"x:sum": 4}],), {}),
    ("aggregate_run_level_metrics", ([{"x:sum:mean": 1}, {"x:sum": 2}, {"x:sum": 4}],), {}),
    ("calculate_task_level_metrics", ([{"x:sum:mean": 1}, {"x:sum": 2}, {"x:sum": 4}], True), {}),
    ("calculate_task_level_metrics", ([{"x:sum": 2}, {"x:sum:mean": 1}, {"x:sum": 4}], True), {}),
    ("aggregate_metrics", ([{":sum": 1.0, "": 2.0}, {":sum": 3.0, "": 4.0}],), {"prefix": "rollout"}),
    ("calculate_task_level_metrics", ([{"": 1.0}, {"": 0.0}], True), {}),
    ("aggregate_metrics", ([{"m:max": float("nan")}, {"m:max": 1.0}],), {}),
    ("aggregate_metrics", ([{"m:max": 1.0}, {"m:max": float("nan")}, {"m:max": 3.0}],), {}),
    ("aggregate_metrics", ([{"m:sum": 1.0}, {"m:sum": float("nan")}],), {}),
    ("aggregate_metrics", ([{"m:max": 0.0}, {"m:max": -0.0}, {"m:min": -0.0}, {"m:min": 0.0}],), {}),
    ("aggregate_eval_metrics", ([{"a": 0.0}, {"a": -0.0}],), {"detailed_stats": True}),
    ("aggregate_eval_metrics", ([{"a": -0.0}, {"a": 0.0}],), {"detailed_stats": True}),
    ("aggregate_eval_metrics", ([{"a": float("inf")}, {"a": float("-inf")}],), {"detailed_stats": True}),
    ("aggregate_eval_metrics", ([{"a": float("inf")}, {"a": float("inf")}],), {"detailed_stats": True}),
    ("calculate_task_level_metrics", ([{"a": 0.0}, {"a": 1.0}], True), {}),
    ("calculate_task_level_metrics", ([{"a": 1.0}, {"a": 0.0}], True), {}),
    ("calculate_task_level_metrics", ([{"a": 0.7}] * 5, True), {}),
    ("calculate_task_level_metrics", ([{"a": 0.8}, {"a": 0.9}], True), {}),
    ("calculate_task_level_metrics", ([{"a": float("nan")}] + [{"a": 1.0}] * 7, True), {}),
    ("calculate_task_level_metrics", ([{"a": 1.0}] * 7 + [{"a": float("nan")}], True), {}),
    ("calculate_task_level_metrics", ([{"a": 1.0}] * 3 + [{"a": float("inf")}, {"a": float("-inf")}], True), {}),
    ("aggregate_run_level_metrics", ([{"a": 1e16}, {"a": 1.0}, {"a": -1e16}],), {}),
    ("aggregate_run_level_metrics", ([{"a:sum": 1e308}, {"a:sum": 1e308}, {"a:sum": -1e308}],), {}),
    ("aggregate_run_level_metrics", ([{"a": -0.0}],), {}),
    ("aggregate_metrics", ([{"a": -0.0}],), {}),
    ("aggregate_metrics", ([],), {}),
    ("aggregate_metrics", ([{}, {}],), {"prefix": "rollout"}),
    ("aggregate_eval_metrics", ([],), {}),
    ("aggregate_run_level_metrics", ([],), {}),
    ("calculate_task_level_metrics", ([], True), {}),
    ("calculate_task_level_metrics", ([{}], True), {}),
    ("aggregate_metrics", ([{"a": 10**400}],), {}),  # OverflowError in both
    ("calculate_task_level_metrics", ([{"a": 10**400}], False), {}),
    ("aggregate_metrics", ([{1: 1.0}],), {}),  # TypeError in both
    ("aggregate_metrics", ([{1: "x", "a": 1.0}],), {}),  # non-numeric value: key never parsed
    ("aggregate_metrics", ([{1: 10**400}],), {}),  # TypeError: the key is parsed before float()
    ("calculate_task_level_metrics", ([{"a": 1.0}, {2.5: 10**400}], False), {}),
    ("aggregate_metrics", ([{"a": True, "b": False}, {"a": 2, "b": np.float32(1)}],), {}),
    ("bootstrap_metric", ([0.5, 0.25], 2, [max, min]), {"seed": 2**32}),  # ValueError
    ("bootstrap_metric", ([0.5, 0.25], 2, [max, min]), {"seed": -1}),
    ("bootstrap_metric", ([], 2, [max, min]), {}),
    ("bootstrap_metric", ([0.5], 0, [max]), {}),
    ("bootstrap_metric", ([0.5, 1.5], 3, [max, min]), {"n_bootstrap": 0}),
    ("bootstrap_metric", ([1.0] * 300, 300, [max, min]), {}),
    ("bootstrap_metric", ([float(i) for i in range(300)], 5, [max, min]), {"seed": 123}),
    ("aggregate_eval_metrics", ([{"a": (i * 7919 % 1000) / 1000.0} for i in range(20000)],), {"detailed_stats": True}),
    ("aggregate_metrics", ([{"a": 1e16 if i % 3 == 0 else -1e16 + i} for i in range(4099)],), {}),
]


@pytest.mark.parametrize("name,args,kwargs", ADVERSARIAL, ids=[f"edge-{i}-{a[0]}" for i, a in enumerate(ADVERSARIAL)])
def test_edge_cases_match_trinity(name, args, kwargs):
    got, want = call_both(name, *args, **kwargs)
    assert_same(got, want, f"{name}{args}{kwargs}")


@pytest.mark.parametrize("fn,i", CASES)
def test_generated_case_matches_trinity(fn, i):
    fn(i)


def test_generated_case_count_is_at_least_500():
    assert len(CASES) + len(ADVERSARIAL) >= 500


def test_zero_sign_exceptions_are_rare():
    # Only np.max/np.min of inputs mixing +0.0 and -0.0 may differ, and only in the zero's sign.
    assert len(ZERO_SIGN_ONLY) <= 5, ZERO_SIGN_ONLY


# ---------------------------------------------------------------------------------------------
# behaviour beyond Trinity


def test_global_numpy_random_state_is_untouched():
    # Unlike Trinity, tally never touches the global numpy.random state
    # (docs/contract/rft.md "The bootstrap").
    np.random.seed(7)
    before = np.random.get_state()
    tally.calculate_task_level_metrics([{"a": 0.1}, {"a": 0.9}, {"a": 0.5}], True)
    tally.bootstrap_metric([0.1, 0.2], 2, [max, min])
    tally.bootstrap_metric([0.1, 0.2], 2, [np.max])  # the Python fallback path
    after = np.random.get_state()
    assert before[0] == after[0] and (before[1] == after[1]).all() and before[2:] == after[2:]


def cpython312_sum(values):
    """CPython 3.12's float sum (Objects/bltinmodule.c), transliterated."""
    s = 0 + values[0]
    c = 0.0
    for x in values[1:]:
        t = s + x
        if abs(s) >= abs(x):
            c += (s - t) + x
        else:
            c += (x - t) + s
        s = t
    if c and math.isfinite(c):
        s += c
    return s


def left_fold_sum(values):
    s = 0 + values[0]
    for x in values[1:]:
        s += x
    return s


@pytest.mark.parametrize("mode,ref", [("neumaier", cpython312_sum), ("left_fold", left_fold_sum)])
def test_builtin_sum_mode_is_selectable_and_exact(mode, ref):
    # The builtin sum folds left up to 3.11 and compensates from 3.12; the running interpreter's
    # behaviour is the default (docs/contract/rft.md "Numerics").
    rng = random.Random(99)
    pools = [[1e16, 1.0, -1e16], [0.1] * 10, [1e308, 1e308, -1e308], [-0.0], [float("inf"), 1.0]]
    pools += [[rng.choice([1e16, -1e16, 1.0, 0.1, rng.random()]) for _ in range(rng.randint(1, 30))] for _ in range(200)]
    for vals in pools:
        got = tally.aggregate_run_level_metrics([{"s:sum": v} for v in vals], builtin_sum=mode)["s:sum"]
        assert same_float(got, ref(vals)), (mode, vals, got, ref(vals))
    native = "neumaier" if sys.version_info >= (3, 12) else "left_fold"
    assert tally.BUILTIN_SUM == native
    assert tally.aggregate_run_level_metrics([{"a": 1e16}, {"a": 1.0}, {"a": -1e16}]) == {
        "a": sum([1e16, 1.0, -1e16]) / 3
    }


def test_exact_estimator_is_order_free_and_noise_free():
    # estimator="exact" = E[max/min of k draws with replacement]; [0,1] → 0.75 / 0.25, where
    # Trinity's bootstrap gives 0.754 for [0,1] and 0.77 for [1,0] (docs/contract/rft.md
    # "The exact estimator").
    a = tally.calculate_task_level_metrics([{"a": 0.0}, {"a": 1.0}], True, estimator="exact")
    b = tally.calculate_task_level_metrics([{"a": 1.0}, {"a": 0.0}], True, estimator="exact")
    assert a == b
    assert a["a/best@2"] == 0.75 and a["a/worst@2"] == 0.25
    boot = tally.calculate_task_level_metrics([{"a": 0.0}, {"a": 1.0}], True)
    assert list(boot) == list(a)  # same keys, same order
    assert boot["a/best@2"] == 0.754


def test_exact_estimator_lies_within_bootstrap_error():
    rng = random.Random(5)
    for _ in range(50):
        n = rng.randint(2, 16)
        data = [rng.random() for _ in range(n)]
        for k in (2, n):
            (bmax, smax), (bmin, smin) = tally.bootstrap_metric(data, k, [max, min])
            emax, emin = tally.exact_best_worst(data, k)
            assert abs(emax - bmax) <= 5 * smax / math.sqrt(1000) + 1e-12
            assert abs(emin - bmin) <= 5 * smin / math.sqrt(1000) + 1e-12


class Mutating(float):
    """A float whose `float()` changes the dict being read (a Python `__float__` may)."""

    def __float__(self):
        self.target.clear()
        self.target.update({f"k{i}": 1.0 for i in range(9)})
        return 2.0


@pytest.mark.parametrize("position", ["first", "last"])
def test_dict_changed_during_reading_raises_like_trinity(position):
    # Trinity's loop raises RuntimeError from its dict iterator; tally checks the size after
    # every value whose conversion ran Python code, and never reads a changed dict on.
    def case():
        v = Mutating(1.0)
        d = {"a": v, "b": 2.0} if position == "first" else {"b": 2.0, "a": v}
        v.target = d
        return [d]

    for fn in ("aggregate_run_level_metrics", "aggregate_metrics", "aggregate_eval_metrics"):
        for mod in (trinity, tally):
            with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
                getattr(mod, fn)(case())


def test_run_level_output_keys_are_the_input_key_objects():
    # A task dict's keys are the run dicts' own str objects where the text is the same, so the
    # step level meets each key as one object again (docs/contract/rft.md "Keys parsed once");
    # `a:mean` becomes a new `a`.
    acc, tok, am = fresh("accuracy"), fresh("tokens:sum"), fresh("len:mean")
    runs = [{acc: 1.0, tok: 3, am: 2.0}, {acc: 0.0, tok: 4, am: 4.0}, {"time/task_execution": 2.5}]
    task = tally.calculate_task_level_metrics(runs, False)
    assert task == {"accuracy": 0.5, "tokens:sum": 7.0, "len": 3.0, "time/task_execution": 2.5}
    out = list(task)
    assert out[0] is acc and out[1] is tok and out[3] is next(iter(runs[2]))
    assert out[2] == "len" and out[2] is not am
    # The first key object with the canonical text wins, even after a `:mean` spelling.
    a1, a2 = fresh("ab"), fresh("ab")
    assert a1 is not a2
    task = tally.aggregate_run_level_metrics([{fresh("ab:mean"): 1.0}, {a1: 2.0}, {a2: 6.0}])
    assert task == {"ab": 3.0} and next(iter(task)) is a1


class Tag(str):
    """A `str` subclass key (as a `(str, Enum)` member is)."""


@pytest.mark.parametrize(
    "runs",
    [
        [{Tag("acc"): 1.0}, {Tag("acc"): 0.0}],  # Trinity keeps the first key object
        [{Tag("tok:sum"): 1.0}, {Tag("tok:sum"): 2.0}],  # Trinity writes a new str
        [{Tag("acc:mean"): 1.0}, {Tag("acc"): 3.0}],  # a new str from the split
        [{"acc": 1.0}, {Tag("acc"): 3.0}],
    ],
    ids=["mean", "sum", "mean-suffix-first", "str-first"],
)
def test_str_subclass_keys_come_back_as_trinity_returns_them(runs):
    # Output keys reuse input key objects only where that is invisible (an exact str) or where
    # Trinity returns the input object itself (docs/contract/rft.md "Keys parsed once").
    want = trinity.calculate_task_level_metrics(runs, False)
    got = tally.calculate_task_level_metrics(runs, False)
    assert_same(got, want, f"{runs}")
    assert [type(k) for k in got] == [type(k) for k in want]


def test_estimator_name_is_validated():
    with pytest.raises(ValueError, match="estimator must be 'bootstrap' or 'exact'"):
        tally.calculate_task_level_metrics([{"a": 1.0}], True, estimator="mc")
    # Names built at run time (not the interned literals) are read by their text.
    exact, left = fresh("exact"), fresh("left_fold")
    literal = "exact"
    assert exact == literal and exact is not literal
    task = tally.calculate_task_level_metrics([{"a": 0.0}, {"a": 1.0}], True, estimator=exact, builtin_sum=left)
    assert task["a/best@2"] == 0.75
    assert tally.aggregate_run_level_metrics([{"a": 1e16}, {"a": 1.0}, {"a": -1e16}], builtin_sum=left) == {"a": 0.0}


def test_per_token_ms_matches_verl_expression():
    # `timing_raw[name] * 1000 / num_tokens` (docs/contract/rft.md "Per-token timings")
    for s, t in [(0.1, 3), (1.5, 4096), (12.345, 7)]:
        assert same_float(tally.per_token_ms(s, t), s * 1000 / t)
    with pytest.raises(ZeroDivisionError):
        tally.per_token_ms(1.0, 0)
