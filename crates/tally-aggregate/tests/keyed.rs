//! Numbered keys (`docs/contract/rft.md` "Keys parsed once"): equal texts under different
//! numbers (the same key in distinct Python `str` objects) group as one key, and each level
//! over numbered keys gives what the same dicts give by text.

use proptest::prelude::*;
use tally_aggregate::{
    aggregate_eval_metrics, aggregate_metrics, aggregate_run_level_metrics, eval_task_level_keyed,
    run_level_keyed, step_level_keyed, BuiltinSum, Estimator, TaskOptions, Value,
};

const VOCAB: [&str; 9] = [
    "acc",
    "acc:mean",
    "acc:max",
    "tok:sum",
    "tok:sum:mean",
    "x:last",
    "a:Sum",
    ":min",
    "",
];

/// Dicts as `(vocabulary index, copy, value)`: `copy` picks one of two numbers for the text.
fn dicts() -> impl Strategy<Value = Vec<Vec<(usize, bool, f64)>>> {
    let entry = (0..VOCAB.len(), any::<bool>(), -4.0f64..4.0);
    prop::collection::vec(prop::collection::vec(entry, 0..6), 1..8)
}

/// Dicts by text, as the text API takes them.
type ByText = Vec<Vec<(&'static str, Value)>>;

/// The same input twice: by text, and numbered with each text under two numbers.
fn both(input: &[Vec<(usize, bool, f64)>]) -> (ByText, Vec<&'static str>, Vec<(u32, f64)>) {
    let by_text = input
        .iter()
        .map(|d| {
            d.iter()
                .map(|&(i, _, x)| (VOCAB[i], Value::Number(x)))
                .collect()
        })
        .collect();
    let keys: Vec<&str> = VOCAB.iter().chain(VOCAB.iter()).copied().collect();
    let entries = input
        .iter()
        .flatten()
        .map(|&(i, copy, x)| ((i + if copy { VOCAB.len() } else { 0 }) as u32, x))
        .collect();
    (by_text, keys, entries)
}

proptest! {
    #[test]
    fn numbered_levels_equal_the_text_levels(input in dicts()) {
        let (by_text, keys, entries) = both(&input);
        let sum = BuiltinSum::LeftFold;

        let run: Vec<(String, u64)> = run_level_keyed(&keys, &entries, sum)
            .into_iter()
            .map(|(g, x)| {
                // A reused key object must carry exactly the output text.
                if let Some(k) = g.same_text {
                    assert_eq!(keys[k as usize], g.key);
                }
                (g.key.into_owned(), x.to_bits())
            })
            .collect();
        let want: Vec<(String, u64)> = aggregate_run_level_metrics(&by_text, sum)
            .into_iter()
            .map(|(k, x)| (k, x.to_bits()))
            .collect();
        prop_assert_eq!(run, want);

        let step = step_level_keyed(&keys, &entries, "rollout", Some(&["mean", "max", "min"]), sum);
        prop_assert_eq!(bits(step), bits(aggregate_metrics(&by_text, "rollout", None, sum)));
        let eval = step_level_keyed(&keys, &entries, "eval/x", None, sum);
        prop_assert_eq!(bits(eval), bits(aggregate_eval_metrics(&by_text, "eval/x", None, false, sum)));

        let options = TaskOptions { builtin_sum: sum, estimator: Estimator::Exact };
        let task = eval_task_level_keyed(&keys, &entries, options);
        prop_assert_eq!(
            bits(task),
            bits(tally_aggregate::calculate_task_level_metrics(&by_text, true, options))
        );
    }
}

fn bits(m: tally_aggregate::MetricMap) -> Vec<(String, u64)> {
    m.into_iter().map(|(k, x)| (k, x.to_bits())).collect()
}

#[test]
fn reused_key_is_the_first_with_the_canonical_text() {
    // `acc:mean` (number 0) opens the group `acc`; number 1 (`acc`) is the first whose text is
    // the output key, number 2 (`acc` again) comes later.
    let keys = ["acc:mean", "acc", "acc", "tok:sum"];
    let entries = [(0, 1.0), (1, 2.0), (2, 6.0), (3, 1.0)];
    let out = run_level_keyed(&keys, &entries, BuiltinSum::LeftFold);
    assert_eq!(out.len(), 2);
    assert_eq!(
        (out[0].0.key.as_ref(), out[0].0.same_text, out[0].1),
        ("acc", Some(1), 3.0)
    );
    assert_eq!(
        (out[1].0.key.as_ref(), out[1].0.same_text),
        ("tok:sum", Some(3))
    );
    // Only `acc:mean`: the output key `acc` is new text.
    let out = run_level_keyed(&["acc:mean"], &[(0, 1.0)], BuiltinSum::LeftFold);
    assert_eq!(out[0].0.same_text, None);
}
