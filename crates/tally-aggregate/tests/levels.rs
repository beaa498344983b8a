//! Pins the four pipeline levels: keys, key order, collisions, filters (`docs/contract/rft.md`
//! "Numeric values" to "Collisions and edge cases").

use tally_aggregate::{
    aggregate_eval_metrics, aggregate_metrics, aggregate_run_level_metrics,
    calculate_task_level_metrics, subset_sizes, BuiltinSum, Estimator, MetricMap, TaskOptions,
    Value,
};

type Dict = Vec<(&'static str, Value)>;

fn d(pairs: &[(&'static str, f64)]) -> Dict {
    pairs.iter().map(|&(k, v)| (k, Value::Number(v))).collect()
}

fn keys(m: &MetricMap) -> Vec<&str> {
    m.keys().map(String::as_str).collect()
}

const EVAL: TaskOptions = TaskOptions {
    builtin_sum: BuiltinSum::LeftFold,
    estimator: Estimator::Bootstrap,
};

#[test]
fn eval_task_level_writes_mean_std_best_worst_in_order() {
    // Key order mean@n, std@n, best@2, worst@2, …, best@n, worst@n; `time/*`
    // keys keep their name with the builtin mean; values from trinity-rft 0.6.0.
    let task = [
        d(&[("acc", 0.1), ("time/run_execution", 1.0)]),
        d(&[("acc", 0.5), ("time/run_execution", 2.0)]),
        d(&[("acc", 0.9)]),
        d(&[("acc", 0.3)]),
        d(&[("time/task_execution", 4.0)]),
    ];
    let m = calculate_task_level_metrics(&task, true, EVAL);
    assert_eq!(
        keys(&m),
        [
            "acc/mean@4",
            "acc/std@4",
            "acc/best@2",
            "acc/worst@2",
            "acc/best@4",
            "acc/worst@4",
            "time/run_execution",
            "time/task_execution"
        ]
    );
    assert_eq!(m["acc/mean@4"], 0.45);
    assert_eq!(m["acc/std@4"], 0.2958039891549808);
    assert_eq!(m["acc/best@2"], 0.5976);
    assert_eq!(m["acc/worst@2"], 0.29059999999999997);
    assert_eq!(m["acc/best@4"], 0.7474000000000001);
    assert_eq!(m["acc/worst@4"], 0.17820000000000003);
    assert_eq!(m["time/run_execution"], 1.5);
}

#[test]
fn one_run_gives_mean_and_zero_std_only_and_missing_keys_shrink_n() {
    // n counts the numeric values of that key; n ≤ 1 stops after std@1 (`docs/contract/rft.md`
    // "Run → task").
    let task = [d(&[("a", 1.0), ("b", 2.0)]), d(&[("a", 0.0)])];
    let m = calculate_task_level_metrics(&task, true, EVAL);
    assert_eq!(
        keys(&m),
        [
            "a/mean@2",
            "a/std@2",
            "a/best@2",
            "a/worst@2",
            "b/mean@1",
            "b/std@1"
        ]
    );
    assert_eq!(m["b/std@1"], 0.0);
    assert_eq!(m["a/best@2"], 0.77, "[1, 0] → 0.77 (trinity-rft 0.6.0)");
    assert_eq!(m["a/worst@2"], 0.246);
}

#[test]
fn subset_sizes_are_powers_of_two_below_n_then_n() {
    // Powers of two below n, then n: 2→[2], 3→[2,3], 5→[2,4,5], 8→[2,4,8], 12→[2,4,8,12].
    assert!(subset_sizes(1).is_empty());
    assert_eq!(subset_sizes(2), [2]);
    assert_eq!(subset_sizes(3), [2, 3]);
    assert_eq!(subset_sizes(4), [2, 4]);
    assert_eq!(subset_sizes(5), [2, 4, 5]);
    assert_eq!(subset_sizes(8), [2, 4, 8]);
    assert_eq!(subset_sizes(12), [2, 4, 8, 12]);
    assert_eq!(subset_sizes(16), [2, 4, 8, 16]);
}

#[test]
fn bools_count_and_strings_and_other_values_are_dropped() {
    // Trinity's `isinstance(value, (int, float))` passes bools; str/None are skipped
    // (`docs/contract/rft.md` "Numeric values").
    let task: Vec<Dict> = vec![
        d(&[("a", 1.0), ("b", 2.0)]),
        vec![
            ("a", Value::Number(0.0)),
            ("flag", Value::Bool(true)),
            ("s", Value::Str("x".into())),
            ("n", Value::Other),
        ],
        d(&[("time/task_execution", 3.0)]),
    ];
    let m = calculate_task_level_metrics(&task, true, EVAL);
    assert_eq!(
        keys(&m),
        [
            "a/mean@2",
            "a/std@2",
            "a/best@2",
            "a/worst@2",
            "b/mean@1",
            "b/std@1",
            "flag/mean@1",
            "flag/std@1",
            "time/task_execution"
        ]
    );
    assert_eq!(m["flag/mean@1"], 1.0);
}

#[test]
fn first_seen_agg_decides_a_canonical_key_collision() {
    // The first aggregation seen decides a merged canonical key:
    // [{"x:sum":2},{"x:sum:mean":1},{"x:sum":4}] → {"x:sum": 7.0}; swapping the
    // first two makes it a mean key with @ statistics.
    let sum_first = [
        d(&[("x:sum", 2.0)]),
        d(&[("x:sum:mean", 1.0)]),
        d(&[("x:sum", 4.0)]),
    ];
    let m = aggregate_run_level_metrics(&sum_first, BuiltinSum::LeftFold);
    assert_eq!(keys(&m), ["x:sum"]);
    assert_eq!(m["x:sum"], 7.0);
    let mean_first = [
        d(&[("x:sum:mean", 1.0)]),
        d(&[("x:sum", 2.0)]),
        d(&[("x:sum", 4.0)]),
    ];
    let m = calculate_task_level_metrics(&mean_first, true, EVAL);
    assert_eq!(m["x:sum/mean@3"], 2.3333333333333335);
    assert_eq!(m["x:sum/best@3"], 3.338);
    assert_eq!(m.len(), 6);
}

#[test]
fn step_level_collision_later_group_overwrites_in_place() {
    // `acc` and `acc:max` both write rollout/acc/max; the later group wins,
    // the key keeps its first position (Python dict semantics).
    let acc_first = [d(&[("acc", 1.0), ("acc:max", 5.0)]), d(&[("acc", 3.0)])];
    let m = aggregate_metrics(&acc_first, "rollout", None, BuiltinSum::LeftFold);
    assert_eq!(
        keys(&m),
        ["rollout/acc/mean", "rollout/acc/max", "rollout/acc/min"]
    );
    assert_eq!(m["rollout/acc/max"], 5.0);
    let max_first = [d(&[("acc:max", 5.0), ("acc", 1.0)]), d(&[("acc", 3.0)])];
    let m = aggregate_metrics(&max_first, "rollout", None, BuiltinSum::LeftFold);
    assert_eq!(
        keys(&m),
        ["rollout/acc/max", "rollout/acc/mean", "rollout/acc/min"]
    );
    assert_eq!(m["rollout/acc/max"], 3.0);
}

#[test]
fn eval_step_level_mean_only_unless_detailed_stats() {
    // detailed_stats=False writes `{prefix}/{name}` = np.mean, no /mean suffix;
    // True writes mean, max, min, std; `:sum` keys stay `{prefix}/{name}/sum` in both.
    let tasks = [
        d(&[("acc/mean@4", 0.5), ("acc/std@4", 0.1), ("tokens:sum", 3.0)]),
        d(&[("acc/mean@4", 0.7), ("acc/std@4", 0.2), ("tokens:sum", 5.0)]),
    ];
    let m = aggregate_eval_metrics(&tasks, "eval/gsm8k", None, false, BuiltinSum::LeftFold);
    assert_eq!(
        keys(&m),
        [
            "eval/gsm8k/acc/mean@4",
            "eval/gsm8k/acc/std@4",
            "eval/gsm8k/tokens/sum"
        ]
    );
    assert_eq!(m["eval/gsm8k/acc/mean@4"], 0.6);
    assert_eq!(m["eval/gsm8k/acc/std@4"], 0.15000000000000002);
    assert_eq!(m["eval/gsm8k/tokens/sum"], 8.0);
    let m = aggregate_eval_metrics(&tasks[..], "eval/gsm8k", None, true, BuiltinSum::LeftFold);
    assert_eq!(
        keys(&m)[..4],
        [
            "eval/gsm8k/acc/mean@4/mean",
            "eval/gsm8k/acc/mean@4/max",
            "eval/gsm8k/acc/mean@4/min",
            "eval/gsm8k/acc/mean@4/std"
        ]
    );
    assert_eq!(m["eval/gsm8k/acc/mean@4/std"], 0.09999999999999998);
    assert_eq!(m.len(), 9);
}

#[test]
fn odd_keys_and_empty_prefix_match_trinity() {
    // ":sum" → rollout//sum, "" → rollout//mean; an empty prefix gives
    // no leading slash; unknown stats skipped, duplicates rewrite the same key.
    let m = aggregate_metrics(
        &[d(&[(":sum", 1.0), ("", 2.0)])],
        "rollout",
        None,
        BuiltinSum::LeftFold,
    );
    assert_eq!(
        keys(&m),
        [
            "rollout//sum",
            "rollout//mean",
            "rollout//max",
            "rollout//min"
        ]
    );
    let m = aggregate_metrics(
        &[d(&[("a", 1.0)]), d(&[("a", 3.0)])],
        "",
        Some(&["std", "median", "std", "max"]),
        BuiltinSum::LeftFold,
    );
    assert_eq!(keys(&m), ["a/std", "a/max"]);
    assert_eq!(m["a/std"], 1.0);
    let m = calculate_task_level_metrics(&[d(&[("", 1.0)]), d(&[("", 0.0)])], true, EVAL);
    assert_eq!(keys(&m), ["/mean@2", "/std@2", "/best@2", "/worst@2"]);
}

#[test]
fn empty_input_gives_empty_output_everywhere() {
    // [] and [{}] → {} for every function.
    let none: [Dict; 0] = [];
    let empty = [Dict::new()];
    for input in [&none[..], &empty[..]] {
        assert!(aggregate_metrics(input, "rollout", None, BuiltinSum::LeftFold).is_empty());
        assert!(
            aggregate_eval_metrics(input, "eval/x", None, true, BuiltinSum::LeftFold).is_empty()
        );
        assert!(aggregate_run_level_metrics(input, BuiltinSum::LeftFold).is_empty());
        assert!(calculate_task_level_metrics(input, true, EVAL).is_empty());
        assert!(calculate_task_level_metrics(input, false, EVAL).is_empty());
    }
}

#[test]
fn train_task_level_is_run_level_aggregation() {
    // is_eval=False returns aggregate_run_level_metrics(metrics); suffixes kept.
    let task = [
        d(&[
            ("acc", 0.5),
            ("tokens:sum", 10.0),
            ("v:last", 1.0),
            ("p:max", 2.0),
        ]),
        d(&[
            ("acc:mean", 1.0),
            ("tokens:sum", 5.0),
            ("v:last", 2.0),
            ("p:max", 1.0),
        ]),
    ];
    let m = calculate_task_level_metrics(&task, false, EVAL);
    assert_eq!(m, aggregate_run_level_metrics(&task, BuiltinSum::LeftFold));
    assert_eq!(keys(&m), ["acc", "tokens:sum", "v:last", "p:max"]);
    assert_eq!(
        (m["acc"], m["tokens:sum"], m["v:last"], m["p:max"]),
        (0.75, 15.0, 2.0, 2.0)
    );
}

#[test]
fn builtin_sum_mode_reaches_run_level_means_and_time_keys() {
    // Run-level means, `:sum` and task-level time means use the builtin sum, whose result
    // depends on the Python version (`docs/contract/rft.md` "Numerics").
    let exps = [d(&[("a", 1e16)]), d(&[("a", 1.0)]), d(&[("a", -1e16)])];
    assert_eq!(
        aggregate_run_level_metrics(&exps, BuiltinSum::LeftFold)["a"],
        0.0
    );
    assert_eq!(
        aggregate_run_level_metrics(&exps, BuiltinSum::Neumaier)["a"],
        1.0 / 3.0
    );
    let runs = [
        d(&[("time/run_execution", 1e16)]),
        d(&[("time/run_execution", 1.0)]),
        d(&[("time/run_execution", -1e16)]),
    ];
    let opts = TaskOptions {
        builtin_sum: BuiltinSum::Neumaier,
        ..EVAL
    };
    assert_eq!(
        calculate_task_level_metrics(&runs, true, opts)["time/run_execution"],
        1.0 / 3.0
    );
}

#[test]
fn exact_estimator_keeps_keys_and_replaces_only_best_worst() {
    // estimator="exact" is E[max/min of k draws]; [0,1] → 0.75/0.25 in any order
    // (`docs/contract/rft.md` "The exact estimator").
    let opts = TaskOptions {
        estimator: Estimator::Exact,
        ..EVAL
    };
    let a = calculate_task_level_metrics(&[d(&[("a", 0.0)]), d(&[("a", 1.0)])], true, opts);
    let b = calculate_task_level_metrics(&[d(&[("a", 1.0)]), d(&[("a", 0.0)])], true, opts);
    let boot = calculate_task_level_metrics(&[d(&[("a", 0.0)]), d(&[("a", 1.0)])], true, EVAL);
    assert_eq!(a, b);
    assert_eq!(keys(&a), keys(&boot));
    assert_eq!((a["a/best@2"], a["a/worst@2"]), (0.75, 0.25));
    assert_eq!((boot["a/best@2"], boot["a/worst@2"]), (0.754, 0.23));
    assert_eq!(a["a/mean@2"], boot["a/mean@2"]);
}
