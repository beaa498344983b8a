//! A trailing window of values and its median and MAD, kept fresh every few values
//! (`docs/contract/health.md` "Divergence", "Cost").
//!
//! The window is a ring of fixed size; its statistics are found again (two selections over a
//! scratch copy, O(window)) once every `refresh` pushes, so a push costs O(1) amortised and
//! allocates nothing.

/// A trailing window's robust statistics.
#[derive(Debug, Clone)]
pub struct RobustWindow {
    ring: Box<[f64]>,
    scratch: Box<[f64]>,
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
            scratch: vec![0.0; window].into_boxed_slice(),
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
        if self.len >= self.min_history && (!self.ready || self.since >= self.refresh) {
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

    #[cold]
    fn recompute(&mut self) {
        let n = self.len;
        let s = &mut self.scratch[..n];
        s.copy_from_slice(&self.ring[..n]);
        let mid = n / 2;
        let (_, m, _) = s.select_nth_unstable_by(mid, f64::total_cmp);
        let median = *m;
        if self.with_mad {
            for x in s.iter_mut() {
                *x = (*x - median).abs();
            }
            let (_, d, _) = s.select_nth_unstable_by(mid, f64::total_cmp);
            self.mad = *d;
        }
        self.median = median;
        self.since = 0;
        self.ready = true;
    }
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
    fn statistics_wait_for_the_refresh() {
        let mut w = RobustWindow::new(10, 2, 4, false);
        w.push(1.0);
        w.push(1.0);
        assert_eq!(w.stats().unwrap().0, 1.0);
        w.push(5.0);
        w.push(5.0);
        w.push(5.0);
        assert_eq!(
            w.stats().unwrap().0,
            1.0,
            "not refreshed before 4 more values"
        );
        w.push(5.0);
        assert_eq!(w.stats().unwrap().0, 5.0);
    }
}
