//! The exact estimator: E\[max\] and E\[min\] of k draws with replacement, by order statistics.
//!
//! For values sorted ascending `x(1) ≤ … ≤ x(N)`, the max of `k` uniform draws with
//! replacement is `x(i)` or less with probability `(i/N)^k`, so
//! `E[max] = Σ x(i) · ((i/N)^k − ((i−1)/N)^k)` and, symmetrically,
//! `E[min] = Σ x(i) · (((N−i+1)/N)^k − ((N−i)/N)^k)`. Sorting costs O(N log N), the sums
//! O(N). The result depends only on the multiset of values, never on their order, and has
//! no Monte-Carlo noise.
//!
//! Non-finite values follow the extended reals: every value has a positive probability of
//! being the max (and the min), so any NaN gives NaN, `+inf` together with `-inf` gives NaN,
//! otherwise any `+inf` gives `+inf` and any `-inf` gives `-inf`.

/// `(E[max], E[min])` of `k` draws with replacement from `values`.
///
/// Returns `(NaN, NaN)` for empty `values` or `k == 0`.
pub fn expected_max_min(values: &[f64], k: usize) -> (f64, f64) {
    let mut sorted = values.to_vec();
    if let Some(special) = non_finite(&sorted) {
        return (special, special);
    }
    if sorted.is_empty() || k == 0 {
        return (f64::NAN, f64::NAN);
    }
    sorted.sort_by(f64::total_cmp);
    expected_max_min_sorted(&sorted, k)
}

/// Like [`expected_max_min`] for several `k` at once, sorting only once.
pub fn expected_max_min_many(values: &[f64], ks: &[usize]) -> Vec<(f64, f64)> {
    let mut sorted = values.to_vec();
    if let Some(special) = non_finite(&sorted) {
        return ks.iter().map(|_| (special, special)).collect();
    }
    sorted.sort_by(f64::total_cmp);
    ks.iter()
        .map(|&k| {
            if sorted.is_empty() || k == 0 {
                (f64::NAN, f64::NAN)
            } else {
                expected_max_min_sorted(&sorted, k)
            }
        })
        .collect()
}

fn non_finite(values: &[f64]) -> Option<f64> {
    let (mut pos, mut neg) = (false, false);
    for &x in values {
        if x.is_nan() {
            return Some(f64::NAN);
        }
        pos |= x == f64::INFINITY;
        neg |= x == f64::NEG_INFINITY;
    }
    match (pos, neg) {
        (true, true) => Some(f64::NAN),
        (true, false) => Some(f64::INFINITY),
        (false, true) => Some(f64::NEG_INFINITY),
        (false, false) => None,
    }
}

/// `P(max of k draws ≤ x(i)) = (i/N)^k`, computed so that `cdf(N) == 1` exactly.
fn cdf(i: usize, n: usize, k: usize) -> f64 {
    if i == 0 {
        0.0
    } else if i == n {
        1.0
    } else {
        let p = i as f64 / n as f64;
        match i32::try_from(k) {
            Ok(k) => p.powi(k),
            Err(_) => p.powf(k as f64),
        }
    }
}

fn expected_max_min_sorted(sorted: &[f64], k: usize) -> (f64, f64) {
    let n = sorted.len();
    let (lo, hi) = (sorted[0], sorted[n - 1]);
    if lo == hi {
        // A constant sample: the expectation is the value itself, with no rounding.
        return (hi, lo);
    }
    let mut max = Compensated::default();
    let mut min = Compensated::default();
    for (idx, &x) in sorted.iter().enumerate() {
        let i = idx + 1;
        let w_max = cdf(i, n, k) - cdf(i - 1, n, k);
        let w_min = cdf(n - i + 1, n, k) - cdf(n - i, n, k);
        max.add(x * w_max);
        min.add(x * w_min);
    }
    // Rounding must never push an expectation outside the sample's range.
    (max.value().clamp(lo, hi), min.value().clamp(lo, hi))
}

/// Neumaier-compensated accumulator (keeps the weighted sums accurate to ~1 ulp).
#[derive(Default)]
struct Compensated {
    s: f64,
    c: f64,
}

impl Compensated {
    fn add(&mut self, x: f64) {
        let t = self.s + x;
        if self.s.abs() >= x.abs() {
            self.c += (self.s - t) + x;
        } else {
            self.c += (x - t) + self.s;
        }
        self.s = t;
    }

    fn value(&self) -> f64 {
        self.s + self.c
    }
}
