//! Pins `bootstrap_metric` to values measured with trinity-rft 0.6.0 (`docs/contract/rft.md`
//! "The bootstrap", "Numerics").

use tally_aggregate::bootstrap::bootstrap_best_worst;
use tally_aggregate::{bootstrap_metric, BootstrapError, Reducer};

const MAX_MIN: [Reducer; 2] = [Reducer::Max, Reducer::Min];

#[test]
fn bootstrap_depends_on_input_order_like_trinity() {
    // The bootstrap depends on input order: trinity-rft 0.6.0 gives best@2 = 0.754 for [0,1]
    // and 0.77 for [1,0].
    let a = bootstrap_metric(&[0.0, 1.0], 2, &MAX_MIN, 1000, 42).unwrap();
    assert_eq!(
        a,
        [(0.754, 0.43067853440820564), (0.23, 0.4208325082500163)]
    );
    let b = bootstrap_metric(&[1.0, 0.0], 2, &MAX_MIN, 1000, 42).unwrap();
    assert_eq!(
        b,
        [(0.77, 0.4208325082500163), (0.246, 0.43067853440820564)]
    );
}

#[test]
fn bootstrap_of_a_constant_shows_pairwise_rounding() {
    // Trinity gives 0.6999999999999998 for [0.7]*5: numpy's pairwise mean of 1000 values.
    let r = bootstrap_metric(&[0.7; 5], 5, &MAX_MIN, 1000, 42).unwrap();
    assert_eq!(r[0], (0.6999999999999998, 1.1102230246251565e-16));
    assert_eq!(
        bootstrap_best_worst(&[0.7; 5], 5),
        (0.6999999999999998, 0.6999999999999998)
    );
}

#[test]
fn docs_example_task_matches() {
    // Trinity's documented example task [0.8, 0.9]: best@2 0.8754000000000002, worst@2
    // 0.8230000000000002.
    assert_eq!(
        bootstrap_best_worst(&[0.8, 0.9], 2),
        (0.8754000000000002, 0.8230000000000002)
    );
}

#[test]
fn seed_and_resample_count_are_honoured() {
    // `bootstrap_metric([0.25, 0.5, 1.0], 3, [max, min], n_bootstrap=10, seed=7)` in trinity.
    let r = bootstrap_metric(&[0.25, 0.5, 1.0], 3, &MAX_MIN, 10, 7).unwrap();
    assert_eq!(r, [(0.9, 0.2), (0.25, 0.0)]);
}

#[test]
fn results_do_not_depend_on_earlier_calls() {
    // The per-thread index cache must be invisible: same answer cold, warm, after other
    // (seed, n) streams were extended, and after the cache overflowed its budget and cleared.
    let cold = bootstrap_metric(&[0.1, 0.2, 0.3], 3, &MAX_MIN, 1000, 42).unwrap();
    for n in 1..150 {
        let data: Vec<f64> = (0..n).map(|i| i as f64).collect();
        bootstrap_metric(&data, n, &MAX_MIN, 1000, 42).unwrap();
    }
    let warm = bootstrap_metric(&[0.1, 0.2, 0.3], 3, &MAX_MIN, 1000, 42).unwrap();
    assert_eq!(cold, warm);
    let big = bootstrap_metric(&[0.1, 0.2, 0.3], 2000, &MAX_MIN, 1000, 42).unwrap();
    let fresh = std::thread::spawn(|| {
        bootstrap_metric(&[0.1, 0.2, 0.3], 2000, &MAX_MIN, 1000, 42).unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(big, fresh);
}

#[test]
fn degenerate_inputs_fail_like_python() {
    // numpy: choice(0, k) raises; builtin max([]) raises; np.mean([]) is nan.
    assert_eq!(
        bootstrap_metric(&[], 2, &MAX_MIN, 1000, 42),
        Err(BootstrapError::EmptyData)
    );
    assert_eq!(
        bootstrap_metric(&[1.0], 0, &MAX_MIN, 1000, 42),
        Err(BootstrapError::EmptySubset)
    );
    assert_eq!(
        bootstrap_metric(&[1.0], usize::MAX, &MAX_MIN, 2, 42),
        Err(BootstrapError::TooLarge)
    );
    let r = bootstrap_metric(&[1.0, 2.0], 2, &MAX_MIN, 0, 42).unwrap();
    assert!(r.iter().all(|(m, s)| m.is_nan() && s.is_nan()));
}

#[test]
fn nan_in_the_data_makes_best_and_worst_nan() {
    // Over 1000 draws some resample begins with the NaN (which the first-wins max keeps), and
    // np.mean propagates it (`docs/contract/rft.md` "Collisions and edge cases").
    let mut data = vec![1.0; 7];
    data.push(f64::NAN);
    let (b, w) = bootstrap_best_worst(&data, 8);
    assert!(b.is_nan() && w.is_nan());
}
