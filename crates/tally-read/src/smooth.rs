//! TensorBoard's smoothing of a scalar chart, computed where the raw points are
//! (`docs/contract/board.md` "Every point drawn"): an exponential moving average over every
//! point of a series in reading order, debiased for its start, as TensorBoard's line chart
//! computes it over the points it holds.

/// The rule for one series: `last = last × w + (1 − w) × v`, the `n`th finite value divided by
/// `1 − wⁿ` (the debiasing: the average starts at 0); a value that is not finite is its own
/// smoothed value and moves nothing, and a series whose values are all equal is not smoothed.
#[derive(Debug, Clone, Copy)]
pub struct Ema {
    weight: f64,
    last: f64,
    /// `wⁿ`, `n` the finite values so far.
    power: f64,
}

impl Ema {
    /// The average before any point, with weight `weight` (`0 ≤ weight < 1`: [`weight_ok`]).
    pub fn new(weight: f64) -> Self {
        Ema {
            weight,
            last: 0.0,
            power: 1.0,
        }
    }

    /// Takes the next value and gives its smoothed value.
    #[inline]
    pub fn push(&mut self, value: f64) -> f64 {
        self.take(value);
        self.now(value)
    }

    /// Takes the next value without giving its smoothed value (a pass wanting a few).
    #[inline]
    pub fn take(&mut self, value: f64) {
        if !value.is_finite() {
            return;
        }
        self.last = self.last * self.weight + (1.0 - self.weight) * value;
        self.power *= self.weight;
        // Once 1 − wⁿ rounds to 1, wⁿ is let go to 0: the answer is the same, and a subnormal
        // wⁿ (it never reaches 0 by itself) slows every later multiplication tenfold.
        if self.power < f64::EPSILON / 4.0 {
            self.power = 0.0;
        }
    }

    /// The smoothed value of `value`, the value just taken.
    #[inline]
    pub fn now(&self, value: f64) -> f64 {
        if !value.is_finite() {
            return value;
        }
        self.last / (1.0 - self.power)
    }
}

/// Whether `weight` is a smoothing weight: at least 0 (no smoothing) and below 1 (at 1 the
/// average would never move).
pub fn weight_ok(weight: f64) -> bool {
    (0.0..1.0).contains(&weight)
}

/// Smoothed values at some points of one series, told its values in reading order: the
/// smoothed value of each wanted point, and whether every value was equal (then each wanted
/// point's smoothed value is its own, as TensorBoard leaves a constant series).
#[derive(Debug, Clone, Copy)]
pub struct Smoother {
    ema: Ema,
    first: Option<f64>,
    constant: bool,
}

impl Smoother {
    /// Before the series' first value.
    pub fn new(weight: f64) -> Self {
        Smoother {
            ema: Ema::new(weight),
            first: None,
            constant: true,
        }
    }

    /// Takes the next value: its smoothed value, as if the series were not constant.
    #[inline]
    pub fn push(&mut self, value: f64) -> f64 {
        self.take(value);
        self.ema.now(value)
    }

    /// Takes the next value without giving its smoothed value.
    #[inline]
    pub fn take(&mut self, value: f64) {
        match self.first {
            // NaN is equal to nothing, itself included, as in TensorBoard's check.
            None => {
                self.first = Some(value);
                self.constant = !value.is_nan();
            }
            Some(first) => self.constant &= value == first,
        }
        self.ema.take(value)
    }

    /// The smoothed value of `value`, the value just taken, as if the series were not constant.
    #[inline]
    pub fn now(&self, value: f64) -> f64 {
        self.ema.now(value)
    }

    /// The smoothed value of a point whose value is `value` and whose average was `smoothed`,
    /// once every value was told.
    pub fn finish(&self, value: f64, smoothed: f64) -> f64 {
        if self.constant {
            value
        } else {
            smoothed
        }
    }
}

/// The smoothed value of every one of `values`, TensorBoard's way (for a short series, and
/// as the reference the tests hold the board's answers to).
pub fn smoothed(values: &[f64], weight: f64) -> Vec<f64> {
    let mut s = Smoother::new(weight);
    let out: Vec<f64> = values.iter().map(|&v| s.push(v)).collect();
    values
        .iter()
        .zip(out)
        .map(|(&v, o)| s.finish(v, o))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_series_smooths_as_worked_out_by_hand() {
        // w = 0.5: last = 0.5, 1.25, 0.625; debiased by 1 - 0.5^n = 0.5, 0.75, 0.875.
        let got = smoothed(&[1.0, 2.0, 0.0], 0.5);
        assert_eq!(got, [1.0, 1.25 / 0.75, 0.625 / 0.875]);
        // A non-finite value is its own and moves nothing; the next n is the next finite's.
        let got = smoothed(&[1.0, f64::NAN, 2.0, f64::INFINITY], 0.5);
        assert_eq!(got[0], 1.0);
        assert!(got[1].is_nan());
        assert_eq!(got[2], 1.25 / 0.75);
        assert_eq!(got[3], f64::INFINITY);
        // Weight 0 is the raw series; a constant series is left as it is.
        assert_eq!(smoothed(&[3.0, -1.0, 7.5], 0.0), [3.0, -1.0, 7.5]);
        assert_eq!(smoothed(&[0.1; 4], 0.9), [0.1; 4]);
    }

    #[test]
    fn the_debiased_average_stays_within_the_values_seen_and_tracks_a_step() {
        // A property of the debiased average: each smoothed value is a weighted mean of the
        // finite values so far (weights summing to 1), so it lies between their extremes.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for weight in [0.0, 0.3, 0.6, 0.9, 0.99, 0.999] {
            let values: Vec<f64> = (0..2_000)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed % 10_000) as f64 / 100.0 - 50.0
                })
                .collect();
            let got = smoothed(&values, weight);
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for (v, s) in values.iter().zip(&got) {
                (lo, hi) = (lo.min(*v), hi.max(*v));
                assert!(
                    *s >= lo - 1e-9 && *s <= hi + 1e-9,
                    "{weight}: {s} not in [{lo}, {hi}]"
                );
            }
        }
        // After a step from 0 to 1, the average's gap to 1 shrinks by w each point.
        let mut values = vec![0.0; 1_000];
        values.extend([1.0; 1_000]);
        let got = smoothed(&values, 0.9);
        assert!((got[1_999] - 1.0).abs() < 1e-12);
        assert!((got[1_000] - 0.1).abs() < 1e-12);
    }
}
