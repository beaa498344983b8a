//! Pins the numpy / CPython numerics bit for bit (`docs/contract/rft.md` "Numerics") and the
//! MT19937 stream.

use tally_aggregate::mt19937::{MaskedIndex, Mt19937};
use tally_aggregate::numeric::{
    np_max, np_mean, np_min, np_std, np_sum, pairwise_sum, py_max, py_min, py_sum,
};
use tally_aggregate::{per_token_ms, BuiltinSum};

const P10: [f64; 7] = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6];

/// `((i*7919 % 1000) - 500) / 7 * 10^(i % 7)`: exact to build in Rust and Python alike.
fn wild(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7919 % 1000) as f64 - 500.0) / 7.0 * P10[i % 7])
        .collect()
}

#[test]
fn np_sum_mean_std_match_numpy_bits_across_the_pairwise_regimes() {
    // n<8 fold, n<=128 eight accumulators, n>128 recursive split at a multiple
    // of 8. Goldens: numpy 2.4.6 `np.sum/np.mean/np.std(np.array(wild(n)))`, as f64 bits.
    let golden: [(usize, u64, u64, u64); 7] = [
        (
            5,
            0x4111e9ea49249249,
            0x40eca976db6db6db,
            0x40f7c2bda49df5b7,
        ),
        (
            9,
            0x414bd9ba36db6db7,
            0x4118c18914514514,
            0x4125668aa17fb515,
        ),
        (
            17,
            0x418caffcfa492491,
            0x414afffd27cc5ea7,
            0x416cf350c9a5cd26,
        ),
        (
            128,
            0x4190b833e1b6db6f,
            0x4120b833e1b6db6f,
            0x416de8920c2abae4,
        ),
        (
            129,
            0x4190b85158924927,
            0x41209723126d6e4a,
            0x416dcadf396b5117,
        ),
        (
            1000,
            0x4199277595249255,
            0x40f9c2019eddc4f3,
            0x416da744435901c4,
        ),
        (
            4099,
            0xc19e2fdb2092491c,
            0xc0de2a3336f7fa9d,
            0x416ddad7f8500bd9,
        ),
    ];
    for (n, sum, mean, std) in golden {
        let a = wild(n);
        assert_eq!(np_sum(&a).to_bits(), sum, "np.sum n={n}");
        assert_eq!(np_mean(&a).to_bits(), mean, "np.mean n={n}");
        assert_eq!(np_std(&a).to_bits(), std, "np.std n={n}");
    }
}

#[test]
fn np_sum_is_not_a_left_fold() {
    // The pairwise order is what makes 0.1 * 10 come out as 1.0 in numpy (a fold gives
    // 0.9999999999999999).
    let a = [0.1; 10];
    assert_eq!(np_sum(&a), 1.0);
    assert_eq!(a.iter().fold(0.0, |s, x| s + x), 0.9999999999999999);
    assert_eq!(pairwise_sum(&[-0.0]), 0.0);
    assert!(
        np_sum(&[-0.0]).is_sign_positive(),
        "the reduction starts at +0.0"
    );
}

#[test]
fn np_std_is_population_std() {
    // [0.8, 0.9] → 0.04999999999999999 (ddof = 0), Trinity's documented example.
    assert_eq!(np_std(&[0.8, 0.9]), 0.04999999999999999);
    assert_eq!(np_mean(&[0.8, 0.9]), 0.8500000000000001);
    assert!(
        np_std(&[f64::INFINITY, f64::INFINITY]).is_nan(),
        "std of [inf, inf] is NaN"
    );
    assert!(np_mean(&[f64::INFINITY, f64::NEG_INFINITY]).is_nan());
}

#[test]
fn np_max_min_propagate_nan_anywhere() {
    // numpy stats propagate NaN wherever it sits.
    assert!(np_max(&[1.0, f64::NAN, 3.0]).is_nan());
    assert!(np_min(&[f64::NAN, 1.0]).is_nan());
    assert_eq!(np_max(&[1.0, 3.0, 2.0]), 3.0);
    // Signed zero: np.max returns the later of two equal values (scalar loop).
    assert!(np_max(&[0.0, -0.0]).is_sign_negative());
    assert!(np_max(&[-0.0, 0.0]).is_sign_positive());
}

#[test]
fn builtin_max_min_are_first_wins_and_order_dependent_with_nan() {
    // `:max` over [nan, 1] → nan, over [1, nan, 3] → 3; first of ±0 kept.
    assert!(py_max(&[f64::NAN, 1.0]).is_nan());
    assert_eq!(py_max(&[1.0, f64::NAN, 3.0]), 3.0);
    assert_eq!(py_min(&[1.0, f64::NAN, 0.5]), 0.5);
    assert!(py_max(&[0.0, -0.0]).is_sign_positive());
    assert!(py_max(&[-0.0, 0.0]).is_sign_negative());
}

#[test]
fn builtin_sum_left_fold_and_neumaier_differ_on_cancellation() {
    // [1e16, 1, -1e16] is 0.0 on Python 3.11 and 1.0 on 3.12.
    let v = [1e16, 1.0, -1e16];
    assert_eq!(py_sum(&v, BuiltinSum::LeftFold), 0.0);
    assert_eq!(py_sum(&v, BuiltinSum::Neumaier), 1.0);
    // `0 + x` turns -0.0 into +0.0 in both.
    assert!(py_sum(&[-0.0], BuiltinSum::Neumaier).is_sign_positive());
    assert!(py_sum(&[-0.0, -0.0], BuiltinSum::LeftFold).is_sign_positive());
    // An overflowed sum keeps inf: the NaN compensation is not added.
    assert_eq!(
        py_sum(&[1e308, 1e308, -1e308], BuiltinSum::Neumaier),
        f64::INFINITY
    );
    assert_eq!(py_sum(&[0.1; 10], BuiltinSum::Neumaier), 1.0);
    assert_eq!(py_sum(&[0.1; 10], BuiltinSum::LeftFold), 0.9999999999999999);
}

#[test]
fn mt19937_matches_numpy_legacy_seeding() {
    // `np.random.RandomState(s).randint(0, 2**32, dtype=np.uint64)` consumes raw outputs.
    let mut mt = Mt19937::new(5489);
    let got: Vec<u32> = (0..3).map(|_| mt.next_u32()).collect();
    assert_eq!(
        got,
        [3499211612, 581869302, 3890346734],
        "the MT19937 reference implementation"
    );
    let mut mt = Mt19937::new(42);
    let got: Vec<u32> = (0..5).map(|_| mt.next_u32()).collect();
    assert_eq!(
        got,
        [1608637542, 3421126067, 4083286876, 787846414, 3143890026]
    );
}

#[test]
fn masked_randint_matches_numpy_choice() {
    // `choice(n, size, replace=True)` = masked-rejection randint(0, n) (`docs/contract/rft.md`
    // "The bootstrap").
    let cases: [(usize, &[u32]); 3] = [
        (5, &[3, 4, 2, 4, 4, 1, 2, 2, 2, 4, 3, 2]),
        (2, &[0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0]),
        (1000, &[102, 435, 860, 270, 106, 71, 700, 20]),
    ];
    for (n, want) in cases {
        let mut mt = Mt19937::new(42);
        let s = MaskedIndex::new(n);
        let got: Vec<u32> = (0..want.len()).map(|_| s.draw(&mut mt)).collect();
        assert_eq!(got, want, "choice({n}) after seed(42)");
    }
    // n = 1 consumes no output.
    let mut a = Mt19937::new(42);
    let one = MaskedIndex::new(1);
    assert_eq!(one.draw(&mut a), 0);
    assert_eq!(a.next_u32(), 1608637542);
}

#[test]
fn per_token_ms_is_seconds_times_1000_over_tokens() {
    // timing_per_token_ms/{section} = timing_s * 1000 / num_tokens (`docs/contract/rft.md`
    // "Per-token timings").
    assert_eq!(per_token_ms(0.1, 3), Some(0.1 * 1000.0 / 3.0));
    assert_eq!(per_token_ms(1.5, 4096), Some(1.5 * 1000.0 / 4096.0));
    assert_eq!(per_token_ms(1.0, 0), None);
}
