//! Property tests of the exact estimator: brute-force enumeration and the bootstrap's error bars.

use proptest::prelude::*;
use tally_aggregate::exact::{expected_max_min, expected_max_min_many};
use tally_aggregate::{bootstrap_metric, Reducer};

/// E[max], E[min] by enumerating all N^k equally likely index sequences.
fn brute_force(values: &[f64], k: usize) -> (f64, f64) {
    let n = values.len();
    let total = n.pow(k as u32);
    let (mut smax, mut smin) = (0.0, 0.0);
    for code in 0..total {
        let mut c = code;
        let mut mx = f64::NEG_INFINITY;
        let mut mn = f64::INFINITY;
        for _ in 0..k {
            let x = values[c % n];
            c /= n;
            mx = mx.max(x);
            mn = mn.min(x);
        }
        smax += mx;
        smin += mn;
    }
    (smax / total as f64, smin / total as f64)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs()))
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn exact_equals_brute_force_enumeration(
        values in prop::collection::vec(-1e3f64..1e3, 1..=6),
        k in 1usize..=5,
    ) {
        // The exact estimator equals brute-force enumeration of all n^k draws.
        let (emax, emin) = expected_max_min(&values, k);
        let (bmax, bmin) = brute_force(&values, k);
        prop_assert!(close(emax, bmax), "max {emax} vs {bmax}");
        prop_assert!(close(emin, bmin), "min {emin} vs {bmin}");
    }

    #[test]
    fn exact_equals_brute_force_with_ties(
        values in prop::collection::vec(prop::sample::select(vec![0.0, 0.5, 1.0]), 1..=6),
        k in 1usize..=5,
    ) {
        // Binary/ternary accuracies tie a lot; order statistics must weight ties correctly.
        let (emax, emin) = expected_max_min(&values, k);
        let (bmax, bmin) = brute_force(&values, k);
        prop_assert!(close(emax, bmax) && close(emin, bmin));
    }

    #[test]
    fn exact_lies_within_the_bootstrap_monte_carlo_error(
        values in prop::collection::vec(0.0f64..1.0, 2..=16),
        k_pick in 0usize..5,
    ) {
        // The bootstrap estimates the same expectation: |exact − boot| ≤ 5 σ/√1000.
        let ks = tally_aggregate::subset_sizes(values.len());
        let k = ks[k_pick % ks.len()];
        let boot = bootstrap_metric(&values, k, &[Reducer::Max, Reducer::Min], 1000, 42).unwrap();
        let (emax, emin) = expected_max_min(&values, k);
        let tol = |sd: f64| 5.0 * sd / 1000f64.sqrt() + 1e-12;
        prop_assert!((emax - boot[0].0).abs() <= tol(boot[0].1), "max {emax} vs {:?}", boot[0]);
        prop_assert!((emin - boot[1].0).abs() <= tol(boot[1].1), "min {emin} vs {:?}", boot[1]);
    }

    #[test]
    fn exact_is_independent_of_input_order(
        values in prop::collection::vec(-10.0f64..10.0, 1..=16),
        k in 1usize..=16,
        rot in 0usize..16,
    ) {
        // The exact estimator is free of input order (`docs/contract/rft.md` "The exact
        // estimator").
        let mut rotated = values.clone();
        let len = rotated.len();
        rotated.rotate_left(rot % len);
        rotated.reverse();
        prop_assert_eq!(expected_max_min(&values, k), expected_max_min(&rotated, k));
    }

    #[test]
    fn exact_is_monotone_in_k_and_bounded(
        values in prop::collection::vec(-10.0f64..10.0, 2..=16),
    ) {
        // E[max of k] grows with k and stays within [min, max]; E[min] mirrors it.
        let lo = values.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let ks: Vec<usize> = (1..=values.len()).collect();
        let r = expected_max_min_many(&values, &ks);
        for w in r.windows(2) {
            prop_assert!(w[1].0 >= w[0].0 - 1e-12 && w[1].1 <= w[0].1 + 1e-12);
        }
        for (mx, mn) in r {
            prop_assert!(lo <= mn && mn <= mx + 1e-12 && mx <= hi);
        }
    }
}

#[test]
fn exact_of_one_draw_is_the_mean_and_of_constants_the_constant() {
    let (mx, mn) = expected_max_min(&[0.0, 1.0, 2.0, 3.0], 1);
    assert!(close(mx, 1.5) && close(mn, 1.5));
    assert_eq!(
        expected_max_min(&[0.7; 5], 5),
        (0.7, 0.7),
        "no rounding for constants"
    );
    assert_eq!(expected_max_min(&[0.0, 1.0], 2), (0.75, 0.25));
}

#[test]
fn exact_follows_the_extended_reals_for_non_finite_values() {
    // Every value has positive probability of being the max and the min.
    let (a, b) = expected_max_min(&[1.0, f64::NAN], 2);
    assert!(a.is_nan() && b.is_nan());
    assert_eq!(
        expected_max_min(&[1.0, f64::INFINITY], 2),
        (f64::INFINITY, f64::INFINITY)
    );
    let (a, _) = expected_max_min(&[f64::NEG_INFINITY, f64::INFINITY], 2);
    assert!(a.is_nan());
    assert_eq!(
        expected_max_min(&[f64::NEG_INFINITY, 0.0], 3),
        (f64::NEG_INFINITY, f64::NEG_INFINITY)
    );
}

#[test]
fn expectations_stay_ordered_on_a_shrunk_proptest_case() {
    // Regression (proptest shrink): with k = 1 both expectations are the mean, computed with
    // differently rounded weights; they may differ by an ulp but never cross by more.
    let v = [
        3.0493390249575123,
        7.9862805380823385,
        2.7594703592702685,
        0.0,
        0.0,
        -9.90986350448402,
        5.764475209109625,
        8.086137420067706,
        0.0,
        0.0,
        0.0,
        -8.668009780894751,
    ];
    for k in 1..=v.len() {
        let (mx, mn) = expected_max_min(&v, k);
        assert!(mn <= mx + 1e-12, "k={k}: {mn} > {mx}");
    }
}
