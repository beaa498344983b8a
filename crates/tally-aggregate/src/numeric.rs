//! numpy's pairwise sum / mean / population std / max / min and CPython's builtin sum / max / min.
//!
//! Every function here reproduces the exact sequence of IEEE-754 operations of numpy's or
//! CPython's implementation, so results are bit-identical (`docs/contract/rft.md` "Numerics").
//! Rust never contracts `a * b + c` into an FMA on its own, which this relies on.

/// numpy's `PW_BLOCKSIZE`: blocks up to this length use 8 accumulators.
const PW_BLOCKSIZE: usize = 128;

/// numpy's `DOUBLE_pairwise_sum` (the inner routine, without the reduction's initial value).
///
/// * `n < 8`: left fold from `0.0`;
/// * `n ≤ 128`: eight accumulators seeded with `a[0..8]`, blocks of eight added lane-wise,
///   combined as `((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))`, then the tail added one by one;
/// * `n > 128`: split at `n/2` rounded down to a multiple of 8 and recurse.
pub fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in a {
            res += x;
        }
        res
    } else if n <= PW_BLOCKSIZE {
        let mut r = [a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]];
        let full = n - n % 8;
        let mut i = 8;
        while i < full {
            for (j, acc) in r.iter_mut().enumerate() {
                *acc += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// `np.sum` of a contiguous float64 array: the add-reduction starts from its identity `0.0`
/// and adds the pairwise sum of all elements (so `np.sum([-0.0])` is `+0.0`).
pub fn np_sum(a: &[f64]) -> f64 {
    0.0 + pairwise_sum(a)
}

/// `np.mean`: `np_sum(a) / n`. Empty input gives NaN (numpy warns and returns nan).
pub fn np_mean(a: &[f64]) -> f64 {
    np_sum(a) / a.len() as f64
}

/// `np.std` with `ddof=0` (population): `sqrt(np_sum((x - mean)²) / n)`.
pub fn np_std(a: &[f64]) -> f64 {
    let n = a.len() as f64;
    let mean = np_sum(a) / n;
    let sq: Vec<f64> = a
        .iter()
        .map(|&x| {
            let d = x - mean;
            d * d
        })
        .collect();
    (np_sum(&sq) / n).sqrt()
}

/// `np.max` of a non-empty float64 array: NaN propagates; among equal values (±0.0) the later
/// one wins, as numpy's scalar loop does. (numpy's SIMD loop may pick the other zero for
/// longer arrays that mix `0.0` and `-0.0`; the value compares equal either way.)
///
/// # Panics
/// If `a` is empty (numpy raises `ValueError` there).
pub fn np_max(a: &[f64]) -> f64 {
    let mut acc = a[0];
    for &x in &a[1..] {
        if acc.is_nan() {
            break;
        }
        acc = if acc > x { acc } else { x };
    }
    acc
}

/// `np.min`, the mirror of [`np_max`].
///
/// # Panics
/// If `a` is empty.
pub fn np_min(a: &[f64]) -> f64 {
    let mut acc = a[0];
    for &x in &a[1..] {
        if acc.is_nan() {
            break;
        }
        acc = if acc < x { acc } else { x };
    }
    acc
}

/// Which CPython builtin `sum` to reproduce: a left fold up to Python 3.11, Neumaier
/// compensation from 3.12 (`docs/contract/rft.md` "Numerics").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BuiltinSum {
    /// Python ≤ 3.11: a plain left fold.
    LeftFold,
    /// Python 3.12 (Trinity's official Docker image): Neumaier-compensated summation.
    #[default]
    Neumaier,
}

/// The builtin `sum(values)` over Python floats (`values` non-empty in every Trinity use).
///
/// The first element goes through `0 + x` (int + float, so `-0.0` becomes `+0.0`) without
/// compensation; the rest are added by the float fast path of the selected interpreter.
/// With [`BuiltinSum::Neumaier`], the compensation is added at the end only if it is
/// non-zero and finite. Empty input gives `0.0`.
pub fn py_sum(values: &[f64], mode: BuiltinSum) -> f64 {
    let Some((&first, rest)) = values.split_first() else {
        return 0.0;
    };
    let mut s = 0.0 + first;
    match mode {
        BuiltinSum::LeftFold => {
            for &x in rest {
                s += x;
            }
            s
        }
        BuiltinSum::Neumaier => {
            let mut c = 0.0_f64;
            for &x in rest {
                let t = s + x;
                if s.abs() >= x.abs() {
                    c += (s - t) + x;
                } else {
                    c += (x - t) + s;
                }
                s = t;
            }
            if c != 0.0 && c.is_finite() {
                s += c;
            }
            s
        }
    }
}

/// `sum(values) / len(values)` with the builtin sum.
pub fn py_mean(values: &[f64], mode: BuiltinSum) -> f64 {
    py_sum(values, mode) / values.len() as f64
}

/// The builtin `max`: keeps the first element and replaces it only by a strictly greater one,
/// so a leading NaN sticks and a later NaN is ignored.
///
/// # Panics
/// If `values` is empty (Python raises `ValueError`).
pub fn py_max(values: &[f64]) -> f64 {
    let mut best = values[0];
    for &x in &values[1..] {
        if x > best {
            best = x;
        }
    }
    best
}

/// The builtin `min`, the mirror of [`py_max`].
///
/// # Panics
/// If `values` is empty.
pub fn py_min(values: &[f64]) -> f64 {
    let mut best = values[0];
    for &x in &values[1..] {
        if x < best {
            best = x;
        }
    }
    best
}
