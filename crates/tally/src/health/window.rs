//! A trailing window of values and its median and MAD, kept fresh every few values
//! (`docs/contract/health.md` "Divergence", "Cost").
//!
//! The window is a ring of fixed size; its statistics are found again (two selections over a
//! scratch copy, O(window)) once every `refresh` pushes (every len / 2 while it holds fewer
//! than 2 × `refresh`), so a push costs O(1) amortised and allocates nothing.

/// A trailing window's robust statistics.
#[derive(Debug, Clone)]
pub struct RobustWindow {
    ring: Box<[f64]>,
    /// The values as order keys ([`order_key`]) while a refresh selects among them.
    scratch: Box<[u64]>,
    head: usize,
    len: usize,
    since: usize,
    refresh: usize,
    min_history: usize,
    with_mad: bool,
    median: f64,
    mad: f64,
    ready: bool,
}

impl RobustWindow {
    /// A window of the last `window` values, whose statistics exist once it holds
    /// `min_history` values and are found again every `refresh` values; `with_mad` also keeps
    /// the median absolute deviation.
    pub fn new(window: usize, min_history: usize, refresh: usize, with_mad: bool) -> Self {
        let window = window.max(1);
        RobustWindow {
            ring: vec![0.0; window].into_boxed_slice(),
            scratch: vec![0; window].into_boxed_slice(),
            head: 0,
            len: 0,
            since: 0,
            refresh: refresh.max(1),
            min_history: min_history.clamp(1, window),
            with_mad,
            median: 0.0,
            mad: 0.0,
            ready: false,
        }
    }

    /// The median and MAD as last found, once enough values came.
    #[inline]
    pub fn stats(&self) -> Option<(f64, f64)> {
        self.ready.then_some((self.median, self.mad))
    }

    /// Adds a (finite) value, dropping the oldest once full.
    #[inline]
    pub fn push(&mut self, v: f64) {
        self.ring[self.head] = v;
        self.head += 1;
        if self.head == self.ring.len() {
            self.head = 0;
        }
        self.len = (self.len + 1).min(self.ring.len());
        self.since += 1;
        // Every `refresh` values, and more often while the window is short (every len / 2
        // values: still O(1) amortised), so a short history is not judged by its first values.
        let every = self.refresh.min(self.len.div_ceil(2));
        if self.len >= self.min_history && (!self.ready || self.since >= every) {
            self.recompute();
        }
    }

    /// Forgets every value.
    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
        self.since = 0;
        self.ready = false;
    }

    /// Selects on integer keys, whose order is `f64::total_cmp`'s, so a refresh compares
    /// integers instead of decoding floats each time (BENCHMARKS.md "In the logger").
    #[cold]
    fn recompute(&mut self) {
        let n = self.len;
        let s = &mut self.scratch[..n];
        for (k, v) in s.iter_mut().zip(&self.ring[..n]) {
            *k = order_key(*v);
        }
        let mid = n / 2;
        let (_, m, _) = s.select_nth_unstable(mid);
        let median = from_order_key(*m);
        if self.with_mad {
            // A deviation is never negative: its bits order as its values do.
            for k in s.iter_mut() {
                *k = (from_order_key(*k) - median).abs().to_bits();
            }
            let (_, d, _) = s.select_nth_unstable(mid);
            self.mad = f64::from_bits(*d);
        }
        self.median = median;
        self.since = 0;
        self.ready = true;
    }
}

/// `v` as an unsigned key ordered as `f64::total_cmp` orders values.
#[inline]
fn order_key(v: f64) -> u64 {
    let b = v.to_bits() as i64;
    ((b ^ (((b >> 63) as u64) >> 1) as i64) as u64) ^ (1 << 63)
}

/// The value of an [`order_key`].
#[inline]
fn from_order_key(k: u64) -> f64 {
    let b = (k ^ (1 << 63)) as i64;
    f64::from_bits((b ^ (((b >> 63) as u64) >> 1) as i64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_mad_of_the_trailing_values() {
        let mut w = RobustWindow::new(5, 3, 1, true);
        w.push(1.0);
        w.push(2.0);
        assert_eq!(w.stats(), None, "below the minimum history");
        w.push(9.0);
        assert_eq!(w.stats(), Some((2.0, 1.0)));
        for v in [10.0, 10.0, 10.0, 11.0, 12.0] {
            w.push(v);
        }
        // The window now holds 10, 10, 10, 11, 12.
        assert_eq!(w.stats(), Some((10.0, 0.0)));
    }

    #[test]
    fn order_keys_order_values_as_total_cmp_does_and_give_them_back() {
        let vals = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            5e-324,
            1.0,
            3.25,
            f64::MAX,
            f64::INFINITY,
        ];
        for a in vals {
            assert_eq!(from_order_key(order_key(a)).to_bits(), a.to_bits());
            for b in vals {
                assert_eq!(order_key(a).cmp(&order_key(b)), a.total_cmp(&b), "{a} {b}");
            }
        }
    }

    #[test]
    fn median_and_mad_of_negative_and_mixed_values() {
        let mut w = RobustWindow::new(7, 7, 1, true);
        for v in [-3.0, -1.0, -7.0, 2.0, -1.5, 0.5, -4.0] {
            w.push(v);
        }
        // Sorted: -7 -4 -3 -1.5 -1 0.5 2; deviations from -1.5: 5.5 2.5 1.5 0 0.5 2 3.5.
        assert_eq!(w.stats(), Some((-1.5, 2.0)));
    }

    #[test]
    fn statistics_wait_for_the_refresh() {
        // A full window is refreshed every `refresh` values only.
        let mut w = RobustWindow::new(20, 2, 4, false);
        for _ in 0..20 {
            w.push(1.0);
        }
        for _ in 0..10 {
            w.push(5.0);
        }
        assert_eq!(w.stats().unwrap().0, 1.0, "not refreshed since 28 values");
        w.push(5.0);
        w.push(5.0);
        assert_eq!(w.stats().unwrap().0, 5.0);
    }

    #[test]
    fn a_short_window_is_refreshed_every_half_its_length() {
        let mut w = RobustWindow::new(200, 2, 100, false);
        w.push(1.0);
        w.push(1.0);
        assert_eq!(w.stats().unwrap().0, 1.0);
        w.push(5.0);
        w.push(5.0);
        w.push(5.0);
        assert_eq!(w.stats().unwrap().0, 5.0, "refreshed at 4 values, not 102");
    }
}
