//! A held series' steps and values in as few bytes as they allow (`docs/contract/board.md`
//! "Live runs": what a point costs): steps that advance by a constant stride, as nearly every
//! writer's do, are held as that rule alone; values that are all float32, as event files'
//! simple values are, are held as float32. Anything else is held as written, losslessly.

/// A series' steps.
#[derive(Debug, Clone)]
pub(super) enum Steps {
    /// `first + i × stride` for `i < len`.
    Regular { first: i64, stride: i64, len: usize },
    /// Any other steps, as written.
    Listed(Vec<i64>),
}

impl Default for Steps {
    fn default() -> Self {
        Steps::Regular {
            first: 0,
            stride: 0,
            len: 0,
        }
    }
}

impl Steps {
    pub(super) fn len(&self) -> usize {
        match self {
            Steps::Regular { len, .. } => *len,
            Steps::Listed(v) => v.len(),
        }
    }

    pub(super) fn get(&self, i: usize) -> i64 {
        match self {
            Steps::Regular { first, stride, .. } => first + i as i64 * stride,
            Steps::Listed(v) => v[i],
        }
    }

    pub(super) fn push(&mut self, step: i64) {
        match self {
            Steps::Regular { first, stride, len } => {
                let next = match *len {
                    0 => Some(step),
                    1 => step.checked_sub(*first).map(|s| *first + s),
                    n => (n as i64)
                        .checked_mul(*stride)
                        .and_then(|d| first.checked_add(d)),
                };
                if next == Some(step) {
                    if *len == 0 {
                        *first = step;
                    } else if *len == 1 {
                        *stride = step - *first;
                    }
                    *len += 1;
                    return;
                }
                let mut listed: Vec<i64> = (0..*len).map(|i| *first + i as i64 * *stride).collect();
                listed.push(step);
                *self = Steps::Listed(listed);
            }
            Steps::Listed(v) => v.push(step),
        }
    }

    /// The first index whose step is not `below` (steps non-decreasing).
    pub(super) fn partition_point(&self, below: impl Fn(i64) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if below(self.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    pub(super) fn bytes(&self) -> usize {
        match self {
            Steps::Regular { .. } => 0,
            Steps::Listed(v) => v.len() * 8,
        }
    }
}

/// A series' values.
#[derive(Debug, Clone)]
pub(super) enum Values {
    /// Every value is a float32 (NaN and infinities included).
    F32(Vec<f32>),
    /// At least one value needs float64.
    F64(Vec<f64>),
}

impl Default for Values {
    fn default() -> Self {
        Values::F32(Vec::new())
    }
}

impl Values {
    pub(super) fn get(&self, i: usize) -> f64 {
        match self {
            Values::F32(v) => f64::from(v[i]),
            Values::F64(v) => v[i],
        }
    }

    pub(super) fn push(&mut self, value: f64) {
        match self {
            Values::F32(v) => {
                let narrow = value as f32;
                if f64::from(narrow) == value || value.is_nan() {
                    v.push(narrow);
                } else {
                    let mut wide: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
                    wide.push(value);
                    *self = Values::F64(wide);
                }
            }
            Values::F64(v) => v.push(value),
        }
    }

    pub(super) fn bytes(&self) -> usize {
        match self {
            Values::F32(v) => v.len() * 4,
            Values::F64(v) => v.len() * 8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_stay_a_rule_while_regular_and_are_listed_when_not() {
        let mut s = Steps::default();
        for step in [10, 15, 20, 25] {
            s.push(step);
        }
        assert!(matches!(
            s,
            Steps::Regular {
                first: 10,
                stride: 5,
                len: 4
            }
        ));
        s.push(26);
        assert_eq!(
            (0..5).map(|i| s.get(i)).collect::<Vec<_>>(),
            [10, 15, 20, 25, 26]
        );
        assert_eq!(s.bytes(), 40);
        // A repeated step is a stride of 0; one step going back is held as written.
        let mut r = Steps::default();
        for step in [7, 7, 7, 3] {
            r.push(step);
        }
        assert_eq!((0..4).map(|i| r.get(i)).collect::<Vec<_>>(), [7, 7, 7, 3]);
        // Steps near the ends of i64 do not overflow the rule.
        let mut big = Steps::default();
        for step in [i64::MAX - 1, i64::MAX, i64::MIN] {
            big.push(step);
        }
        assert_eq!(
            (0..3).map(|i| big.get(i)).collect::<Vec<_>>(),
            [i64::MAX - 1, i64::MAX, i64::MIN]
        );
    }

    #[test]
    fn values_stay_float32_until_one_is_not_and_none_is_changed() {
        let mut v = Values::default();
        for x in [
            0.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::from(1e30f32),
            -3.25,
        ] {
            v.push(x);
        }
        assert_eq!(v.bytes(), 6 * 4);
        v.push(0.1); // not a float32
        assert_eq!(v.bytes(), 7 * 8);
        let got: Vec<f64> = (0..7).map(|i| v.get(i)).collect();
        assert_eq!(got[0], 0.5);
        assert!(got[1].is_nan());
        assert_eq!(
            &got[2..],
            [
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::from(1e30f32),
                -3.25,
                0.1
            ]
        );
    }
}
